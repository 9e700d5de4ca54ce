// The one declaration of every key of a custom topology file (format: topology/README.md, whose
// field reference is generated from this table). Order matters: it is the order of the reference
// and of "expected one of" lists. Parents come before their children.
#include "topology/yaml_loader.h"

namespace hybridsim::topology {
namespace {

using K = yaml::FieldKind;

constexpr yaml::FieldSpec kFields[] = {
    {.path = "name",
     .kind = K::Text,
     .default_text = "custom",
     .help = "The topology's name, shown in reports and traces."},
    {.path = "nodes",
     .kind = K::List,
     .required = true,
     .type_doc = "a list of devices {name, kind, node}",
     .help = "The devices, at least one. GPUs take local indices in file order within their machine."},
    {.path = "nodes[]", .kind = K::Section, .help = "One device."},
    {.path = "nodes[].name",
     .kind = K::Text,
     .required = true,
     .help = "A unique device name, e.g. GPU0; links name their ends by it."},
    {.path = "nodes[].kind",
     .kind = K::Text,
     .required = true,
     .type_doc = "one of: gpu, cpu, pcie-switch (plx), nvswitch, nic, switch (network-switch)",
     .help = "What the device is; upper or lower case."},
    {.path = "nodes[].node",
     .kind = K::Integer,
     .default_doc = "0; switches: none",
     .min = 0,
     .max = 1048575,
     .help = "The machine the device belongs to. A network switch without one joins machines."},
    {.path = "links",
     .kind = K::List,
     .default_text = "[]",
     .type_doc = "a list of links {a, b, kind, bandwidth, latency, count, duplex, label}",
     .help = "The cables between devices."},
    {.path = "links[]", .kind = K::Section, .help = "One link (or a bundle of `count` identical ones)."},
    {.path = "links[].a",
     .kind = K::Text,
     .required = true,
     .help = "One end: a device declared under nodes."},
    {.path = "links[].b",
     .kind = K::Text,
     .required = true,
     .help = "The other end: a device declared under nodes."},
    {.path = "links[].kind",
     .kind = K::Text,
     .required = true,
     .type_doc = "one of: nvlink, nvswitch, pcie, cpu (qpi, upi), infiniband (ib), ethernet, generic",
     .help = "The link's technology; upper or lower case."},
    {.path = "links[].bandwidth",
     .kind = K::Rate,
     .required = true,
     .min = 0,
     .min_exclusive = true,
     .help = "Per physical link, per direction; the link carries bandwidth × count."},
    {.path = "links[].latency",
     .kind = K::Duration,
     .default_text = "0 ns",
     .max = 1e12,
     .help = "Per hop, at most 1 s (far beyond any real link, far inside 64-bit picoseconds summed over a "
             "step)."},
    {.path = "links[].count",
     .kind = K::Integer,
     .default_text = "1",
     .min = 1,
     .max = 65536,
     .help = "Physical links bundled into this one (NVLinks between two GPUs, cables)."},
    {.path = "links[].duplex",
     .kind = K::Boolean,
     .default_text = "true",
     .help = "true: both directions; false: from a to b only."},
    {.path = "links[].label",
     .kind = K::Text,
     .default_doc = "from the kind: NVLink, PCIe, IB, ...",
     .help = "The prefix of the link's name in reports and traces, e.g. QPI."},
};

constexpr yaml::Schema kSchema{"topology", kFields};

}  // namespace

const yaml::Schema& topology_schema() { return kSchema; }

}  // namespace hybridsim::topology

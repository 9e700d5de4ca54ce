// Custom topologies from YAML: `nodes:` lists devices (name, kind, optional machine index `node`),
// `links:` lists cables (a, b, kind, bandwidth per link per direction, latency, count, duplex,
// label). Every key is declared once in topology_schema() (yaml_schema.cpp) and read with the
// located reader all YAML files share (sim/yaml/): every error reads
// "file:line:col: field.path: what; expected ...". Format: topology/README.md.
//   Topology t = parse_topology_yaml("nodes: [{name: GPU0, kind: gpu}, {name: GPU1, kind: gpu}]\n"
//                                    "links: [{a: GPU0, b: GPU1, kind: nvlink, bandwidth: 25 GB/s}]");
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "sim/yaml/schema.h"
#include "topology/topology.h"

namespace hybridsim::topology {

// Reads (sim/yaml/input_file.h) and parses a file; errors start with "path:line:col:". `notes` (null:
// not wanted) gets a line for each link machines rarely have, taken as written: an InfiniBand link
// between two GPUs of one machine, an NVLink or NVSwitch link between machines ("path:line:col:
// links[i]: ..."; users model odd machines, and a slip of a kind or a node would run silently).
Topology load_topology_yaml(const std::string& path, std::vector<std::string>* notes = nullptr);
// Parses YAML text; `source` names it in error messages (a file name, or "<string>").
Topology parse_topology_yaml(std::string_view text, std::string_view source = "<string>",
                             std::vector<std::string>* notes = nullptr);

// Every key of a topology file: the table behind the reader and topology/README.md's reference.
const yaml::Schema& topology_schema();

}  // namespace hybridsim::topology

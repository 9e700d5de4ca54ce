// Preset machines. Sources for every default are in topology/README.md; the DGX-1 wiring follows
// ../shared/reference/hardware.md and dgx1v_nvlink.csv (nvidia-smi topo -m, NCCL issue #671 XML).
#include "topology/presets.h"

#include <string>

#include "sim/error.h"

namespace hybridsim::topology::presets {
namespace {

void require_positive(sim::Bandwidth bw, std::string_view preset, std::string_view field) {
  if (bw.bytes_per_second() <= 0)
    throw InputError(std::string(preset) + ": " + std::string(field) +
                     " must be a positive bandwidth, got " + sim::format_bandwidth(bw));
}
void require_non_negative(sim::Time t, std::string_view preset, std::string_view field) {
  if (t < sim::Time::zero())
    throw InputError(std::string(preset) + ": " + std::string(field) + " must be >= 0, got " +
                     sim::format_time(t));
}
void require_range(int v, int lo, int hi, std::string_view preset, std::string_view field) {
  if (v < lo || v > hi)
    throw InputError(std::string(preset) + ": " + std::string(field) + " must be in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                     std::to_string(v));
}

std::string numbered(std::string_view prefix, std::string_view what, int i) {
  return std::string(prefix) + std::string(what) + std::to_string(i);
}

DeviceId add(TopologyBuilder& b, std::string name, DeviceKind kind, int node) {
  return b.add_device({.name = std::move(name), .kind = kind, .node = node, .local_gpu = {}});
}

std::vector<DeviceId> add_gpus(TopologyBuilder& b, int count, int node, std::string_view prefix) {
  std::vector<DeviceId> gpus;
  for (int g = 0; g < count; ++g)
    gpus.push_back(b.add_device({.name = numbered(prefix, "GPU", g),
                                 .kind = DeviceKind::Gpu,
                                 .node = node,
                                 .local_gpu = g}));
  return gpus;
}

// The PCIe side of a generic server: ceil(gpus / per_switch) switches spread over the CPUs in
// order, CPUs fully connected by `cpu_label` links, NIC k on switch k·switches/nics.
struct PcieTree {
  int gpus_per_switch;
  sim::Bandwidth pcie_bandwidth;
  sim::Time pcie_latency;
  int cpus;
  sim::Bandwidth cpu_link_bandwidth;
  int cpu_links;
  sim::Time cpu_link_latency;
  std::string_view cpu_label;
  int nics;
};

void add_pcie_tree(TopologyBuilder& b, const PcieTree& t, int node, std::string_view prefix,
                   NodePorts& ports) {
  const int gpus = static_cast<int>(ports.gpus.size());
  const int switches = (gpus + t.gpus_per_switch - 1) / t.gpus_per_switch;
  const LinkParams pcie{.kind = sim::LinkKind::PCIe,
                        .bandwidth = t.pcie_bandwidth,
                        .count = 1,
                        .latency = t.pcie_latency,
                        .duplex = true,
                        .label = {}};
  std::vector<DeviceId> cpus;
  for (int c = 0; c < t.cpus; ++c)
    cpus.push_back(add(b, numbered(prefix, "CPU", c), DeviceKind::Cpu, node));
  for (int c = 0; c < t.cpus; ++c)
    for (int d = c + 1; d < t.cpus; ++d)
      b.connect(cpus[c], cpus[d],
                {.kind = sim::LinkKind::CpuInterconnect,
                 .bandwidth = t.cpu_link_bandwidth,
                 .count = t.cpu_links,
                 .latency = t.cpu_link_latency,
                 .duplex = true,
                 .label = std::string(t.cpu_label)});
  std::vector<DeviceId> plx;
  for (int s = 0; s < switches; ++s) {
    plx.push_back(add(b, numbered(prefix, "PLX", s), DeviceKind::PcieSwitch, node));
    b.connect(plx[s], cpus[static_cast<std::size_t>(s * t.cpus / switches)], pcie);
  }
  for (int g = 0; g < gpus; ++g) b.connect(ports.gpus[g], plx[g / t.gpus_per_switch], pcie);
  for (int k = 0; k < t.nics; ++k) {
    ports.nics.push_back(add(b, numbered(prefix, "NIC", k), DeviceKind::Nic, node));
    b.connect(ports.nics.back(), plx[static_cast<std::size_t>(k * switches / t.nics)], pcie);
  }
}

}  // namespace

NodePorts add_dgx1_v100(TopologyBuilder& b, const Dgx1V100Params& p, int node,
                        std::string_view prefix) {
  constexpr std::string_view kName = "dgx1_v100";
  require_positive(p.nvlink_bandwidth, kName, "nvlink_bandwidth");
  require_positive(p.pcie_bandwidth, kName, "pcie_bandwidth");
  require_positive(p.qpi_bandwidth, kName, "qpi_bandwidth");
  require_range(p.qpi_links, 1, 8, kName, "qpi_links");
  require_range(p.nics, 0, 4, kName, "nics");
  require_non_negative(p.nvlink_latency, kName, "nvlink_latency");
  require_non_negative(p.pcie_latency, kName, "pcie_latency");
  require_non_negative(p.qpi_latency, kName, "qpi_latency");

  NodePorts ports{add_gpus(b, 8, node, prefix), {}};
  // The hybrid cube-mesh (hardware.md, dgx1v_nvlink.csv): {a, b, NVLinks between them}.
  constexpr int kNvlinks[16][3] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1},
                                   {1, 5, 2}, {2, 3, 2}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1},
                                   {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}};
  for (const auto& [a, c, count] : kNvlinks)
    b.connect(ports.gpus[a], ports.gpus[c],
              {.kind = sim::LinkKind::NVLink,
               .bandwidth = p.nvlink_bandwidth,
               .count = count,
               .latency = p.nvlink_latency,
               .duplex = true,
               .label = {}});
  // PCIe: GPU pairs (0,1) (2,3) (4,5) (6,7) behind PLX 0..3; PLX 0,1 on CPU0, 2,3 on CPU1; with 4
  // NICs, NIC k on PLX k (fewer NICs spread: NIC k on PLX 4k/nics).
  add_pcie_tree(b,
                {.gpus_per_switch = 2,
                 .pcie_bandwidth = p.pcie_bandwidth,
                 .pcie_latency = p.pcie_latency,
                 .cpus = 2,
                 .cpu_link_bandwidth = p.qpi_bandwidth,
                 .cpu_links = p.qpi_links,
                 .cpu_link_latency = p.qpi_latency,
                 .cpu_label = "QPI",
                 .nics = p.nics},
                node, prefix, ports);
  return ports;
}

NodePorts add_nvswitch_node(TopologyBuilder& b, const NvswitchNodeParams& p, int node,
                            std::string_view prefix) {
  constexpr std::string_view kName = "nvswitch_node";
  require_range(p.gpus, 1, 4096, kName, "gpus");
  require_positive(p.nvlink_bandwidth, kName, "nvlink_bandwidth");
  require_range(p.nvlinks_per_gpu, 1, 64, kName, "nvlinks_per_gpu");
  require_range(p.gpus_per_pcie_switch, 1, 64, kName, "gpus_per_pcie_switch");
  require_positive(p.pcie_bandwidth, kName, "pcie_bandwidth");
  require_range(p.cpus, 1, 8, kName, "cpus");
  require_positive(p.cpu_link_bandwidth, kName, "cpu_link_bandwidth");
  require_range(p.cpu_links, 1, 8, kName, "cpu_links");
  require_range(p.nics, 0, 256, kName, "nics");
  require_non_negative(p.nvswitch_latency, kName, "nvswitch_latency");
  require_non_negative(p.pcie_latency, kName, "pcie_latency");
  require_non_negative(p.cpu_link_latency, kName, "cpu_link_latency");

  NodePorts ports{add_gpus(b, p.gpus, node, prefix), {}};
  const DeviceId sw = add(b, std::string(prefix) + "NVSwitch", DeviceKind::NvSwitch, node);
  for (const DeviceId g : ports.gpus)
    b.connect(g, sw,
              {.kind = sim::LinkKind::NVSwitch,
               .bandwidth = p.nvlink_bandwidth,
               .count = p.nvlinks_per_gpu,
               .latency = p.nvswitch_latency,
               .duplex = true,
               .label = {}});
  add_pcie_tree(b,
                {.gpus_per_switch = p.gpus_per_pcie_switch,
                 .pcie_bandwidth = p.pcie_bandwidth,
                 .pcie_latency = p.pcie_latency,
                 .cpus = p.cpus,
                 .cpu_link_bandwidth = p.cpu_link_bandwidth,
                 .cpu_links = p.cpu_links,
                 .cpu_link_latency = p.cpu_link_latency,
                 .cpu_label = "UPI",
                 .nics = p.nics},
                node, prefix, ports);
  return ports;
}

NodePorts add_pcie_server(TopologyBuilder& b, const PcieServerParams& p, int node,
                          std::string_view prefix) {
  constexpr std::string_view kName = "pcie_server";
  require_range(p.gpus, 1, 4096, kName, "gpus");
  require_range(p.gpus_per_pcie_switch, 1, 64, kName, "gpus_per_pcie_switch");
  require_positive(p.pcie_bandwidth, kName, "pcie_bandwidth");
  require_range(p.cpus, 1, 8, kName, "cpus");
  require_positive(p.cpu_link_bandwidth, kName, "cpu_link_bandwidth");
  require_range(p.cpu_links, 1, 8, kName, "cpu_links");
  require_range(p.nics, 0, 256, kName, "nics");
  require_non_negative(p.pcie_latency, kName, "pcie_latency");
  require_non_negative(p.cpu_link_latency, kName, "cpu_link_latency");

  NodePorts ports{add_gpus(b, p.gpus, node, prefix), {}};
  add_pcie_tree(b,
                {.gpus_per_switch = p.gpus_per_pcie_switch,
                 .pcie_bandwidth = p.pcie_bandwidth,
                 .pcie_latency = p.pcie_latency,
                 .cpus = p.cpus,
                 .cpu_link_bandwidth = p.cpu_link_bandwidth,
                 .cpu_links = p.cpu_links,
                 .cpu_link_latency = p.cpu_link_latency,
                 .cpu_label = "QPI",
                 .nics = p.nics},
                node, prefix, ports);
  return ports;
}

NodePorts add_node(TopologyBuilder& b, const NodeParams& p, int node, std::string_view prefix) {
  return std::visit(
      [&](const auto& params) -> NodePorts {
        using T = std::decay_t<decltype(params)>;
        if constexpr (std::is_same_v<T, Dgx1V100Params>)
          return add_dgx1_v100(b, params, node, prefix);
        else if constexpr (std::is_same_v<T, NvswitchNodeParams>)
          return add_nvswitch_node(b, params, node, prefix);
        else
          return add_pcie_server(b, params, node, prefix);
      },
      p);
}

NvswitchNodeParams dgx_a100_params() {
  NvswitchNodeParams p;
  p.gpus = 8;
  p.nvlinks_per_gpu = 12;                                  // NVLink3: 12 × 25 = 300 GB/s
  p.pcie_bandwidth = sim::Bandwidth::gb_per_second(24);   // Gen4 x16: twice Gen3's 12
  // One 200 Gb/s HDR NIC per GPU, on the GPU's own PCIe switch, so that each GPU's nearest NIC is
  // its own (with two GPUs and two NICs on a switch both GPUs would pick the lower NIC).
  p.gpus_per_pcie_switch = 1;
  p.nics = 8;
  return p;
}

NvswitchNodeParams dgx_h100_params() {
  NvswitchNodeParams p = dgx_a100_params();
  p.nvlinks_per_gpu = 18;                                  // NVLink4: 18 × 25 = 450 GB/s
  p.pcie_bandwidth = sim::Bandwidth::gb_per_second(48);   // Gen5 x16: twice Gen4
  return p;                                                // 8 NICs, 400 Gb/s NDR each
}

Topology dgx1_v100(const Dgx1V100Params& params) {
  TopologyBuilder b("dgx1-v100");
  add_dgx1_v100(b, params, 0, "");
  return std::move(b).build();
}

Topology nvswitch_node(const NvswitchNodeParams& params) {
  TopologyBuilder b("nvswitch-" + std::to_string(params.gpus));
  add_nvswitch_node(b, params, 0, "");
  return std::move(b).build();
}

Topology pcie_server(const PcieServerParams& params) {
  TopologyBuilder b("pcie-server-" + std::to_string(params.gpus));
  add_pcie_server(b, params, 0, "");
  return std::move(b).build();
}

Topology ideal_ring(const IdealRingParams& params) {
  require_range(params.gpus, 2, 1 << 20, "ideal_ring", "gpus");
  require_positive(params.bandwidth, "ideal_ring", "bandwidth");
  require_non_negative(params.latency, "ideal_ring", "latency");
  TopologyBuilder b("ideal-ring-" + std::to_string(params.gpus));
  const auto gpus = add_gpus(b, params.gpus, 0, "");
  const LinkParams link{.kind = sim::LinkKind::Generic,
                        .bandwidth = params.bandwidth,
                        .count = 1,
                        .latency = params.latency,
                        .duplex = true,
                        .label = {}};
  // Two GPUs: one duplex link (i+1 mod 2 would add the same pair twice).
  const int pairs = params.gpus == 2 ? 1 : params.gpus;
  for (int g = 0; g < pairs; ++g) b.connect(gpus[g], gpus[(g + 1) % params.gpus], link);
  return std::move(b).build();
}

Topology fully_connected(const FullyConnectedParams& params) {
  require_range(params.gpus, 1, 4096, "fully_connected", "gpus");
  require_positive(params.bandwidth, "fully_connected", "bandwidth");
  require_non_negative(params.latency, "fully_connected", "latency");
  TopologyBuilder b("fully-connected-" + std::to_string(params.gpus));
  const auto gpus = add_gpus(b, params.gpus, 0, "");
  const LinkParams link{.kind = sim::LinkKind::Generic,
                        .bandwidth = params.bandwidth,
                        .count = 1,
                        .latency = params.latency,
                        .duplex = true,
                        .label = {}};
  for (int a = 0; a < params.gpus; ++a)
    for (int c = a + 1; c < params.gpus; ++c) b.connect(gpus[a], gpus[c], link);
  return std::move(b).build();
}

}  // namespace hybridsim::topology::presets

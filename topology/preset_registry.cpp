// The preset registry. Each entry's figures and their sources are in topology/README.md
// ("Presets and their defaults"); the parameter structs' defaults are in presets.h and cluster.h.
#include "topology/preset_registry.h"

#include <algorithm>
#include <array>
#include <utility>
#include <variant>
#include <vector>

#include "sim/error.h"
#include "sim/text.h"
#include "topology/builder.h"

namespace hybridsim::topology {
namespace {

using sim::LinkKind;

template <class T>
void apply(const LinkOverride& o, T& bandwidth, sim::Time& latency) {
  if (o.bandwidth) bandwidth = *o.bandwidth;
  if (o.latency) latency = *o.latency;
}

// The PCIe and CPU-socket overrides every server-like machine takes.
template <class Params>
void apply_pcie_cpu(const ClusterSpec& s, Params& p) {
  apply(s.links[LinkKind::PCIe], p.pcie_bandwidth, p.pcie_latency);
  apply(s.links[LinkKind::CpuInterconnect], p.cpu_link_bandwidth, p.cpu_link_latency);
}

presets::NodeParams dgx1_v100(const ClusterSpec& s) {
  presets::Dgx1V100Params p;
  apply(s.links[LinkKind::NVLink], p.nvlink_bandwidth, p.nvlink_latency);
  apply(s.links[LinkKind::PCIe], p.pcie_bandwidth, p.pcie_latency);
  apply(s.links[LinkKind::CpuInterconnect], p.qpi_bandwidth, p.qpi_latency);
  return p;
}

// An NVSwitch machine: `p` with the spec's GPU count and link overrides applied.
presets::NodeParams nvswitch_machine(const ClusterSpec& s, presets::NvswitchNodeParams p) {
  if (s.gpus_per_node) p.gpus = *s.gpus_per_node;
  apply(s.links[LinkKind::NVSwitch], p.nvlink_bandwidth, p.nvswitch_latency);
  apply_pcie_cpu(s, p);
  return p;
}

presets::NodeParams nvswitch_node(const ClusterSpec& s) { return nvswitch_machine(s, {}); }
presets::NodeParams dgx_a100(const ClusterSpec& s) { return nvswitch_machine(s, presets::dgx_a100_params()); }
presets::NodeParams dgx_h100(const ClusterSpec& s) { return nvswitch_machine(s, presets::dgx_h100_params()); }

presets::NodeParams pcie_server(const ClusterSpec& s) {
  presets::PcieServerParams p;
  if (s.gpus_per_node) p.gpus = *s.gpus_per_node;
  apply_pcie_cpu(s, p);
  return p;
}

Topology ideal_ring(const ClusterSpec& s) {
  presets::IdealRingParams p;
  if (s.gpus_per_node) p.gpus = *s.gpus_per_node;
  apply(s.links[LinkKind::Generic], p.bandwidth, p.latency);
  return presets::ideal_ring(p);
}

Topology fully_connected(const ClusterSpec& s) {
  presets::FullyConnectedParams p;
  if (s.gpus_per_node) p.gpus = *s.gpus_per_node;
  apply(s.links[LinkKind::Generic], p.bandwidth, p.latency);
  return presets::fully_connected(p);
}

constexpr LinkKind kDgx1Links[] = {LinkKind::NVLink, LinkKind::PCIe, LinkKind::CpuInterconnect,
                                   LinkKind::InfiniBand};
constexpr LinkKind kNvswitchLinks[] = {LinkKind::NVSwitch, LinkKind::PCIe,
                                       LinkKind::CpuInterconnect, LinkKind::InfiniBand};
constexpr LinkKind kPcieLinks[] = {LinkKind::PCIe, LinkKind::CpuInterconnect, LinkKind::InfiniBand};
constexpr LinkKind kGenericLinks[] = {LinkKind::Generic};

const PresetInfo kPresets[] = {
    {.name = "dgx1-v100",
     .alias = {},
     .description = "NVIDIA DGX-1: 8 V100-SXM2 on an NVLink 2.0 hybrid cube-mesh, 4 PCIe Gen3 "
                    "switches, 2 Xeon sockets (QPI), 4 EDR InfiniBand NICs",
     .gpu = "V100-SXM2-16GB",
     .link_kinds = kDgx1Links,
     .gpus = {.default_count = 8, .min = 8, .max = 8},
     .machine = dgx1_v100},
    {.name = "dgx2",
     .alias = "nvswitch",
     .description = "DGX-2-like: V100s (16 by default) all joined through NVSwitch at 6 NVLinks "
                    "per GPU, PCIe Gen3 switches, 2 Xeon sockets (UPI), 8 EDR NICs",
     .gpu = "V100-SXM3-32GB",
     .link_kinds = kNvswitchLinks,
     .gpus = {.default_count = 16, .min = 1, .max = 4096},
     .machine = nvswitch_node},
    {.name = "dgx-a100",
     .alias = {},
     .description = "NVIDIA DGX A100: 8 A100-SXM4-80GB on NVSwitch at 12 NVLink3 per GPU (300 GB/s "
                    "per direction), PCIe Gen4 switches, 2 CPUs, 8 HDR InfiniBand NICs (one per GPU)",
     .gpu = "A100-SXM4-80GB",
     .link_kinds = kNvswitchLinks,
     .gpus = {.default_count = 8, .min = 8, .max = 8},
     .ib_bandwidth = presets::kHdrBandwidth,
     .machine = dgx_a100},
    {.name = "dgx-h100",
     .alias = {},
     .description = "NVIDIA DGX H100: 8 H100-SXM5-80GB on NVSwitch at 18 NVLink4 per GPU (450 GB/s "
                    "per direction), PCIe Gen5 switches, 2 CPUs, 8 NDR InfiniBand NICs (one per GPU)",
     .gpu = "H100-SXM5-80GB",
     .link_kinds = kNvswitchLinks,
     .gpus = {.default_count = 8, .min = 8, .max = 8},
     .ib_bandwidth = presets::kNdrBandwidth,
     .machine = dgx_h100},
    {.name = "hgx-h200",
     .alias = {},
     .description = "NVIDIA HGX H200: 8 H200-SXM-141GB on the DGX H100's NVSwitch fabric (18 NVLink4 "
                    "per GPU), PCIe Gen5 switches, 2 CPUs, 8 NDR InfiniBand NICs (one per GPU)",
     .gpu = "H200-SXM-141GB",
     .link_kinds = kNvswitchLinks,
     .gpus = {.default_count = 8, .min = 8, .max = 8},
     .ib_bandwidth = presets::kNdrBandwidth,
     .machine = dgx_h100},
    {.name = "pcie-server",
     .alias = {},
     .description = "a server without NVLink: GPUs (8 by default) in pairs behind PCIe Gen3 "
                    "switches under 2 CPUs (QPI), 2 EDR NICs",
     .gpu = "V100-PCIE-16GB",
     .link_kinds = kPcieLinks,
     .gpus = {.default_count = 8, .min = 1, .max = 4096},
     .machine = pcie_server},
    {.name = "ideal-ring",
     .alias = {},
     .description = "validation: GPU i linked to GPU i+1 mod N (25 GB/s, 1 us), nothing else",
     .gpu = "V100-SXM2-16GB",
     .link_kinds = kGenericLinks,
     .gpus = {.default_count = 8, .min = 2, .max = 65536},
     .forms_clusters = false,
     .single = ideal_ring},
    {.name = "fully-connected",
     .alias = {},
     .description = "validation: every pair of GPUs linked directly (25 GB/s, 1 us)",
     .gpu = "V100-SXM2-16GB",
     .link_kinds = kGenericLinks,
     .gpus = {.default_count = 8, .min = 1, .max = 512},
     .forms_clusters = false,
     .single = fully_connected},
};

// Names and aliases in registry order, each alias right after its preset's name.
const std::vector<std::string_view>& all_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const PresetInfo& p : kPresets) {
      out.push_back(p.name);
      if (!p.alias.empty()) out.push_back(p.alias);
    }
    return out;
  }();
  return names;
}

std::string link_kind_list(const PresetInfo& p) {
  std::string out;
  for (const LinkKind k : p.link_kinds) out += (out.empty() ? "" : ", ") + std::string(sim::link_kind_key(k));
  return out;
}

}  // namespace

bool PresetInfo::has_link_kind(sim::LinkKind kind) const {
  return std::find(link_kinds.begin(), link_kinds.end(), kind) != link_kinds.end();
}

std::span<const PresetInfo> presets_list() { return kPresets; }

std::span<const std::string_view> preset_names() { return all_names(); }

std::string preset_name_list() {
  std::string out;
  for (const auto n : all_names()) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

std::string cluster_preset_name_list() {
  std::vector<std::string_view> names;
  for (const PresetInfo& p : kPresets) {
    if (!p.forms_clusters) continue;
    names.push_back(p.name);
    if (!p.alias.empty()) names.push_back(p.alias);
  }
  return sim::choice_list(names);
}

const PresetInfo* find_preset(std::string_view name) {
  for (const PresetInfo& p : kPresets)
    if (p.name == name || (!p.alias.empty() && p.alias == name)) return &p;
  return nullptr;
}

const PresetInfo& preset_by_name(std::string_view name) {
  if (const PresetInfo* p = find_preset(name)) return *p;
  throw InputError("unknown topology preset \"" + std::string(name) + "\": expected one of " +
                   preset_name_list() + " (or a topology YAML file)");
}

std::optional<ClusterSpecProblem> find_cluster_spec_problem(const ClusterSpec& spec) {
  const PresetInfo& p = preset_by_name(spec.preset);
  if (spec.nodes < 1 || spec.nodes > kMaxNodes)
    return ClusterSpecProblem{"nodes", "got " + std::to_string(spec.nodes) + " machines",
                              "a whole number from 1 to " + std::to_string(kMaxNodes)};
  if (!p.forms_clusters && spec.nodes != 1)
    return ClusterSpecProblem{"nodes",
                              "preset " + std::string(p.name) + " is a single validation machine, got " +
                                  std::to_string(spec.nodes) + " nodes",
                              "1"};
  if (spec.gpus_per_node) {
    const int g = *spec.gpus_per_node;
    if (p.gpus.fixed() && g != p.gpus.min)
      return ClusterSpecProblem{"gpus_per_node",
                                "preset " + std::string(p.name) + " has exactly " +
                                    std::to_string(p.gpus.min) + " GPUs, got " + std::to_string(g),
                                "auto or " + std::to_string(p.gpus.min)};
    if (g < p.gpus.min || g > p.gpus.max)
      return ClusterSpecProblem{"gpus_per_node",
                                "preset " + std::string(p.name) + " takes " + std::to_string(p.gpus.min) +
                                    " to " + std::to_string(p.gpus.max) + " GPUs per machine, got " +
                                    std::to_string(g),
                                "auto or a whole number from " + std::to_string(p.gpus.min) + " to " +
                                    std::to_string(p.gpus.max)};
  }
  for (int k = 0; k < sim::kLinkKindCount; ++k) {
    const auto kind = static_cast<LinkKind>(k);
    if (!spec.links[kind].empty() && !p.has_link_kind(kind))
      return ClusterSpecProblem{"links." + std::string(sim::link_kind_key(kind)),
                                "preset " + std::string(p.name) + " has no " +
                                    std::string(sim::link_kind_key(kind)) + " links",
                                "overrides of its link kinds: " + link_kind_list(p)};
  }
  return std::nullopt;
}

void check_cluster_spec(const ClusterSpec& spec) {
  if (const auto problem = find_cluster_spec_problem(spec))
    throw InputError(problem->field + ": " + problem->what + "; expected " + problem->expected);
}

Topology build_cluster(const ClusterSpec& spec, sim::WorkProgress* progress) {
  check_cluster_spec(spec);
  const PresetInfo& p = preset_by_name(spec.preset);
  if (p.single) return p.single(spec);
  const presets::NodeParams node = p.machine(spec);
  if (spec.nodes == 1) {
    TopologyBuilder b{std::string(p.name)};
    presets::add_node(b, node, 0, "");
    return std::move(b).build();
  }
  const LinkOverride& ib = spec.links[LinkKind::InfiniBand];
  return presets::cluster({.node = node,
                           .machine_name = std::string(p.name),
                           .nodes = spec.nodes,
                           .fabric = spec.fabric,
                           .oversubscription = spec.oversubscription,
                           .ib_bandwidth = ib.bandwidth.value_or(p.ib_bandwidth),
                           .ib_latency = ib.latency.value_or(presets::kDefaultIbLatency),
                           .leaf_radix = spec.leaf_radix,
                           .spines = spec.spines},
                          progress);
}

int fabric_leaves(const ClusterSpec& spec) {
  const PresetInfo& p = preset_by_name(spec.preset);
  if (p.single || spec.nodes <= 1) return 0;
  const int nics = std::visit([](const auto& machine) { return machine.nics; }, p.machine(spec));
  return presets::leaf_count(spec.fabric, spec.nodes, nics, spec.leaf_radix);
}

sim::Bandwidth ib_bandwidth_of(const ClusterSpec& spec) {
  return spec.links[LinkKind::InfiniBand].bandwidth.value_or(preset_by_name(spec.preset).ib_bandwidth);
}

sim::Bandwidth ib_share_per_gpu(const ClusterSpec& spec) {
  const sim::Bandwidth port = ib_bandwidth_of(spec);
  const PresetInfo& p = preset_by_name(spec.preset);
  if (p.single) return port;
  const auto [nics, pcie] = std::visit(
      [](const auto& machine) {
        return std::pair{machine.nics, machine.pcie_bandwidth};
      },
      p.machine(spec));
  const std::int64_t nic = std::min(port.bytes_per_second(), pcie.bytes_per_second());
  return sim::Bandwidth::bytes_per_second(nic * nics / gpus_per_machine(spec));
}

int gpus_per_machine(const ClusterSpec& spec) {
  return spec.gpus_per_node.value_or(preset_by_name(spec.preset).gpus.default_count);
}

ClusterSpec cluster_for_gpus(ClusterSpec spec, int gpus) {
  if (gpus < 1) throw InputError("a cluster needs at least 1 GPU, got " + std::to_string(gpus));
  const int per_machine = gpus_per_machine(spec);
  spec.nodes = (gpus + per_machine - 1) / per_machine;
  return spec;
}

}  // namespace hybridsim::topology

// The registry of machine presets: every built-in machine once, with its name, a one-line
// description, the GPU it carries, the link kinds a user may override, its GPU-count limits and
// how to build it. Scenarios, the study, the planner and the CLI look presets up here and build
// clusters with build_cluster(); adding a machine means adding one entry in preset_registry.cpp.
//   const PresetInfo& p = preset_by_name("dgx1-v100");   // p.gpus.fixed() == true, 8 GPUs
//   Topology t = build_cluster({.preset = "dgx1-v100", .nodes = 4});
#pragma once
#include <optional>
#include "sim/limits.h"
#include <span>
#include <string>
#include <string_view>

#include "sim/link.h"
#include "sim/work_progress.h"
#include "topology/cluster_spec.h"
#include "topology/presets.h"
#include "topology/topology.h"

namespace hybridsim::topology {

// The most machines a cluster may have (8,192 DGX H100 are 65,536 GPUs; sim/limits.h).
inline constexpr int kMaxNodes = sim::limits::kMachines.value;

struct GpuCountLimits {
  int default_count = 8;
  int min = 1;
  int max = 4096;
  bool fixed() const { return min == max; }
};

struct PresetInfo {
  std::string_view name;         // "dgx2"
  std::string_view alias;        // another accepted name ("nvswitch"), or empty
  std::string_view description;  // one line, for listings and --help
  std::string_view gpu;          // the GPU model the machine carries ("V100-SXM2-16GB")
  std::span<const sim::LinkKind> link_kinds;  // the kinds cluster.links may override
  GpuCountLimits gpus;                        // GPUs per machine
  bool forms_clusters = true;  // false: a single validation machine (nodes must be 1)
  sim::Bandwidth ib_bandwidth = presets::kEdrBandwidth;  // per NIC port, when nodes > 1
  // Machine presets: the parameters of one machine with the spec's GPU count and link overrides
  // applied. Validation topologies build themselves whole instead.
  presets::NodeParams (*machine)(const ClusterSpec& spec) = nullptr;
  Topology (*single)(const ClusterSpec& spec) = nullptr;
  bool has_link_kind(sim::LinkKind kind) const;
};

// Every preset, in the order they are documented.
std::span<const PresetInfo> presets_list();
// The names alone, in the same order ("dgx1-v100", "dgx2", ...), and as one "a, b or c" text.
std::span<const std::string_view> preset_names();
std::string preset_name_list();
// The names of the presets that form clusters, "dgx1-v100, dgx2, nvswitch or pcie-server".
std::string cluster_preset_name_list();
// Finds a preset by name or alias.
const PresetInfo* find_preset(std::string_view name);
// Throws InputError "unknown topology preset "x": expected one of ..." for an unknown name.
const PresetInfo& preset_by_name(std::string_view name);

// What is wrong with a spec, for callers that locate the field themselves (the scenario loader):
// the field's path below the cluster ("gpus_per_node", "links.nvswitch"), what is wrong, and what
// was expected.
struct ClusterSpecProblem {
  std::string field;
  std::string what;
  std::string expected;
};
// Throws InputError for an unknown preset; nullopt when the spec is valid.
std::optional<ClusterSpecProblem> find_cluster_spec_problem(const ClusterSpec& spec);
// Checks the spec against its preset (name, nodes for validation machines, GPU count, link kinds
// it has) and throws InputError naming the field ("preset dgx1-v100 has exactly 8 GPUs ...").
void check_cluster_spec(const ClusterSpec& spec);
// Builds the cluster: one machine when nodes == 1, else `nodes` machines on the fabric.
// `progress` (null: none) is told as a cluster of machines is built (presets::cluster).
Topology build_cluster(const ClusterSpec& spec, sim::WorkProgress* progress = nullptr);

// Leaf switches of the spec's fabric (presets::leaf_count): 0 for one machine or a validation
// machine. With 1, every NIC plugs into one leaf, so cluster.spines and oversubscription change nothing.
int fabric_leaves(const ClusterSpec& spec);

// The InfiniBand bandwidth per NIC port of the spec: its override, else the preset's.
sim::Bandwidth ib_bandwidth_of(const ClusterSpec& spec);
// What InfiniBand carries for one GPU of the spec's machine when all of them send at once: its NICs'
// rate, each the lesser of its port and the PCIe link it sits on, shared by the machine's GPUs (DGX
// H100: 8 NICs of 50 GB/s on 48 GB/s Gen5 links, 48 GB/s a GPU; DGX-1: 4 EDR NICs on 12 GB/s Gen3
// links for 8 GPUs, 6 GB/s a GPU). A validation machine (one, no NICs): its port's rate.
sim::Bandwidth ib_share_per_gpu(const ClusterSpec& spec);
// GPUs in one machine of the spec (its gpus_per_node, else the preset's).
int gpus_per_machine(const ClusterSpec& spec);
// The smallest cluster of the spec's machines holding `gpus` GPUs: the spec with `nodes` set to
// ceil(gpus / gpus_per_machine).
ClusterSpec cluster_for_gpus(ClusterSpec spec, int gpus);

}  // namespace hybridsim::topology

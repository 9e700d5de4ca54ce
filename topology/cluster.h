// A cluster: N identical machines (a node preset) joined by an InfiniBand fabric, either a
// two-level fat tree (leaves and spines) or rail-optimized (NIC k of every machine on rail k's
// leaves). Bandwidths in B/s per direction; oversubscription = leaf downlink / leaf uplink
// bandwidth.
//   Topology t = presets::cluster({.node = presets::Dgx1V100Params{}, .nodes = 16,
//                                  .fabric = presets::Fabric::FatTree, .oversubscription = 2.0});
//   t.device_by_name("n3.GPU5");   // devices are prefixed by machine; leaves "leaf0", spines
//   "spine0"
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/work_progress.h"
#include "topology/presets.h"

namespace hybridsim::topology::presets {

enum class Fabric : std::uint8_t {
  FatTree,        // NICs fill leaves in order (machine-major), every leaf linked to every spine
  RailOptimized,  // NIC k of every machine goes to a leaf of rail k; spines join the rails
};
std::string_view fabric_name(Fabric fabric);  // "fat-tree", "rail-optimized"
// Accepts fat-tree (fat_tree, fattree) and rail-optimized (rail_optimized, rail); InputError
// otherwise.
Fabric parse_fabric(std::string_view text);

// Defaults of the fabric, used wherever a cluster is described (ClusterParams, ClusterSpec).
inline constexpr auto kEdrBandwidth = sim::Bandwidth::bytes_per_second(12'500'000'000);  // 100 Gb/s
inline constexpr auto kHdrBandwidth = sim::Bandwidth::bytes_per_second(25'000'000'000);  // 200 Gb/s
inline constexpr auto kNdrBandwidth = sim::Bandwidth::bytes_per_second(50'000'000'000);  // 400 Gb/s
inline constexpr auto kDefaultIbLatency = sim::Time::ns(500);  // per NIC↔leaf or leaf↔spine hop
inline constexpr int kDefaultLeafRadix = 16;                    // NIC ports per leaf switch

struct ClusterParams {
  NodeParams node = Dgx1V100Params{};
  // The machine's name in the cluster's ("4 × dgx1-v100 (fat-tree)"); empty: its parameter type's
  // ("dgx1-v100", "nvswitch", "pcie-server").
  std::string machine_name = {};
  int nodes = 2;
  Fabric fabric = Fabric::FatTree;
  // Leaf downlink bandwidth / leaf uplink bandwidth; 1.0 is non-blocking. Must be >= 1.
  double oversubscription = 1.0;
  sim::Bandwidth ib_bandwidth = kEdrBandwidth;  // per NIC port and cable, per direction
  sim::Time ib_latency = kDefaultIbLatency;
  int leaf_radix = kDefaultLeafRadix;
  // Spine switches; none: round(leaf_radix / oversubscription), at least 1. Unused with one leaf.
  std::optional<int> spines = {};
};

// Leaf switches of a fabric of `nodes` machines with `nics` NICs each: fat-tree, the NICs in
// order `leaf_radix` a leaf; rail-optimized, ceil(nodes / leaf_radix) leaves a rail. With one leaf
// no traffic crosses a spine, so spines and oversubscription change nothing.
int leaf_count(Fabric fabric, int nodes, int nics, int leaf_radix);

// Each leaf's uplink capacity is leaf_radix × ib_bandwidth / oversubscription, split evenly over
// its links to the spines (one link per spine, `count` = cables when that is a whole number).
// `progress` (null: none) is told machine by machine, then as the topology is sealed (seconds at
// 8,192 machines).
Topology cluster(const ClusterParams& params, sim::WorkProgress* progress = nullptr);

}  // namespace hybridsim::topology::presets

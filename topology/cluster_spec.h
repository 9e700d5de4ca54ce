// A cluster as users name it: a machine preset from the registry (topology/preset_registry.h), how
// many machines, the fabric between them and overrides of the preset's link figures. Scenarios,
// the study, the planner and the CLI all describe clusters with it; build_cluster() turns it into a
// Topology.
//   ClusterSpec spec{.preset = "dgx1-v100", .nodes = 4};
//   spec.links[sim::LinkKind::InfiniBand].bandwidth = sim::parse_bandwidth("200 Gb/s");
#pragma once
#include <array>
#include <optional>
#include <string>

#include "sim/link.h"
#include "sim/time.h"
#include "sim/units.h"
#include "topology/cluster.h"

namespace hybridsim::topology {

// Overrides of one link kind's preset figures; nullopt keeps the preset's.
struct LinkOverride {
  std::optional<sim::Bandwidth> bandwidth = {};  // per physical link, per direction
  std::optional<sim::Time> latency = {};         // per hop
  bool empty() const { return !bandwidth && !latency; }
  bool operator==(const LinkOverride&) const = default;
};

// One override per sim::LinkKind.
struct LinkOverrides {
  std::array<LinkOverride, sim::kLinkKindCount> by_kind{};
  LinkOverride& operator[](sim::LinkKind kind) { return by_kind[static_cast<std::size_t>(kind)]; }
  const LinkOverride& operator[](sim::LinkKind kind) const {
    return by_kind[static_cast<std::size_t>(kind)];
  }
  bool operator==(const LinkOverrides&) const = default;
};

struct ClusterSpec {
  std::string preset = "dgx1-v100";  // a preset_names() entry (or one of their aliases)
  int nodes = 1;                     // > 1: machines joined by InfiniBand
  std::optional<int> gpus_per_node = {};  // nullopt: the preset's
  presets::Fabric fabric = presets::Fabric::FatTree;
  double oversubscription = 1.0;  // leaf downlink / uplink bandwidth, >= 1
  int leaf_radix = presets::kDefaultLeafRadix;
  std::optional<int> spines = {};  // nullopt: round(leaf_radix / oversubscription), at least 1
  LinkOverrides links = {};   // InfiniBand applies when nodes > 1
  bool operator==(const ClusterSpec&) const = default;
};

}  // namespace hybridsim::topology

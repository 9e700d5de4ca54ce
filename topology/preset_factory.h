// Presets by name, for the CLI and scenario files: "dgx1-v100", "dgx2", "nvswitch", "pcie-server",
// "ideal-ring", "fully-connected"; with nodes > 1 the machine preset becomes a cluster.
//   Topology t = make_preset("dgx1-v100", {.nodes = 4, .fabric = presets::Fabric::RailOptimized});
#pragma once
#include <optional>
#include <span>
#include <string_view>

#include "topology/cluster.h"
#include "topology/topology.h"

namespace hybridsim::topology {

struct PresetOptions {
  int nodes = 1;                 // > 1: a cluster of this many machines
  std::optional<int> gpus = {};  // GPUs per machine, where the preset allows it (not dgx1-v100)
  presets::Fabric fabric = presets::Fabric::FatTree;
  double oversubscription = 1.0;
};

// The valid preset names, in the order they are documented.
std::span<const std::string_view> preset_names();
// Throws InputError listing preset_names() for an unknown name, and for options the preset cannot
// take (gpus on dgx1-v100, nodes > 1 on the validation topologies).
Topology make_preset(std::string_view name, const PresetOptions& options = {});

}  // namespace hybridsim::topology

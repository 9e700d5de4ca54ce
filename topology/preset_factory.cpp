#include "topology/preset_factory.h"

#include <string>

#include "sim/error.h"

namespace hybridsim::topology {
namespace {

constexpr std::string_view kNames[] = {"dgx1-v100",   "dgx2",       "nvswitch",
                                       "pcie-server", "ideal-ring", "fully-connected"};

std::string name_list() {
  std::string out;
  for (const auto n : kNames) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

}  // namespace

std::span<const std::string_view> preset_names() { return kNames; }

Topology make_preset(std::string_view name, const PresetOptions& options) {
  if (options.nodes < 1)
    throw InputError("preset \"" + std::string(name) + "\": nodes must be >= 1, got " +
                     std::to_string(options.nodes));
  std::optional<presets::NodeParams> node;
  if (name == "dgx1-v100") {
    if (options.gpus && *options.gpus != 8)
      throw InputError(
          "preset dgx1-v100 has exactly 8 GPUs (got gpus = " + std::to_string(*options.gpus) + ")");
    node = presets::Dgx1V100Params{};
  } else if (name == "dgx2" || name == "nvswitch") {
    presets::NvswitchNodeParams p;
    if (options.gpus) p.gpus = *options.gpus;
    node = p;
  } else if (name == "pcie-server") {
    presets::PcieServerParams p;
    if (options.gpus) p.gpus = *options.gpus;
    node = p;
  } else if (name == "ideal-ring" || name == "fully-connected") {
    if (options.nodes != 1)
      throw InputError("preset " + std::string(name) +
                       " is a single validation machine: nodes must be 1");
    const int gpus = options.gpus.value_or(8);
    if (name == "ideal-ring") return presets::ideal_ring({.gpus = gpus});
    return presets::fully_connected({.gpus = gpus});
  } else {
    throw InputError("unknown topology preset \"" + std::string(name) + "\": expected one of " +
                     name_list() + " (or a topology YAML file)");
  }
  if (options.nodes == 1) {
    TopologyBuilder b{std::string(name)};
    presets::add_node(b, *node, 0, "");
    return std::move(b).build();
  }
  return presets::cluster({.node = *node,
                           .nodes = options.nodes,
                           .fabric = options.fabric,
                           .oversubscription = options.oversubscription});
}

}  // namespace hybridsim::topology

#include "analysis/api/fabric_options.h"

#include <cmath>
#include <sstream>

#include "analysis/platform/platform.h"
#include "sim/error.h"
#include "topology/cluster.h"
#include "topology/preset_registry.h"

namespace hybridsim::api {

void apply_fabric_options(topology::ClusterSpec& spec, const FabricOptions& given,
                          const analysis::OptionSpelling& o) {
  // One machine has no fabric between machines: these shape only a cluster of a preset's machines. A
  // topology file's links are its fabric: "needs --nodes N > 1" sent its user to an option a file
  // refuses ("--nodes and --gpus-per-node apply to presets, not to topology files").
  for (const auto& [option, is_given] : {std::pair{"fabric", given.fabric.has_value()},
                                         std::pair{"oversubscription", given.oversubscription.has_value()}}) {
    if (is_given && analysis::names_topology_file(given.platform))
      throw InputError(o.name(option) + " shapes the fabric between a preset's machines (" +
                       o.takes("nodes", "N") + " > 1); the topology file " + given.platform +
                       " has its own: its links and switches");
    if (is_given && given.nodes == 1)
      throw InputError(o.name(option) + " needs " + o.takes("nodes", "N") + " > 1");
  }
  // The cluster's own check said "cluster: oversubscription must be ...", in neither language.
  if (const auto ratio = given.oversubscription; ratio && !(std::isfinite(*ratio) && *ratio >= 1.0)) {
    std::ostringstream said;
    said << *ratio;
    throw InputError(o.said_number("oversubscription", said.str()) +
                     ": expected a ratio of 1 or more (1 is a full-bisection fabric)");
  }
  spec.fabric =
      analysis::look_up_named(o, "fabric", given.fabric.value_or("fat-tree"),
                              [](const std::string& f) { return topology::presets::parse_fabric(f); });
  spec.oversubscription = given.oversubscription.value_or(1.0);
  refuse_oversubscription_on_one_leaf(given.platform, spec, given, o);
}

void refuse_oversubscription_on_one_leaf(const std::string& platform, topology::ClusterSpec spec,
                                         const FabricOptions& given, const analysis::OptionSpelling& o) {
  if (!given.oversubscription || given.nodes == 1 || !topology::find_preset(platform)) return;
  spec.preset = platform;
  if (topology::fabric_leaves(spec) != 1) return;
  std::ostringstream said;
  said << *given.oversubscription;
  throw InputError(o.said_number("oversubscription", said.str()) + ": every NIC of the " +
                   std::to_string(given.nodes) + " " + platform + " machines plugs into one leaf switch of " +
                   std::to_string(spec.leaf_radix) +
                   " ports, so nothing crosses a spine and the ratio would change nothing; expected more "
                   "machines (" +
                   o.takes("nodes", "N") + ") than fill one leaf");
}

}  // namespace hybridsim::api

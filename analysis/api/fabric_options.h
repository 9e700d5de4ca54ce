// The fabric between machines as the caller gave it (--fabric, --oversubscription; Python's fabric=,
// oversubscription=), checked once for `hybridsim topology` and `hybridsim collective` alike: either
// on one machine shapes nothing and is refused, naming both options, and so is either with a topology
// file (whose links are its fabric); a ratio under 1 is refused.
//   apply_fabric_options(spec, {.nodes = 2, .fabric = "rail-optimized"}, OptionSpelling::command_line());
#pragma once
#include <optional>
#include <string>

#include "analysis/output/option_spelling.h"
#include "topology/cluster_spec.h"

namespace hybridsim::api {

struct FabricOptions {
  std::string platform{};  // the preset or topology file given: a file's links are its own fabric
  int nodes = 1;
  std::optional<std::string> fabric{};       // none: fat-tree
  std::optional<double> oversubscription{};  // none: 1 (a full-bisection fabric)
};

// The fabric options of a request that has them under these names (TopologyRequest, CollectiveRequest).
template <class Request>
FabricOptions fabric_options_of(const Request& r) {
  return {
      .platform = r.topology, .nodes = r.nodes, .fabric = r.fabric, .oversubscription = r.oversubscription};
}

// Sets spec.fabric and spec.oversubscription; throws InputError as the header says, and as
// refuse_oversubscription_on_one_leaf below (of given.platform) does.
void apply_fabric_options(topology::ClusterSpec& spec, const FabricOptions& given,
                          const analysis::OptionSpelling& spelling);

// --oversubscription on machines of the preset `platform` whose NICs all plug into one leaf switch
// (2 DGX H100: 16 NICs, a leaf of 16 ports) shapes nothing either: no traffic crosses a spine (it ran
// as 1 without a word). Refused, naming both options; a topology file is left to its own links.
void refuse_oversubscription_on_one_leaf(const std::string& platform, topology::ClusterSpec spec,
                                         const FabricOptions& given,
                                         const analysis::OptionSpelling& spelling);

}  // namespace hybridsim::api

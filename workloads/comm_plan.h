// Turns a collective's description (who, what, how large: workloads/step_program.h) into the ring
// plan sim/ runs: ring orders and routes from topology::find_rings, or, for the hierarchical
// all-reduce, three phases (intra-machine reduce-scatter, inter-machine all-reduce among GPUs of the
// same local position, intra-machine all-gather). Plans are cached per member list.
//   CommPlanner planner(topology, {.algorithm = AllReduceAlgorithm::Ring});
//   auto phases = planner.plan(spec);   // phases[k][part]: members index spec.members
#pragma once
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/collective_chain.h"
#include "topology/rings.h"
#include "topology/topology.h"
#include "workloads/step_program.h"

namespace hybridsim::workloads {

enum class AllReduceAlgorithm : std::uint8_t { Ring, Hierarchical };
std::string_view algorithm_name(AllReduceAlgorithm a);         // "ring", "hierarchical"
AllReduceAlgorithm parse_algorithm(std::string_view text);     // throws InputError

struct CommOptions {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::Ring;
  std::optional<int> channels;  // none: the ring search's saturating channel count
  bool pcie_only = false;       // force rings (and point-to-point routes) off NVLink
};

// Phases of parts; each part's members index the collective's rank space (0..members-1).
using CollectivePlan = std::vector<std::vector<sim::CollectiveChain::Part>>;

class CommPlanner {
 public:
  CommPlanner(const topology::Topology& topology, CommOptions options);

  // A plan for one collective of `spec.op` and `spec.size` over spec.members (global GPU ranks).
  CollectivePlan plan(const CollectiveSpec& spec);
  // Ring channels over members (global GPU ranks), in their rank space; cached.
  const std::vector<sim::RingChannel>& ring_channels(const std::vector<int>& members);
  const CommOptions& options() const { return options_; }

 private:
  std::vector<sim::CollectiveChain::Part> ring_phase(const std::vector<std::vector<int>>& groups,
                                                     const std::vector<int>& members,
                                                     sim::CollectiveOp op, sim::Bytes size);
  const topology::Topology& topology_;
  CommOptions options_;
  std::map<std::vector<int>, std::vector<sim::RingChannel>> cache_;
};

}  // namespace hybridsim::workloads

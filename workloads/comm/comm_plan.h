// Turns a collective's description (who, what, how large: workloads/program/step_program.h) into what sim/
// runs: the algorithm and protocol (NCCL's choice by its own model, sim/nccl_model.h, unless fixed),
// the ring channels from topology::find_rings or the double binary trees built on them, or, for the
// hierarchical all-reduce, three phases (intra-machine reduce-scatter, inter-machine all-reduce
// among GPUs of the same local position, intra-machine all-gather). Rings and trees are cached per
// member list.
//   CommPlanner planner(topology, {.algorithm = AllReduceAlgorithm::Auto});
//   CollectivePlan plan = planner.plan(spec);   // plan.algorithm, plan.protocol, plan.channels
//   auto coll = make_collective(network, std::move(plan), config);
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collective_chain.h"
#include "sim/collectives/all_to_all.h"
#include "sim/nccl_model.h"
#include "sim/tree_collective.h"
#include "sim/work_progress.h"
#include "topology/rings.h"
#include "topology/topology.h"
#include "workloads/program/step_program.h"

namespace hybridsim::workloads {

// Auto: NCCL's choice of ring or tree per call (sim/nccl_model.h). The others fix it; tree applies
// to all-reduce only (other ops run as rings).
enum class AllReduceAlgorithm : std::uint8_t { Auto, Ring, Tree, Hierarchical };
std::string_view algorithm_name(AllReduceAlgorithm a);      // "auto", "ring", "tree", "hierarchical"
AllReduceAlgorithm parse_algorithm(std::string_view text);  // throws InputError

// "auto" (none: NCCL's choice per call), "ll", "ll128", "simple" or "ideal" (the α-β model).
std::optional<sim::Protocol> parse_protocol_option(std::string_view text);  // throws InputError
std::string protocol_option_name(std::optional<sim::Protocol> p);         // "auto", "ll", ...

// Why `members` (global GPU ranks) cannot run the hierarchical all-reduce, which needs two
// machines or more each holding the same number, two or more, of them ("all on machine 0", "one on each of 4
// machines"); empty when they can. The planner runs the ring instead, so commands say so or refuse.
std::string hierarchical_unfit(const topology::Topology& t, const std::vector<int>& members);

// What a step that holds all-to-alls among its other collectives says of a fixed protocol (empty
// under auto, simple or ideal): an all-to-all runs Simple (CommPlanner::plan), because NCCL sends it
// as grouped point-to-point copies, which NCCL 2.7-2.8 runs on Simple only; a fixed LL or LL128 is
// NCCL_PROTO's, for the other collectives. The collective command, which runs only the all-to-all,
// refuses the protocol instead (analysis/collective/collective_sweep.cpp).
std::string all_to_all_protocol_note(std::optional<sim::Protocol> fixed);

struct CommOptions {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::Auto;
  std::optional<sim::Protocol> protocol = {};  // none: NCCL's choice per call
  std::optional<int> channels = {};  // none: NCCL's channel count (topology::RingPlan::saturating_channels)
  bool pcie_only = false;       // force rings (and point-to-point routes) off NVLink
};

// Phases of parts; each part's members index the collective's rank space (0..members-1).
using CollectivePhases = std::vector<std::vector<sim::CollectiveChain::Part>>;

struct CollectivePlan {
  std::uint32_t ranks = 0;
  // What runs: Ring, Tree or Hierarchical (never Auto), and its protocol (the inter-machine phase's
  // for hierarchical; Ideal for point-to-point copies, which move at the links' line rate).
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::Ring;
  sim::Protocol protocol = sim::Protocol::Ideal;
  // Channels the collective runs on (NCCL: one CTA, so one SM, per channel): under an NCCL protocol
  // the communicator's first sim::nccl_channels of them for this size, as NCCL launches. A tree runs
  // each of them as two trees (two TreeChannels) that share the channel's links and NIC.
  int channels = 0;
  CollectivePhases phases;             // Ring, Hierarchical
  // Tree: shared with the other plans over the same members (the planner's cache), never changed.
  std::shared_ptr<const std::vector<sim::TreeChannel>> trees;
  // An all-to-all: the route from every member to every other (its rank space), shared with the
  // other plans over the same members; null for every other op.
  std::shared_ptr<const sim::PairRoutes> pairs;
  sim::ProtocolTiming timing;  // Ring, Tree, all-to-all
  // NCCL's model of the chosen algorithm × protocol for this call (none for Ideal and point to
  // point; for hierarchical, that of its inter-machine phase).
  std::optional<sim::NcclEstimate> nccl;
};

// The sim/ collective of a plan, with the plan's timing in place of config.timing: a ring or tree
// chosen by the fast path's factory (sim/fast/fast_path.h) from config.fast_path, or a
// CollectiveChain of such rings.
std::unique_ptr<sim::Collective> make_collective(sim::Network& network, CollectivePlan plan,
                                                 sim::CollectiveConfig config);

class CommPlanner {
 public:
  CommPlanner(const topology::Topology& topology, CommOptions options);

  // A plan for one collective of `spec.op` and `spec.size` over spec.members (global GPU ranks).
  CollectivePlan plan(const CollectiveSpec& spec);
  // Ring channels over members (global GPU ranks), in their rank space; cached.
  const std::vector<sim::RingChannel>& ring_channels(const std::vector<int>& members);
  // What NCCL's model knows of `members` for `op` (sim/nccl_model.h).
  sim::NcclMachine nccl_machine(const std::vector<int>& members, sim::CollectiveOp op);
  // Why a collective of `op` over `members` cannot run the LL128 protocol the options fix, or empty
  // (not fixed to LL128, or NCCL enables it there). NCCL enables LL128 only where a machine's GPUs
  // talk over NVLink; elsewhere nccl_choose falls back to Simple, so every command that can fix
  // the protocol refuses instead, in its own words before this text ("on pcie-server, GPUs 0-7 ...").
  std::string ll128_refusal(const std::vector<int>& members, sim::CollectiveOp op);
  const CommOptions& options() const { return options_; }
  // Told as the rings' routes are found (null: nobody; seconds for a ring of 65,536 GPUs).
  void set_progress(sim::WorkProgress* progress) { progress_ = progress; }

 private:
  struct Entry {
    topology::RingPlan rings;
    std::vector<sim::RingChannel> channels;
    std::shared_ptr<const std::vector<sim::TreeChannel>> trees;  // built on first use
    // trees_on[c]: the trees of the first c channels (2c of them), for a call NCCL runs on fewer
    // channels than the communicator has (sim::nccl_channels); made on first use.
    std::vector<std::shared_ptr<const std::vector<sim::TreeChannel>>> trees_on;
    std::optional<sim::NcclMachine> machine;  // describe_for_nccl's answer, on first use
    std::shared_ptr<const sim::PairRoutes> pairs;  // all-to-all routes, on first use
  };
  CollectivePlan all_to_all(const CollectiveSpec& spec);
  Entry& entry(const std::vector<int>& members);
  // The trees of `members`' first `channels` channels (all of them: Entry::trees).
  std::shared_ptr<const std::vector<sim::TreeChannel>> trees(const std::vector<int>& members, int channels);
  std::vector<sim::CollectiveChain::Part> ring_phase(const std::vector<std::vector<int>>& groups,
                                                     const std::vector<int>& members,
                                                     sim::CollectiveOp op, sim::Bytes size,
                                                     sim::Protocol* chosen,
                                                     std::optional<sim::NcclEstimate>* nccl);
  std::optional<CollectivePhases> hierarchical(const CollectiveSpec& spec, sim::Protocol* chosen,
                                               std::optional<sim::NcclEstimate>* nccl);
  const topology::Topology& topology_;
  CommOptions options_;
  std::map<std::vector<int>, Entry> cache_;
  sim::WorkProgress* progress_ = nullptr;
};

}  // namespace hybridsim::workloads

// Whether a folded step's attempt is expected to be given up once it runs (analysis/step/): a ring
// shared by representatives and members must fold, and one that is known from its plan and its GPUs
// to run in full makes the ladder (step_runner.cpp) throw the attempt away after its run and simulate
// every GPU; and whether any attempt's folded collectives are expected to be crossed by another
// party (CrossingForecast), which the ladder gives up too, or to run in full as they start. What the
// step's estimate must foresee to count the way the step ends up running (estimate_program,
// analysis/step/step_estimate.cpp).
// Private to analysis/step/.
//   if (auto why = folded_ring_expected_in_full(program, fold, collectives)) { /* every GPU's estimate */ }
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/step/step_fold.h"
#include "sim/collective.h"
#include "sim/link.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/program/step_program.h"

namespace hybridsim::sim {
class RingCollective;
}

namespace hybridsim::analysis {

// Whether a collective has ranks on representatives and on members of a folded step.
bool spans_members(const StepFoldPlan& fold, const workloads::CollectiveSpec& spec);

// Why a folded ring (sim::FoldedRing) among `collectives` that spans representatives and members is
// expected to run in full, or nullopt. Conservative, from its plan and its GPUs' speeds (what a rank's
// join time follows), not from its run, as FoldedRing finds out at its last join:
//  - under fast_path: auto, a channel whose chunks are of unequal size: its models at the larger and
//    the smaller chunks end apart by their bytes' transfer time, which is never 0 on links of finite
//    bandwidth, and auto then runs the channel in full (what-if fast-path point 0, GNMT dp 32 on 4 DGX-1);
//  - a channel whose positions repeat neither their routes' timing nor their GPUs' speed scales
//    (compute and sample: WMT16 sentence lengths batched at random give each worker its padded
//    length, so its ranks join at times that do not repeat; what-if variability point 11).
std::optional<std::string> folded_ring_expected_in_full(
    const workloads::StepProgram& program, const StepFoldPlan& fold,
    const std::vector<std::unique_ptr<sim::Collective>>& collectives);

// The plain ring a collective runs, if it runs one alone: a ring in full, or one that folds alone
// (an embedded ring's own ring only `with_embedded`).
const sim::RingCollective* lone_ring(const sim::Collective* c, bool with_embedded = false);

// Each route a plan's messages take (a tree's up and down, an all-to-all's pairs, its rings'
// channels), as workloads::make_collective makes them.
void for_each_route(const workloads::CollectivePlan& plan,
                    const std::function<void(const std::vector<sim::LinkId>&)>& visit);

// Whether an attempt's folded collectives (a tree's or a ring's models, which claim their links while
// they run, sim/fast/link_claims.h) are expected to meet another party on a link, so that the run
// gives the attempt up (interfered: the ladder's next way) where its plan alone cannot say when they
// run. Collectives over the same members of one kind share their routes and are taken as one group.
// Conservative: two groups that may run at once are taken to meet, whenever they run.
//   CrossingForecast crossing(network.links().size());
//   crossing.note_plan(c, spec, plan);   // each collective's plan, as it is made
//   if (auto why = crossing.expected_crossed(owned)) { /* the ladder's next way */ }
class CrossingForecast {
 public:
  explicit CrossingForecast(std::size_t links) : on_(links) {}

  // Before collective `c`'s plan is made into its collective (a folded step's shadows are not).
  void note_plan(std::size_t c, const workloads::CollectiveSpec& spec, const workloads::CollectivePlan& plan);

  // Why an attempt with the collectives `owned` (by collective: a shadow null) is expected to be
  // given up, or nullopt:
  //  - a folded tree and an all-to-all or a pipeline's transfers on one link: a tree's model holds
  //    each of its links from its first join to its end, and the other's message arriving meanwhile
  //    interferes (Mixtral 8x7B ep 8 with trees on 2 DGX H100: the experts' all-to-alls cross the
  //    dense gradients' tree at n0.GPU0->n0.NVSwitch);
  //  - two groups of rings that fold alone, on one link: the one that joins while the other holds
  //    it runs in full (in a folded step, one that members share breaks the fold) and its messages
  //    cross the other's claim (GPT-3's slice tp 8 x pp 4 x dp 4 on 16 DGX A100, a fat tree of two
  //    machines a leaf over one spine: the data-parallel rings of its tensor-parallel ranks on the
  //    same leaf-spine links). A hierarchical all-reduce's phases are such rings, each part its
  //    own group: where two of them share a link, the one that joins while the other holds it is
  //    interfered (FoldedRing::join), whether they are parts of one phase or of two (GNMT DP on
  //    DGX-1 under hierarchical: the inter-machine rings of GPUs 0 and 1 leave each machine through
  //    n.PLX0->n.NIC0 at once, on 2 to 2,048 machines; on pcie-server an inter-machine ring joins
  //    n0.CPU0->n0.PLX0 while the machine's reduce-scatter still holds it). On DGX H100 or A100, a
  //    NIC to each GPU, they share none and hold.
  std::optional<std::string> expected_crossed(
      const std::vector<std::unique_ptr<sim::Collective>>& owned) const;

  // The collectives among `owned` (by collective: a shadow null) of `program` expected to run in full
  // as they start, sorted; empty where no folded tree shares a link with a folded ring. A folded ring
  // claims each rank's links until that rank is done (sim/fast/link_claims.h); a tree decides at its
  // first rank's start, over every link of its routes, and one still claimed then makes it run in
  // full (FoldedTree::links_free); a tree's messages in full make a collective that starts on their
  // links before they end run in full too (a ring finds them busy, FoldedRing::refusal), and so on.
  // When each rank arrives comes from the program's kernels and each collective's time by NCCL's
  // model (collective_windows): a tree meets a folded ring whose first rank arrived no later than
  // the tree's, unless the tree's first rank arrives more than the ring's time after the ring's end
  // (its last rank's arrival plus its time), a doubling of the ring's time for the model's error and
  // the spread of the ring's ranks' finishes. A collective whose time NCCL's model does not give
  // (protocol ideal) is taken to last forever: where unsure, in full (an estimate over the run
  // refuses earlier, one under it lets a step run past its cap). BigLSTM DP on 40 DGX-1 under
  // algorithm auto: its softmax embedding's all-gather (295 ms by NCCL's model) starts at 105 ms and
  // its buckets' trees (from 320 ranks NCCL's choice) are ready at 275 ms, on the same stream: they
  // start as the first rank finishes the ring and run in full, and the input embedding's all-gather
  // after them (8,958,516 events run, 882,888 estimated as folded). Inception-v3 DP 32 on 4 DGX-1:
  // its last bucket's tree is ready 79 ms after its rings of about 1.3 ms each are issued, and folds.
  std::vector<std::size_t> expected_in_full(const std::vector<std::unique_ptr<sim::Collective>>& owned,
                                            const workloads::StepProgram& program) const;

 private:
  enum class Kind : std::uint8_t { Ring, Tree, AllToAll, Transfer };
  struct Group {
    Kind kind = Kind::Ring;
    std::vector<std::size_t> collectives;
    bool chained = false;  // some of its rings are parts of a hierarchical all-reduce's phases
  };
  using RouteVisit = std::function<void(const std::vector<sim::LinkId>&)>;
  // Collective c's rings over `members` (kind's group, made on first sight with the links `routes`
  // visits); `chained`: parts of c's phases.
  void note_group(std::size_t c, Kind kind, const std::vector<int>& members, bool chained,
                  const std::function<void(const RouteVisit&)>& routes);
  std::map<std::pair<Kind, std::vector<int>>, std::size_t> group_of_;
  std::vector<sim::Time> expected_time_;  // per collective: NCCL's model of its plan, Time::max() unknown
  std::vector<Group> groups_;
  std::vector<std::vector<std::uint32_t>> on_;  // per link: the groups that cross it, each once
};

}  // namespace hybridsim::analysis

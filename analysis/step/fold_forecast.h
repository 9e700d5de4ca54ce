// Whether a folded step's attempt is expected to be given up once it runs (analysis/step/): a ring
// shared by representatives and members must fold, and one that is known from its plan and its GPUs
// to run in full makes the ladder (step_runner.cpp) throw the attempt away after its run and simulate
// every GPU; and whether any attempt's folded collectives are expected to be crossed by another
// party (CrossingForecast), which the ladder gives up too. What the step's estimate must foresee to
// count the way the step ends up running (estimate_program, analysis/step/step_estimate.cpp).
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
  //    same leaf-spine links).
  std::optional<std::string> expected_crossed(
      const std::vector<std::unique_ptr<sim::Collective>>& owned) const;

 private:
  enum class Kind : std::uint8_t { Ring, Tree, AllToAll, Transfer };
  struct Group {
    Kind kind = Kind::Ring;
    std::vector<std::size_t> collectives;
  };
  std::map<std::pair<Kind, std::vector<int>>, std::size_t> group_of_;
  std::vector<Group> groups_;
  std::vector<std::vector<std::uint32_t>> on_;  // per link: the groups that cross it, each once
};

}  // namespace hybridsim::analysis

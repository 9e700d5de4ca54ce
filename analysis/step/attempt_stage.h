// One try's set-up (private to analysis/step/), the AttemptStage that step_attempt.h names opaque:
// its queue, network, budget and ticks, its collectives planned and built, its rings embedded, before
// its first event. What estimate_once counts and simulate_once runs, alike.
//   StagedAttempt stage = set_up_attempt(setup, program, fold, Embed::On, progress, what, attempt);
//   if (!stage) ...;  // refused before it starts: attempt.why
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/step/attempt_collectives.h"
#include "analysis/step/step_attempt.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_progress.h"
#include "analysis/step/step_runner.h"
#include "sim/budget.h"
#include "sim/event_queue.h"
#include "sim/fast/embedded_ring.h"
#include "sim/fast/ring_embedding.h"
#include "sim/network.h"

namespace hybridsim::analysis {

class CrossingForecast;
class EmbeddingForecast;

struct AttemptStage {
  AttemptStage(const StepSetup& setup, SimulationProgress* progress, std::string_view name)
      : what(name),
        parts(progress, this->what),
        network(queue, setup.topology->links(), setup.switching, &parts),
        budget(run_limits(setup.limits)),  // past the estimate, a fallback's tolerance
        ticks(queue, progress, this->what, &budget) {}
  std::string what;  // its set-up's lines' name, which `ticks` views until the run names its own
  sim::EventQueue queue;
  ProgramBuildTicks parts;  // told of its set-up
  sim::Network network;
  sim::SimulationBudget budget;
  // The folded collectives' models count their events here: a tree's model of seconds, within one
  // of the queue's events, gives lines with the step's time left (its expected events set in the run).
  StepTicks ticks;
  StepCollectives collectives;
  sim::EmbedPlan embedded;                // before the collectives start; its groups outlive their run
  std::vector<sim::EmbeddedRing*> rings;  // per collective: the embedded ring it became, if any
  PlanObserver* plans = nullptr;          // told each collective's plan as it was made (none: no one)
  // The estimate's count of this try (estimate_staged's step_budget_cost), which its run takes
  // rather than counting it again: 68.7 M instructions, 0.65% of the 1,024-GPU jittered step
  // (tests/bench/MEASUREMENTS.md, perf of 07:35). Where rings are embedded the run counts again:
  // their counts may read the claims set_embedded_to_run makes.
  std::optional<StepEstimate> counted;
};
// One try set up (AttemptStage), or null where it is refused before it starts (`attempt` says why,
// as make_collectives and embed_rings leave it). `forecast`, `crossing` and `plans` as make_collectives'.
StagedAttempt set_up_attempt(const StepSetup& setup, const workloads::StepProgram& program,
                             const StepFoldPlan& fold, Embed embed, SimulationProgress* progress,
                             std::string_view what, Attempt& attempt, EmbeddingForecast* forecast = nullptr,
                             CrossingForecast* crossing = nullptr, PlanObserver* plans = nullptr,
                             sim::NetworkObserver* watcher = nullptr);

}  // namespace hybridsim::analysis

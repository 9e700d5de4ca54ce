#include "analysis/step/step_estimate.h"

#include <optional>

#include "analysis/step/step_attempt.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_runner.h"

namespace hybridsim::analysis {

void StepEstimate::check(const sim::SimulationLimits& limits) const {
  sim::SimulationBudget budget(limits);
  budget.record(task_events, state_bytes);
  budget.check(sure);
}

StepEstimate estimate_step(const StepSetup& setup, SimulationProgress* progress) {
  return estimate_program(setup, build_program(setup, progress));
}

StepEstimate estimate_program(const StepSetup& setup, const workloads::StepProgram& program) {
  // The ladder's first way (step_runner.cpp): folded onto representatives when the fast path is on
  // and some GPUs are alike; a fold refused before it starts leaves every GPU simulated.
  if (setup.collective.fast_path != sim::FastPath::Off) {
    const StepFoldPlan fold = plan_step_fold(program, *setup.topology, {});
    if (!fold.empty())
      if (const std::optional<StepEstimate> e = estimate_once(setup, program, fold, Embed::On)) return *e;
  }
  return *estimate_once(setup, program, {}, Embed::On);
}

}  // namespace hybridsim::analysis

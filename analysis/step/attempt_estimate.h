// What one try at a step will cost, counted before its event loop (private to analysis/step/):
// estimate_once (step_attempt.h) sets the try up as simulate_once would run it and counts it here, or
// says why the run would refuse or give it up (a ring they share that will run in full, a folded
// collective another party is expected to cross), with what that count tells of the ladder's later ways.
//   std::optional<StepEstimate> e =
//       estimate_staged(setup, program, fold, embed, progress, attempt, stage, forecast, crossing);
#pragma once
#include <optional>

#include "analysis/step/step_attempt.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_progress.h"
#include "analysis/step/step_runner.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

class CrossingForecast;
class EmbeddingForecast;

// estimate_once's count of a try set up (`stage`, as simulate_once would run it).
std::optional<StepEstimate> estimate_staged(const StepSetup& setup, const workloads::StepProgram& program,
                                            const StepFoldPlan& fold, Embed embed,
                                            SimulationProgress* progress, Attempt& attempt,
                                            AttemptStage& stage, const EmbeddingForecast& forecast,
                                            const CrossingForecast& crossing);

}  // namespace hybridsim::analysis

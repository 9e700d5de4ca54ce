#include "analysis/step/attempt_stage.h"

#include <string_view>
#include <utility>

#include "analysis/step/attempt_embedding.h"
#include "sim/fast/tree_model.h"

namespace hybridsim::analysis {

void AttemptStageDeleter::operator()(AttemptStage* stage) const { delete stage; }

StagedAttempt set_up_attempt(const StepSetup& setup, const workloads::StepProgram& program,
                             const StepFoldPlan& fold, Embed embed, SimulationProgress* progress,
                             std::string_view what, Attempt& attempt, EmbeddingForecast* forecast,
                             CrossingForecast* crossing, PlanObserver* plans, sim::NetworkObserver* watcher) {
  StagedAttempt stage(new AttemptStage(setup, progress, what));
  // Before the collectives are made: a folded ring or tree watched by a trace runs in full.
  stage->network.set_observer(watcher);
  stage->plans = plans;
  sim::CollectiveConfig config = setup.collective;
  config.budget = &stage->budget;
  config.model_progress = stage->ticks.for_models();
  stage->collectives.uniform_trees->threads = sim::model_threads(setup.limits.model_threads);
  if (!make_collectives(setup, program, fold, stage->network, config, stage->collectives, attempt, progress,
                        what, forecast, crossing, plans))
    return nullptr;
  if (embed == Embed::On) {
    auto rings = embed_rings(program, fold, stage->network, stage->collectives,
                             progress ? &stage->parts : nullptr, stage->embedded, attempt);
    if (!rings) return nullptr;
    stage->rings = std::move(*rings);
  }
  return stage;
}

}  // namespace hybridsim::analysis

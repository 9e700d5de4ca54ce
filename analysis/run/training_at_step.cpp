#include "analysis/run/training_at_step.h"

#include <string>

#include "analysis/training/epochs_limit.h"
#include "sim/error.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

std::optional<TrainingModel> training_model_at_step(const scenarios::ResolvedScenario& resolved) {
  auto model = training_model(resolved.scenario, resolved.profile.meta.network);
  if (!model) return model;
  // The formula the step's program counts its global batch with (step_program.h).
  const std::int64_t global_batch =
      workloads::step_global_batch(resolved.profile, resolved.mapping, resolved.step);
  if (const std::string problem = epochs_limit_problem(model->efficiency, global_batch); !problem.empty())
    throw InputError(scenarios::location_of(resolved.scenario, "training.efficiency") +
                     ": training.efficiency: " + problem + "; expected a curve within it at this batch");
  return model;
}

}  // namespace hybridsim::analysis

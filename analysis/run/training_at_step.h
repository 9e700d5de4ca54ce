// A scenario's efficiency curve and dataset (training_model, scenario_run.h), the curve also held to
// the epochs limit at the step's own global batch before any step runs: a tiny b_noise or a table
// extrapolated steeply printed "inf h" to train with exit 0 (issue 31). Run and sweep (each point,
// before the first runs) ask this one function.
//   const auto model = training_model_at_step(resolved);  // InputError at training.efficiency
#pragma once
#include <optional>

#include "analysis/run/scenario_run.h"

namespace hybridsim::analysis {

std::optional<TrainingModel> training_model_at_step(const scenarios::ResolvedScenario& resolved);

}  // namespace hybridsim::analysis

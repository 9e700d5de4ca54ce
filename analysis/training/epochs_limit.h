// The epochs limit (sim/limits.h, kEpochs) held on what a curve gives at
// a global batch: a tiny b_noise, or a table extrapolated steeply past its ends, gave infinite or
// absurd epochs, and a time to train of "inf h" with exit 0 (issue 31). Run, sweep and study ask
// before any step runs and locate the refusal at the curve's key.
//   epochs_limit_problem(StatisticalEfficiency::parametric(3, 1e-300, {1, 2}), 64)
//   // "at the global batch 64 the curve gives 1.92e+302 epochs, over the limit of 1,000,000 epochs (...)"
#pragma once
#include <cstdint>
#include <string>

#include "analysis/training/statistical_efficiency.h"

namespace hybridsim::analysis {

// "" where curve.epochs(global_batch) is within the limit, else what is wrong, without a location.
std::string epochs_limit_problem(const StatisticalEfficiency& curve, std::int64_t global_batch);

}  // namespace hybridsim::analysis

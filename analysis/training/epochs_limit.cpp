#include "analysis/training/epochs_limit.h"

#include <cstdio>

#include "scenarios/loader/efficiency_points.h"

namespace hybridsim::analysis {

std::string epochs_limit_problem(const StatisticalEfficiency& curve, std::int64_t global_batch) {
  const double epochs = curve.epochs(global_batch).epochs;
  if (epochs <= scenarios::kMaxEpochs) return {};
  char got[64];
  std::snprintf(got, sizeof got, "%.3g", epochs);
  return "at the global batch " + std::to_string(global_batch) + " the curve gives " + got +
         " epochs, over the limit of " + std::string(scenarios::kMaxEpochsText) +
         (curve.kind() == StatisticalEfficiency::Kind::table ? " (a table extrapolated steeply past its ends)"
                                                             : " (a b_noise far under the batch)");
}

}  // namespace hybridsim::analysis

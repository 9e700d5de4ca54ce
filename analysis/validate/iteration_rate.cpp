#include "analysis/validate/iteration_rate.h"

#include "sim/error.h"
#include "workloads/program/variability.h"

namespace hybridsim::analysis {

double iteration_rate_factor(const workloads::Profile& profile, sim::Time step_time, int micro_batches,
                             double compute_scale) {
  if (micro_batches < 1 || step_time <= sim::Time::zero()) throw InternalError("iteration rate: no step");
  const workloads::LengthModel lengths = workloads::wmt16_en_de_lengths();
  const std::vector<workloads::LengthBin> bins =
      workloads::length_bins(lengths, profile.meta.batch_per_gpu, 5);
  double padded = 0, mean = 0;  // over bins: the reference padded length, the mean counted length
  for (const auto& b : bins) {
    padded += b.share * b.expected_padded;
    mean += b.share * b.mean_length;
  }
  const double step = step_time.to_seconds();
  const double a = micro_batches;
  const double p = (profile.forward_time() + profile.backward_time()).to_seconds() * compute_scale;
  const double u = profile.optimizer_time(1).to_seconds() * compute_scale;
  const double rest = (step - a * p - u) / a;
  double sum = 0;  // Σ over iterations and bins of share × tokens ÷ time, tokens relative to the mean
  for (int j = 0; j < micro_batches; ++j) {
    const double fixed = rest + (j == 0 ? u : 0.0);
    for (const auto& b : bins)
      sum += b.share * (b.mean_length / mean) / (p * b.expected_padded / padded + fixed);
  }
  // Mean of rates (sum / a, in mean-token units per second) over tokens ÷ time (a / step).
  return sum / a * step / a;
}

}  // namespace hybridsim::analysis

// Time to train = epochs(B) × ceil(dataset / B) × step time (the relation used throughout hybridsim's
// reference notes on statistical efficiency; epochs(B) from McCandlish et al. 2018 or measured tables).
#include "analysis/training/time_to_train.h"

#include <cmath>
#include <string>

#include "sim/error.h"

namespace hybridsim::analysis {

TimeToTrain time_to_train(sim::Time step_time, std::int64_t global_batch, std::int64_t dataset_samples,
                          EpochsEstimate epochs) {
  if (step_time < sim::Time::zero())
    throw InputError("time to train: expected a step time >= 0, got " + sim::format_time(step_time));
  if (global_batch <= 0)
    throw InputError("time to train: expected a global batch > 0, got " + std::to_string(global_batch));
  if (dataset_samples <= 0)
    throw InputError("time to train: expected a dataset of > 0 samples, got " +
                     std::to_string(dataset_samples));
  if (!(epochs.epochs > 0) || !std::isfinite(epochs.epochs))
    throw InputError("time to train: expected epochs > 0, got " + std::to_string(epochs.epochs));
  TimeToTrain t;
  t.step_time = step_time;
  t.global_batch = global_batch;
  t.epochs = epochs.epochs;
  // The last, partial batch of an epoch is still a step.
  t.steps_per_epoch = dataset_samples / global_batch + (dataset_samples % global_batch != 0 ? 1 : 0);
  t.total_steps = epochs.epochs * static_cast<double>(t.steps_per_epoch);
  t.seconds = t.total_steps * static_cast<double>(step_time.ps()) / 1e12;
  t.extrapolated = epochs.extrapolated;
  return t;
}

TimeToTrain time_to_train(sim::Time step_time, std::int64_t global_batch, std::int64_t dataset_samples,
                          const StatisticalEfficiency& curve) {
  return time_to_train(step_time, global_batch, dataset_samples, curve.epochs(global_batch));
}

}  // namespace hybridsim::analysis

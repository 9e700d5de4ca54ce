// Time to train = epochs(B) × ceil(dataset / B) × step time (the relation used throughout hybridsim's
// reference notes on statistical efficiency; epochs(B) from McCandlish et al. 2018 or measured tables).
// epochs(B) counts samples: epochs × dataset samples are processed to the target, B a step, so a batch
// over the dataset takes epochs × dataset / B steps (fewer steps than epochs), not one step an epoch.
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
  t.dataset_samples = dataset_samples;
  // The last, partial batch of an epoch is still a step; a batch over the dataset is not a partial
  // batch but several epochs' samples (sampled with repetition), so an epoch is that share of a step.
  const std::int64_t whole_steps = dataset_samples / global_batch + (dataset_samples % global_batch != 0);
  t.steps_per_epoch = global_batch > dataset_samples
                          ? static_cast<double>(dataset_samples) / static_cast<double>(global_batch)
                          : static_cast<double>(whole_steps);
  t.total_steps = epochs.epochs * t.steps_per_epoch;
  t.seconds = t.total_steps * static_cast<double>(step_time.ps()) / 1e12;
  t.extrapolated = epochs.extrapolated;
  return t;
}

TimeToTrain time_to_train(sim::Time step_time, std::int64_t global_batch, std::int64_t dataset_samples,
                          const StatisticalEfficiency& curve) {
  return time_to_train(step_time, global_batch, dataset_samples, curve.epochs(global_batch));
}

}  // namespace hybridsim::analysis

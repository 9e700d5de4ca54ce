// Time to train: epochs(B) × ceil(dataset / B) × step time, the end-to-end projection of one simulated
// training step (a global batch over the dataset: epochs(B) × dataset / B steps, as the samples count).
// Step time stays integer picoseconds (sim::Time); only the product is a double, in seconds (it may
// exceed the 106 days sim::Time holds).
//   auto t = time_to_train(sim::Time::ms(250), 1'000, 10'500, EpochsEstimate{4, false});
//   // t.steps_per_epoch == 11, t.total_steps == 44, t.seconds == 11.0
#pragma once
#include <cstdint>

#include "analysis/training/statistical_efficiency.h"
#include "sim/time.h"

namespace hybridsim::analysis {

struct TimeToTrain {
  sim::Time step_time;               // one optimizer step at this global batch
  std::int64_t global_batch = 0;     // samples per step, all workers together
  double epochs = 0;                 // epochs to the quality target at this batch
  // ceil(dataset_samples / global_batch), a whole number; when the global batch is over the dataset,
  // dataset_samples / global_batch (under 1): one step covers global_batch / dataset_samples epochs.
  double steps_per_epoch = 0;
  double total_steps = 0;            // epochs × steps_per_epoch (fractional when epochs come from a fit)
  double seconds = 0;                // total_steps × step_time
  bool extrapolated = false;         // epochs come from outside the curve's supported range
  std::int64_t dataset_samples = 0;  // samples per epoch
  bool batch_over_dataset() const { return global_batch > dataset_samples; }
};

// Throws InputError unless step_time >= 0, global_batch > 0, dataset_samples > 0 and epochs > 0.
TimeToTrain time_to_train(sim::Time step_time, std::int64_t global_batch, std::int64_t dataset_samples,
                          EpochsEstimate epochs);
// The same with epochs = curve.epochs(global_batch).
TimeToTrain time_to_train(sim::Time step_time, std::int64_t global_batch, std::int64_t dataset_samples,
                          const StatisticalEfficiency& curve);

}  // namespace hybridsim::analysis

// NVIDIA's GNMT throughput meter (../shared/reference/gnmt_training_loop.md §5): per rank, the
// unweighted mean over iterations (micro-batches) of tokens ÷ the iteration's wall time, ranks
// summed; against tokens ÷ time, which `run` reports. A step simulated at the profile's fixed
// lengths stands for the mean of steps whose micro-batches are drawn from the bucketing sampler's
// five bins (workloads/program/variability.h): a micro-batch of bin b counts tokens in proportion
// to the bin's mean length and runs its forward and backward kernels P in proportion to its padded
// length, plus a fixed part F_j: the rest of the step spread evenly over its micro-batches, but the
// optimizer update, which lands whole in one of them.
//   double f = iteration_rate_factor(profile, r.step_time, r.accumulation, 1.0 / speed);
//   double published_like = r.units_per_second * f;   // ≤ r.units_per_second
#pragma once
#include "sim/time.h"
#include "workloads/profile/profile.h"

namespace hybridsim::analysis {

// The meter's reading over tokens ÷ time for a step of `step_time` with `micro_batches` per
// worker, on a profile whose kernels run `compute_scale` times their profiled durations.
double iteration_rate_factor(const workloads::Profile& profile, sim::Time step_time, int micro_batches,
                             double compute_scale);

}  // namespace hybridsim::analysis

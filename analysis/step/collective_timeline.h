// When each collective of a step is expected to start, from its program alone, before anything
// runs (analysis/step/): each GPU's streams run their kernels for their durations (scaled as the
// executor scales them, sim/stream_executor.h), a wait for an event of another GPU is taken as met at
// once, and a collective holds its stream for its expected time (NCCL's model of its plan) from the
// moment the rank reaches it. No contention and no waiting for the other ranks: on GPUs that run
// alike (a data-parallel group's) a rank's times are the run's, up to the collectives' own error.
// What CrossingForecast::expected_in_full asks: does a tree start while a folded ring still holds
// its links (the compute between the two against the ring's time)?
//   std::vector<CollectiveWindow> w = collective_windows(program, expected_time);
//   if (w[tree].first_arrival <= w[ring].last_arrival + expected_time[ring]) { /* they meet */ }
#pragma once
#include <vector>

#include "sim/time.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

struct CollectiveWindow {
  sim::Time first_arrival = sim::Time::max();  // the earliest rank's arrival at its collective task
  sim::Time last_arrival = sim::Time::zero();  // the latest rank's (the collective runs from there)
  bool reached() const { return first_arrival != sim::Time::max(); }
};

// Per collective of `program`: when its ranks reach it. `expected_time` (by collective; missing or
// Time::max(): unknown) is how long a collective holds a rank's stream; an unknown one is taken as
// none, which can only bring later tasks earlier. A rank that never reaches its task (a stream
// waiting for an event of its own GPU that is never recorded) leaves it unreached.
std::vector<CollectiveWindow> collective_windows(const workloads::StepProgram& program,
                                                 const std::vector<sim::Time>& expected_time);

}  // namespace hybridsim::analysis

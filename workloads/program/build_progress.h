// Progress of building a step's programs, for the person waiting on a large one: at 65,536 GPUs the
// workers' streams and transfers take seconds before the first event. The builders here tell it
// every kBuildTickEvery workers or GPUs (never per task: the tick costs nothing a benchmark sees);
// the listener is a higher room's (analysis/step/step_progress.h), as this room includes none.
//   struct Lines : ProgramBuildProgress { void built(...) override { ... } } lines;
//   build_step_program(profile, placement, mapping, gpus, options, &lines);
#pragma once
#include <cstdint>
#include <string_view>

#include "sim/work_progress.h"

namespace hybridsim::workloads {

// The set-up progress interface of the lower rooms (sim/work_progress.h), under the name the
// program builders have used.
using ProgramBuildProgress = sim::WorkProgress;

// How many workers (or GPUs, groups) between two ticks: a 16,384-GPU step's worker takes a few
// microseconds, so a tick every 64 is well under the listener's first delay and costs nothing.
inline constexpr std::uint64_t kBuildTickEvery = sim::kWorkTickEvery;

// Tells `progress` (null: nobody) at the part's start, every kBuildTickEvery units and at its end.
inline void build_tick(ProgramBuildProgress* progress, std::string_view part, std::uint64_t done,
                       std::uint64_t total, std::string_view unit) {
  sim::work_tick(progress, part, done, total, unit, kBuildTickEvery);
}

}  // namespace hybridsim::workloads

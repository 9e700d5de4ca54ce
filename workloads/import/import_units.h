// What an imported profile's throughput counts (--unit, --units-per-step), checked alike by both
// importers: a step of --batch B counts B samples, so "samples" with another count per step wrote a
// profile whose units/s were not its samples/s, and run printed only the samples/s.
//   check_throughput_units("samples", 5, 1);  // throws: 5 samples a step, but the batch is 1
#pragma once
#include <cstdint>
#include <string>

#include "sim/error.h"

namespace hybridsim::workloads {

inline void check_throughput_units(const std::string& unit, std::int64_t units_per_step, std::int64_t batch) {
  if (units_per_step < 0) throw InputError("--units-per-step must be positive");
  if (unit == "samples" && units_per_step > 0 && units_per_step != batch)
    throw InputError("--units-per-step " + std::to_string(units_per_step) +
                     ": under --unit samples a step counts " + "its --batch, " + std::to_string(batch) +
                     "; expected 0 or " + std::to_string(batch) + ", or the --unit a step counts " +
                     std::to_string(units_per_step) + " of (tokens, ...)");
}

}  // namespace hybridsim::workloads

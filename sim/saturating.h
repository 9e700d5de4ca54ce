// Sums that stop at the type's largest value instead of wrapping: budgets and estimates add
// counts that may be "no limit" large (sim/budget.cpp, analysis/step/step_in_flight.cpp).
#pragma once
#include <cstdint>
#include <limits>

namespace hybridsim::sim {

inline std::uint64_t add_saturating(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b ? std::numeric_limits<std::uint64_t>::max()
                                                           : a + b;
}

// For the non-negative byte counts of a budget.
inline std::int64_t add_saturating(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max() : a + b;
}

}  // namespace hybridsim::sim

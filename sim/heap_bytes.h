// What a heap allocation takes (glibc, 64-bit), for the simulation's own counts of the state it
// holds (sim/budget.h): a collective's full_cost() (sim/collective_cost.cpp) and a step's program
// and set-up (analysis/step/step_footprint.h).
//   cost.state_bytes += heap_array<LinkId>(route.size());
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace hybridsim::sim {

// A block of n bytes: its chunk, n plus an 8-byte header rounded up to 16, at least 32; a block of
// 128 KiB or more is mapped on its own, rounded up to pages.
inline std::int64_t heap_block(std::int64_t n) {
  if (n <= 0) return 0;  // an empty vector allocates nothing
  if (n >= 128 * 1024) return (n + 16 + 4095) / 4096 * 4096;
  return std::max<std::int64_t>(32, (n + 8 + 15) / 16 * 16);
}

// A vector's buffer of `count` elements of T.
template <typename T>
std::int64_t heap_array(std::size_t count) {
  // Over-aligned elements (the ring's positions, the tree's nodes) may take up to one alignment more.
  const std::int64_t slack = alignof(T) > 16 ? static_cast<std::int64_t>(alignof(T)) : 0;
  return count == 0 ? 0 : heap_block(static_cast<std::int64_t>(count * sizeof(T))) + slack;
}

}  // namespace hybridsim::sim

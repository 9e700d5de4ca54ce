// What a folded ring's model keeps for its periodic jump (sim/ring_jump.cpp): the state it took at
// the last few arrivals of a step's first message at position 0. Private to ring_collective.cpp and
// ring_jump.cpp (the collective holds it by pointer).
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/ring_collective.h"

namespace hybridsim::sim {

// Periods of up to max(64, positions) steps, at most 256, are found; rings of fewer steps than 64
// are not worth comparing.
inline constexpr std::size_t kRingJumpHistory = 64;
inline constexpr std::uint32_t kRingJumpMinSteps = 64;
inline constexpr std::size_t kRingJumpMaxWords = std::size_t{1} << 23;  // 64 MiB of kept states

struct RingCollective::JumpSnapshot {
  Time now;
  std::uint32_t step = 0;
  std::uint32_t lowest_step = 0;   // of every pending event (and the one being handled)
  std::uint32_t highest_step = 0;
  std::vector<std::int64_t> state;  // relative: compared for equality
  std::vector<LinkCounters> links;  // additive: their growth over a period is repeated
  std::vector<std::int64_t> counts; // additive: receives and sends left, bytes per edge, sent
  std::uint64_t hops = 0;
};

struct RingCollective::PeriodJump {
  using Snapshot = JumpSnapshot;
  std::deque<Snapshot> history;
  Snapshot spare;  // the last one dropped, whose buffers the next one reuses
  std::size_t words = 0;  // in the history's states
  std::uint64_t jumped_steps = 0;
};

}  // namespace hybridsim::sim

// What a collective is expected to simulate (expected_events), from its plan alone before any
// rank joins: a folded collective's models in place of its ranks, the rest in full. A folded ring
// runs `window` positions per channel (the period of its routes' timing, or its embedding's
// window), each position's messages crossing its route; every step one by one, or, where the
// periodic jump applies (sim/fast/ring_jump.h), a few periods per phase; chunks of unequal size run
// a second model at the smaller size. The estimate is what a step weighs against its events budget
// before its event loop (analysis/step/step_estimate.h).
//   const ExpectedEvents e = expected_events(collective);   // e.queue + e.models = e.total()
#pragma once
#include <cstdint>

#include "sim/collective.h"
#include "sim/ring_collective.h"

namespace hybridsim::sim {

// The events simulating a collective is expected to take: on the step's queue (a collective in
// full, an embedded ring's segments) and on its models' own (counted in its
// simulation_path().private_events: a folded ring's or tree's).
struct ExpectedEvents {
  std::uint64_t queue = 0;
  std::uint64_t models = 0;
  std::uint64_t total() const { return queue + models; }
  ExpectedEvents& operator+=(const ExpectedEvents& o) {
    queue += o.queue;
    models += o.models;
    return *this;
  }
};

// What simulating `c` is expected to take the way it will be simulated, from its plan alone before
// any rank joins (join times taken alike, as a step's alike GPUs join): a folded ring's, embedded
// ring's or folded tree's own estimate (beside each), a chain's parts', anything else in full.
ExpectedEvents expected_events(const Collective& c);

// Whether a model may jump over periodic steps: a folded ring's, alone on its own queue; not an
// embedded ring's segment, live on the step's queue, whose jumps end at the next event of anything
// else (a kernel's end), so that in a step it runs nearly every step (GNMT's data-parallel rings on
// 256 DGX-1: tests/scale/step_estimate_test.cpp).
enum class Jumps : std::uint8_t { Alone, Live };
// Steps a model of `window` positions of `ring` runs one by one: all of them, or where the jump
// applies alone (chunks of one size, enough steps) about kJumpWarmSteps + 2 · window per phase
// (the reduce-scatter and all-gather halves of an all-reduce jump apart), the rest jumped over.
inline constexpr std::uint64_t kJumpWarmSteps = 16;
std::uint64_t ring_steps_simulated(const RingCollective& ring, std::uint32_t window, Jumps jumps);

// Events and messages of channel c's first `window` positions standing for all of them (window =
// ranks: the channel in full, still jumped where that applies).
SimulationCost ring_window_cost(const RingCollective& ring, std::uint32_t c, std::uint32_t window,
                                Jumps jumps);

// Whether channel c's positions p and q send alike: the same protocol delay, links of the same
// timing hop by hop.
bool ring_positions_alike(const RingCollective& ring, std::uint32_t c, std::uint32_t p, std::uint32_t q);
// Channel c's positions repeat every this many: the smallest period of their routes' timing and
// protocol delays (what FoldedRing compares, less the join times, taken alike).
std::uint32_t ring_plan_period(const RingCollective& ring, std::uint32_t c);

// Whether two edges of the ring (any channels) cross one link: it cannot fold, and runs in full.
bool ring_edges_share_a_link(const RingCollective& ring);

}  // namespace hybridsim::sim

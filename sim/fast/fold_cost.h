// What a folded ring is expected to simulate, from its plan alone before any rank joins: the cost
// behind FoldedRing's and EmbeddedRing's expected_events() (sim/collective.h). A folded ring runs
// `window` positions per channel (the period of its routes' timing, or its embedding's window),
// each position's messages crossing its route; every step one by one, or, where the periodic jump
// applies (sim/fast/ring_jump.h), a few periods per phase; chunks of unequal size run a second
// model at the smaller size.
//   const SimulationCost c = ring_window_cost(ring, channel, ring_plan_period(ring, channel), Jumps::Alone);
#pragma once
#include <cstdint>

#include "sim/collective.h"
#include "sim/ring_collective.h"

namespace hybridsim::sim {

// Whether a model may jump over periodic steps: a folded ring's, alone on its own queue; not an
// embedded ring's segment, live on the step's queue, whose jumps end at the next event of anything
// else (a kernel's end), so that in a step it runs nearly every step (GNMT's data-parallel rings on
// 256 DGX-1: tests/scale/step_estimate_test.cpp).
enum class Jumps : std::uint8_t { Alone, Live };
// Steps a model of `window` positions of channel c of `ring` runs one by one: all of them where the
// jump does not apply alone or the window is every position (outside the fit below: such a model
// may jump far less); else (RingJump::applies() as far as the plan tells it) what the jump needs
// per phase (the reduce-scatter and all-gather halves of an all-reduce jump apart), in steps of the
// slowest edges' gap (fold_cost.cpp: an estimate fitted to sim_ring_jump_test.cpp's grid and the
// shipped scenarios, never under there), the rest jumped over.
std::uint64_t ring_steps_simulated(const RingCollective& ring, std::uint32_t c, std::uint32_t window,
                                   Jumps jumps);
// The most positions from one of the window's slowest edges (narrowest link on its route) to the
// next, around the window (the window if it has one; 1 where every edge is as slow).
std::uint32_t ring_slow_edge_gap(const RingCollective& ring, std::uint32_t c, std::uint32_t window);

// Events and messages of channel c's first `window` positions standing for all of them (window =
// ranks: the channel in full, still jumped where that applies).
SimulationCost ring_window_cost(const RingCollective& ring, std::uint32_t c, std::uint32_t window,
                                Jumps jumps);
// The same both ways, from one pass over the window's routes (an embedded ring asks both).
struct WindowCosts {
  SimulationCost live, alone;
};
WindowCosts ring_window_costs(const RingCollective& ring, std::uint32_t c, std::uint32_t window);

// Whether channel c's positions p and q send alike: the same protocol delay, links of the same
// timing hop by hop.
bool ring_positions_alike(const RingCollective& ring, std::uint32_t c, std::uint32_t p, std::uint32_t q);
// Channel c's positions repeat every this many: the smallest period of their routes' timing and
// protocol delays (what FoldedRing compares, less the join times, taken alike).
std::uint32_t ring_plan_period(const RingCollective& ring, std::uint32_t c);

// Whether two edges of the ring (any channels) cross one link: it cannot fold, and runs in full.
bool ring_edges_share_a_link(const RingCollective& ring);
// Whether two rings take the same routes, channel by channel, position by position (then
// ring_edges_share_a_link answers alike for both, whatever their ranks' order): compared, not
// sorted, a step's buckets over one member set find their answer once.
bool same_ring_routes(const RingCollective& a, const RingCollective& b);

}  // namespace hybridsim::sim

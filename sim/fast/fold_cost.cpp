// The expected cost of a folded ring's models (sim/fast/fold_cost.h): counts from the plan, no
// event run. The per-message events are full_cost()'s (one per link entered, one delivery).
#include "sim/fast/fold_cost.h"

#include <algorithm>
#include <vector>

#include "sim/fast/folded_ring.h"
#include "sim/fast/ring_jump.h"

namespace hybridsim::sim {

std::uint64_t ring_steps_simulated(const RingCollective& ring, std::uint32_t window, Jumps alone) {
  const std::uint64_t steps = ring.steps();
  // RingJump::applies(), as far as the plan tells it (observers are not set when estimating), of
  // the model that runs: one of fewer positions than the ring runs all its chunks at one size (the
  // larger, then the smaller: FoldedRing::run_channel, EmbeddedRing's segments and ghosts), so it
  // jumps whatever the ring's chunks; only a model of every position runs the ring's own chunks.
  // Asking the ring's chunks alone counted every step of the 16,384-GPU DGX-1 step's bounded rings
  // (225.5 M events estimated, 1.27 M run).
  const bool one_size = window < ring.ranks() || ring.uniform_chunks();
  const bool jumps = alone == Jumps::Alone && steps >= kRingJumpMinSteps &&
                     ring.op() != CollectiveOp::Broadcast && one_size && ring.config().observer == nullptr;
  if (!jumps) return steps;
  // What RingJump (sim/fast/ring_jump.cpp) needs per phase before and after its jump, for a model of
  // w = window positions (the steps each term takes on the grid of tests/unit/sim_ring_jump_test.cpp,
  // whose test holds this estimate to the steps simulated):
  // - settle, w - 1: a snapshot holds every pending step relative to the leader's, so the state can
  //   repeat only once each position's lead over position 0 has stopped growing. A position forwards
  //   step s only once step s - 1 has reached it, so the leads are at most 0, 1, ..., w - 1, built
  //   one step at a time (a trace of the jumps on the grid: 0 to 3.3 w, the longest with 8 messages
  //   per chunk, up to 1.2 w with one).
  // - detect, w: the state must be seen again one period d later (periods() compares the history),
  //   and d <= w, a pattern of unlike edges moving on one position a step.
  // - tail, w + 2: periods() stops short of the phase's boundary by less than a period plus the
  //   steps pending ahead of the leader, which then run one by one: d + the largest lead, at most
  //   w + 2 on the grid (d = w where the leads stay near 0, d = 1 where they reach w - 1).
  const bool two_phases = ring.reduce_steps() > 0 && ring.reduce_steps() < ring.steps();
  const std::uint64_t w = window;
  const std::uint64_t per_phase = (w - 1) + w + (w + 2);
  return std::min(steps, (two_phases ? 2 : 1) * per_phase);
}

namespace {

// What every message of one step takes across the window's positions: its positions, their
// events (one per link entered, one delivery).
struct WindowShape {
  std::uint64_t positions = 0;
  std::uint64_t events = 0;
};
WindowShape window_shape(const RingCollective& ring, std::uint32_t c, std::uint32_t window) {
  WindowShape out;
  const RingChannel& plan = ring.channel_plan(c);
  for (std::uint32_t p = 0; p < window && p < plan.routes.size(); ++p) {
    ++out.positions;
    out.events += plan.routes[p].size() + 1;
  }
  return out;
}

SimulationCost window_cost(const RingCollective& ring, const WindowShape& shape, std::uint32_t window,
                           Jumps jumps) {
  const std::uint64_t per_edge = ring_steps_simulated(ring, window, jumps) * ring.messages_per_chunk();
  SimulationCost cost;
  cost.messages = per_edge * shape.positions;
  cost.events = per_edge * shape.events;
  cost.in_flight = ring.messages_per_chunk() * shape.positions;
  return cost;
}

}  // namespace

SimulationCost ring_window_cost(const RingCollective& ring, std::uint32_t c, std::uint32_t window,
                                Jumps jumps) {
  return window_cost(ring, window_shape(ring, c, window), window, jumps);
}

WindowCosts ring_window_costs(const RingCollective& ring, std::uint32_t c, std::uint32_t window) {
  const WindowShape shape = window_shape(ring, c, window);
  return {window_cost(ring, shape, window, Jumps::Live), window_cost(ring, shape, window, Jumps::Alone)};
}

bool ring_positions_alike(const RingCollective& ring, std::uint32_t c, std::uint32_t p, std::uint32_t q) {
  const RingChannel& plan = ring.channel_plan(c);
  return ring.step_delay(c, p) == ring.step_delay(c, q) &&
         same_route_timing(plan.routes[p], plan.routes[q], ring.network().links());
}

std::uint32_t ring_plan_period(const RingCollective& ring, std::uint32_t c) {
  return smallest_period(
      ring.ranks(), [&](std::uint32_t p, std::uint32_t q) { return ring_positions_alike(ring, c, p, q); });
}

bool ring_edges_share_a_link(const RingCollective& ring) {
  // Sorted, not marked in a table of the network's links: a step asks this of each of its rings
  // (thousands of tensor-parallel rings in a cluster of hundreds of thousands of links).
  std::vector<LinkId> used;
  for (std::uint32_t c = 0; c < ring.channel_count(); ++c)
    for (const auto& route : ring.channel_plan(c).routes) used.insert(used.end(), route.begin(), route.end());
  std::sort(used.begin(), used.end());
  return std::adjacent_find(used.begin(), used.end()) != used.end();
}

bool same_ring_routes(const RingCollective& a, const RingCollective& b) {
  if (a.ranks() != b.ranks() || a.channel_count() != b.channel_count()) return false;
  for (std::uint32_t c = 0; c < a.channel_count(); ++c)
    if (a.channel_plan(c).routes != b.channel_plan(c).routes) return false;
  return true;
}

}  // namespace hybridsim::sim

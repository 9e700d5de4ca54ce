// The expected cost of a folded ring's models (sim/fast/fold_cost.h): counts from the plan, no
// event run. The per-message events are full_cost()'s (one per link entered, one delivery).
#include "sim/fast/fold_cost.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "sim/fast/folded_ring.h"
#include "sim/fast/ring_jump.h"

namespace hybridsim::sim {

std::uint32_t ring_slow_edge_gap(const RingCollective& ring, std::uint32_t c, std::uint32_t window) {
  // A position's edge is as slow as its route's narrowest link; the slowest edges of the window are
  // where the leads stop growing (tests/unit/sim_ring_jump_test.cpp's grid: one per window).
  const RingChannel& plan = ring.channel_plan(c);
  const std::uint32_t w = std::min<std::uint32_t>(window, static_cast<std::uint32_t>(plan.routes.size()));
  if (w == 0) return 1;
  const LinkTable& links = ring.network().links();
  std::vector<Bandwidth> narrowest(w);
  for (std::uint32_t p = 0; p < w; ++p) {
    narrowest[p] = Bandwidth::bytes_per_second(std::numeric_limits<std::int64_t>::max());
    for (const LinkId l : plan.routes[p]) narrowest[p] = std::min(narrowest[p], links[l].bandwidth);
  }
  const Bandwidth slowest = *std::min_element(narrowest.begin(), narrowest.end());
  std::uint32_t gap = 0, first = w, last = 0;
  for (std::uint32_t p = 0; p < w; ++p) {
    if (narrowest[p] != slowest) continue;
    if (first == w) first = p;
    else gap = std::max(gap, p - last);
    last = p;
  }
  return std::max(gap, w - last + first);  // the gap around the window's end, which wraps
}

std::uint64_t ring_steps_simulated(const RingCollective& ring, std::uint32_t c, std::uint32_t window,
                                   Jumps alone) {
  const std::uint64_t steps = ring.steps();
  // RingJump::applies(), as far as the plan tells it (observers are not set when estimating), of
  // the model that runs: one of fewer positions than the ring runs all its chunks at one size (the
  // larger, then the smaller: FoldedRing::run_channel, EmbeddedRing's segments and ghosts), so it
  // jumps whatever the ring's chunks. Asking the ring's chunks alone counted every step of the
  // 16,384-GPU DGX-1 step's bounded rings (225.5 M events estimated, 1.27 M run). A model of every
  // position (a ring whose positions repeat no pattern: FoldedRing::run_channel) is counted at
  // every step, jump or not: it is outside the fit below, and may jump far less. BigLSTM's
  // all-gathers over 33 DGX-1 (264 GPUs; their rings through 33 machines repeat nothing) jumped 28
  // of their 263 steps a channel where the fit counted 38 run one by one (2.4 M events estimated for
  // 14.7 M run); counted at every step, at most the steps it jumps (11% there) too many.
  const bool jumps = alone == Jumps::Alone && steps >= kRingJumpMinSteps &&
                     ring.op() != CollectiveOp::Broadcast && window < ring.ranks() &&
                     ring.config().observer == nullptr;
  if (!jumps) return steps;
  // What RingJump (sim/fast/ring_jump.cpp) runs one by one per phase, in L = the longest run of
  // positions between two of the window's slowest edges (ring_slow_edge_gap), not the window: a
  // snapshot repeats once each position's lead over position 0 has stopped growing, and the leads
  // grow only across the faster edges between two slowest ones (GNMT's dp 64 rings on 8 DGX-1: a
  // window of 32, L = 8, leads of 3, periods of 1 or 8 steps).
  // - the first phase: the leads settle from a start where every position joined at once, the
  //   period is seen again, then after the jump the steps left before the phase's boundary (a period
  //   and the largest lead) run one by one: at most 4.5 L + 2 on the grid of
  //   tests/unit/sim_ring_jump_test.cpp (L = 16: 70; 8: 36; 4: 19; 2: 11; 1: 6, eight messages a
  //   chunk) and on every shipped scenario;
  // - the second phase of an all-reduce starts from leads already settled: at most 2 L + 2 (the
  //   shipped DGX-1 rings' 15 steps of 54 at L = 8; the grid's up to 13 at 16, 5 at 4 and 2).
  // An estimate fitted to that grid and those scenarios, not a bound: within 1.6x of the steps run
  // on both (the test holds it never under).
  const bool two_phases = ring.reduce_steps() > 0 && ring.reduce_steps() < ring.steps();
  const std::uint64_t l = ring_slow_edge_gap(ring, c, window);
  const std::uint64_t first = (9 * l + 1) / 2 + 2;
  return std::min(steps, first + (two_phases ? 2 * l + 2 : 0));
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

SimulationCost window_cost(const RingCollective& ring, std::uint32_t c, const WindowShape& shape,
                           std::uint32_t window, Jumps jumps) {
  const std::uint64_t per_edge = ring_steps_simulated(ring, c, window, jumps) * ring.messages_per_chunk();
  SimulationCost cost;
  cost.messages = per_edge * shape.positions;
  cost.events = per_edge * shape.events;
  cost.in_flight = ring.messages_per_chunk() * shape.positions;
  return cost;
}

}  // namespace

SimulationCost ring_window_cost(const RingCollective& ring, std::uint32_t c, std::uint32_t window,
                                Jumps jumps) {
  return window_cost(ring, c, window_shape(ring, c, window), window, jumps);
}

WindowCosts ring_window_costs(const RingCollective& ring, std::uint32_t c, std::uint32_t window) {
  const WindowShape shape = window_shape(ring, c, window);
  return {window_cost(ring, c, shape, window, Jumps::Live),
          window_cost(ring, c, shape, window, Jumps::Alone)};
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

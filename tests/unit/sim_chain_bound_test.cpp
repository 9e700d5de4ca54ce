// sim::CollectiveChain's bound (sim/collective_chain.h): a rank goes through the phases one after
// another, each part of a phase beside the others. A phase's parts are late by at most the largest of
// their bounds, and each phase joins as the one before ends, so the chain's bound is its phases'
// largest bounds added up (review of 2026-12-07: every part's added, a 512-GPU hierarchical step
// stated 60.2 ns where its phases' largest added give 7.53 ns; before that, the largest part's alone,
// which a later phase may pass).
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "sim/collective_chain.h"
#include "sim/fast/fast_path.h"
#include "sim/network.h"
#include "tests/unit/coupled_rings.h"

using namespace hybridsim::sim;
using namespace hybridsim::testing;

namespace {

CollectiveConfig bounded() { return {.message_size = Bytes::kib(64), .fast_path = FastPath::Bounded}; }

// Runs `c` with every rank joining at 0; its path.
SimulationPath run(EventQueue& q, Collective& c) {
  std::vector<RankStarter> starters(1);
  starters[0].collective = &c;
  for (std::uint32_t r = 0; r < c.ranks(); ++r) q.schedule_at(Time::zero(), starters[0], r);
  q.run();
  REQUIRE(c.is_done());
  return c.simulation_path();
}

// Two rings of 64 machines on links of their own (uplinks alternating 12.5 and 10 GB/s), and the
// sizes of their all-reduces: chunks of unequal size fold within a bound.
struct TwoRings {
  LinkTable links;
  std::vector<RingChannel> a, b;
  TwoRings() {
    a.push_back(machine_ring(links, 64, [&](std::uint32_t p) { return add_uplink(links, p); }));
    b.push_back(machine_ring(links, 64, [&](std::uint32_t p) { return add_uplink(links, p); }));
  }
};

std::vector<std::uint32_t> ranks_from(std::uint32_t first, std::uint32_t n) {
  std::vector<std::uint32_t> r(n);
  for (std::uint32_t i = 0; i < n; ++i) r[i] = first + i;
  return r;
}

// Ring A's and ring B's all-reduce of `size` each alone, every rank joining at 0: their bounds.
std::vector<Time> alone(const TwoRings& f, Bytes size) {
  std::vector<Time> out;
  for (const auto* channels : {&f.a, &f.b}) {
    EventQueue q;
    Network net(q, f.links);
    const auto ring = make_ring_collective(net, CollectiveOp::AllReduce, 64, *channels, size, bounded());
    const SimulationPath p = run(q, *ring);
    REQUIRE(p.folded);
    REQUIRE(p.bound > Time::zero());
    out.push_back(p.bound);
  }
  return out;
}

}  // namespace

TEST_CASE("collective chain: parts of one phase side by side state the larger bound, not the sum") {
  TwoRings f;
  const Bytes small = Bytes::mib(8) + Bytes::of(1);
  const std::vector<Time> b = alone(f, small);
  MESSAGE("alone: " << b[0].ps() << " ps and " << b[1].ps() << " ps");
  EventQueue q;
  Network net(q, f.links);
  std::vector<std::vector<CollectiveChain::Part>> phases = {
      {{ranks_from(0, 64), CollectiveOp::AllReduce, f.a, small},
       {ranks_from(64, 64), CollectiveOp::AllReduce, f.b, small}}};
  CollectiveChain chain(net, 128, std::move(phases), bounded());
  CHECK(run(q, chain).bound == max(b[0], b[1]));
}

TEST_CASE("collective chain: phases one after another add their bounds") {
  // Ring A's all-reduce, then ring B's over the same ranks once A's is done: each joined as the one
  // before ended, B's ranks may be late by A's bound before B's own.
  TwoRings f;
  const Bytes size = Bytes::mib(8) + Bytes::of(1);
  const std::vector<Time> b = alone(f, size);
  EventQueue q;
  Network net(q, f.links);
  std::vector<std::vector<CollectiveChain::Part>> phases = {
      {{ranks_from(0, 64), CollectiveOp::AllReduce, f.a, size}},
      {{ranks_from(0, 64), CollectiveOp::AllReduce, f.b, size}}};
  CollectiveChain chain(net, 64, std::move(phases), bounded());
  const SimulationPath p = run(q, chain);
  MESSAGE("alone " << b[0].ps() << " ps and " << b[1].ps() << " ps, the chain " << p.bound.ps() << " ps");
  CHECK(p.bound == b[0] + b[1]);  // the largest part's alone was stated before
}

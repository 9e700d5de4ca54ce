// Rings that share links, folded together (sim/fast/ring_embedding.cpp, sim/fast/embedded_ring.cpp):
// two rings whose edges leaving each machine share its uplink must give every rank the finish time
// and every link the counters and busy-until of the same two rings simulated rank by rank; and the
// planner must refuse where the symmetry does not hold.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/fast/embedded_ring.h"
#include "sim/fast/fast_path.h"
#include "sim/fast/ring_embedding.h"
#include "sim/network.h"
#include "tests/unit/fold_outcome.h"

using namespace hybridsim::sim;
using hybridsim::testing::check_same;
using hybridsim::testing::FoldOutcome;
using hybridsim::testing::outcome_of;

namespace {

// M machines, each with one rank of ring A and one of ring B. Each ring's edge out of machine m
// crosses its own PCIe link (25 GB/s), machine m's uplink (12.5 GB/s, which both rings' edges
// share), then its own downlink into the next machine (12.5 GB/s); 500 ns each. Machines of odd
// index have a slower uplink (10 GB/s), so the pattern repeats every two machines. `spine`: every
// edge also crosses one shared spine link (a class of one link: no symmetry to fold over).
struct TwoRings {
  LinkTable links;
  std::vector<RingChannel> a, b;
};

TwoRings make_two_rings(std::uint32_t machines, bool spine = false) {
  TwoRings f;
  const auto bw = [](std::int64_t mbps) { return Bandwidth::bytes_per_second(mbps * 1'000'000); };
  std::vector<LinkId> uplink;
  for (std::uint32_t m = 0; m < machines; ++m)
    uplink.push_back(
        f.links.add({LinkKind::InfiniBand, m % 2 == 0 ? bw(12'500) : bw(10'000), Time::ns(500), "uplink"}));
  const LinkId core = f.links.add({LinkKind::InfiniBand, bw(50'000), Time::ns(500), "spine"});
  for (auto* ring : {&f.a, &f.b}) {
    // Ring B's position p is in machine p + 1: its positions meet A's of the next window on the
    // uplinks, so the links standing for them must be shared across windows, not each one's own.
    const std::uint32_t shift = ring == &f.b ? 1 : 0;
    RingChannel ch;
    for (std::uint32_t p = 0; p < machines; ++p) {
      const std::uint32_t m = (p + shift) % machines;
      ch.order.push_back(p);
      const LinkId out = f.links.add({LinkKind::PCIe, bw(25'000), Time::ns(500), "pcie"});
      const LinkId down = f.links.add({LinkKind::InfiniBand, bw(12'500), Time::ns(500), "downlink"});
      std::vector<LinkId> route = {out, uplink[m]};
      if (spine) route.push_back(core);
      route.push_back(down);
      ch.routes.push_back(std::move(route));
    }
    ring->push_back(std::move(ch));
  }
  return f;
}

struct Outcomes {
  FoldOutcome a, b;
  EmbedPlan plan;
};

// Ring A (of `size_a`) joins at 0, ring B (of `size_b`) at `b_start`, except B's rank `late` (if
// below M) 1 us later still. With `embed`, the planner runs first.
Outcomes run_two(const TwoRings& f, std::uint32_t m, Bytes size_a, Bytes size_b, FastPath mode, bool embed,
                 std::uint32_t late = ~0u, Time b_start = Time::us(3)) {
  EventQueue q;
  Network net(q, f.links);
  const CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = mode};
  std::vector<std::unique_ptr<Collective>> rings;
  rings.push_back(make_ring_collective(net, CollectiveOp::AllReduce, m, f.a, size_a, cfg));
  rings.push_back(make_ring_collective(net, CollectiveOp::AllReduce, m, f.b, size_b, cfg));
  Outcomes out;
  if (embed) out.plan = embed_coupled_rings(rings, net);
  Collective& a = *rings[0];
  Collective& b = *rings[1];
  struct Starter final : EventHandler {
    Collective* ring = nullptr;
    void on_event(std::uint64_t r) override { ring->start(static_cast<std::uint32_t>(r)); }
  } start_a, start_b;
  start_a.ring = &a;
  start_b.ring = &b;
  for (std::uint32_t r = 0; r < m; ++r) {
    q.schedule_at(Time::zero(), start_a, r);
    q.schedule_at(b_start + Time::us(r == late ? 1 : 0), start_b, r);
  }
  q.run();
  REQUIRE(a.is_done());
  REQUIRE(b.is_done());
  if (embed && out.plan.bounded) {
    CHECK(dynamic_cast<EmbeddedRing&>(a).bound_holds());
    CHECK(dynamic_cast<EmbeddedRing&>(b).bound_holds());
  }
  out.a = outcome_of(a, net);
  out.b = outcome_of(b, net);
  return out;
}

}  // namespace

TEST_CASE("embed: two rings sharing every machine's uplink fold together exactly") {
  // 8 machines, a pattern of 2: 4 windows of 2 positions per ring. 8 MiB and 4 MiB: 8 chunks of
  // 1 MiB and 512 KiB, each 16 and 8 messages of 64 KiB.
  const TwoRings f = make_two_rings(8);
  const Outcomes embedded = run_two(f, 8, Bytes::mib(8), Bytes::mib(4), FastPath::Auto, true);
  const Outcomes full = run_two(f, 8, Bytes::mib(8), Bytes::mib(4), FastPath::Off, false);
  CHECK(embedded.plan.rings == 2);
  CHECK_FALSE(embedded.plan.bounded);
  CHECK(embedded.a.path.folded);
  CHECK(embedded.a.path.simulated == 2);
  CHECK(embedded.b.path.simulated == 2);
  CHECK_FALSE(embedded.a.interfered);
  CHECK_FALSE(full.a.interfered);
  check_same(embedded.a, full.a);
  check_same(embedded.b, full.b);
  // Alone, neither would fold: their traffic meets on the uplinks, which the full run shows.
  const Outcomes alone = run_two(f, 8, Bytes::mib(8), Bytes::mib(4), FastPath::Auto, false);
  CHECK(alone.a.interfered);
}

TEST_CASE("embed: chunks of unequal size fold under the bounded fast path, within their bound") {
  // 8 MiB + 3 bytes: the first 3 of ring A's 8 chunks are a byte larger. Under auto that is not
  // exact, so nothing is embedded; under bounded the larger size is simulated, the smaller on a
  // ghost network, and every finish lies within the bound of the full simulation's.
  const TwoRings f = make_two_rings(8);
  const Bytes odd = Bytes::of(Bytes::mib(8).count() + 3);
  CHECK(run_two(f, 8, odd, Bytes::mib(4), FastPath::Auto, true).plan.rings == 0);
  const Outcomes bounded = run_two(f, 8, odd, Bytes::mib(4), FastPath::Bounded, true);
  const Outcomes full = run_two(f, 8, odd, Bytes::mib(4), FastPath::Off, false);
  CHECK(bounded.plan.rings == 2);
  CHECK(bounded.plan.bounded);
  CHECK(bounded.a.path.reason == "bounded: chunks of unequal size");
  const Time bound = max(bounded.a.path.bound, bounded.b.path.bound);
  CHECK(bound > Time::zero());
  for (std::uint32_t r = 0; r < 8; ++r) {
    CAPTURE(r);
    CHECK(bounded.a.finish[r] >= full.a.finish[r] - bound);
    CHECK(bounded.a.finish[r] <= full.a.finish[r] + bound);
    CHECK(bounded.b.finish[r] >= full.b.finish[r] - bound);
    CHECK(bounded.b.finish[r] <= full.b.finish[r] + bound);
  }
  CHECK(bounded.a.bytes == full.a.bytes);
  CHECK(bounded.a.messages == full.a.messages);
}

TEST_CASE("embed: a rank that joins out of step, or a link every window shares, is not folded over") {
  const TwoRings f = make_two_rings(8);
  // B's rank 5 joins 1 us after the rank it would repeat (rank 1): the run says interfered, so the
  // caller simulates again in full.
  const Outcomes late = run_two(f, 8, Bytes::mib(8), Bytes::mib(4), FastPath::Auto, true, 5);
  CHECK(late.plan.rings == 2);
  CHECK(late.b.interfered);
  // One spine link on every edge: the link standing for it would carry one window's traffic
  // instead of all of them, so the planner leaves the rings alone.
  const TwoRings s = make_two_rings(8, true);
  CHECK(run_two(s, 8, Bytes::mib(8), Bytes::mib(4), FastPath::Auto, true).plan.rings == 0);
}

TEST_CASE(
    "embed: messages of two routes arriving at a shared link at the same time mark the network interfered") {
  // Both rings join at 0: on every uplink A's and B's first messages arrive at the same time. The
  // full simulation serves such ties in the order their events were scheduled, which follows rank
  // indices, not windows (on uplink 0, the wrap edge, the order is the other way round), so no
  // window's order stands for all; the run must say so (the caller then simulates in full).
  const TwoRings f = make_two_rings(8);
  const Outcomes tied = run_two(f, 8, Bytes::mib(8), Bytes::mib(8), FastPath::Auto, true, ~0u, Time::zero());
  const Outcomes full = run_two(f, 8, Bytes::mib(8), Bytes::mib(8), FastPath::Off, false, ~0u, Time::zero());
  CHECK(tied.plan.rings == 2);
  CHECK(tied.a.interfered);
  // The full simulation does differ between windows there: A's rank 5 finishes at another time
  // than rank 1, which it would repeat (found by review: 2,930,959,200 against 2,937,512,800 ps).
  CHECK(full.a.finish[5] != full.a.finish[1]);
}

// Two groups of embedded rings on one queue (sim/fast/ring_jump.h, sim/fast/ring_embedding.cpp): as
// in a hybrid dp × mp 2 step on DGX H100, each stage's data-parallel ring is a group of its own
// (its channels share each GPU's one link), and the two never meet. Each group's jumps pass over the
// other's pending events: both running at once must cost about what each costs alone, with every
// rank's finish and every link's counters those of the full simulation; and a message that one of
// the passed events leads to, reaching a link the jumping group shares, before the jump's end, must
// mark the network interfered (its models had already moved past it).
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/fast/embedded_ring.h"
#include "sim/fast/fast_path.h"
#include "sim/fast/link_claims.h"
#include "sim/fast/ring_embedding.h"
#include "sim/network.h"
#include "tests/unit/coupled_rings.h"
#include "tests/unit/fold_outcome.h"

using namespace hybridsim::sim;
using namespace hybridsim::testing;

namespace {

// Rings X and Y over M machines each, on links of their own (machine_ring, tests/unit/coupled_rings.h):
// position p's edge crosses its PCIe link (25 GB/s), machine p's uplink (12.5 GB/s; 10 GB/s at odd
// p, so the pattern repeats every two machines) and the next machine's downlink (12.5 GB/s), 500 ns
// each. Each ring has two channels over the same routes, so its own channels share every link (a
// group of one family).
struct TwoGroups {
  LinkTable links;
  std::vector<RingChannel> x, y;
  LinkId y_uplink = 0;  // Y's uplink of machine 0, which stands for its class
};

TwoGroups make_two_groups(std::uint32_t machines) {
  TwoGroups f;
  for (auto* ring : {&f.x, &f.y}) {
    const auto up = [&](std::uint32_t p) {
      const LinkId l = add_uplink(f.links, p);
      if (ring == &f.y && p == 0) f.y_uplink = l;
      return l;
    };
    ring->assign(2, machine_ring(f.links, machines, up));
  }
  return f;
}

// When X's rank 0 is done, sends one 64 KiB message over Y's uplink of machine 0 (if `poke`).
struct Poke final : EventHandler {
  Network* net = nullptr;
  LinkId link = 0;
  bool poke = false;
  Time at;
  struct Sink final : EventHandler {
    void on_event(std::uint64_t) override {}
  } sink;
  void on_event(std::uint64_t rank) override {
    if (!poke || rank != 0) return;
    at = net->queue().now();
    net->send(Route(&link, 1), Bytes::kib(64), sink, 0);
  }
};

struct Run {
  FoldOutcome x, y;
  std::uint64_t events = 0;
  std::uint32_t embedded = 0;
  Time poked;
};

// X (of `size_x`, if not zero) joins at 0, Y (of `size_y`, if not zero) at 3 us.
Run run(const TwoGroups& f, std::uint32_t m, Bytes size_x, Bytes size_y, FastPath mode, bool poke = false) {
  EventQueue q;
  Network net(q, f.links);
  const CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = mode};
  std::vector<std::unique_ptr<Collective>> rings;
  if (size_x.count() > 0)
    rings.push_back(make_ring_collective(net, CollectiveOp::AllReduce, m, f.x, size_x, cfg));
  if (size_y.count() > 0)
    rings.push_back(make_ring_collective(net, CollectiveOp::AllReduce, m, f.y, size_y, cfg));
  const EmbedPlan plan = embed_coupled_rings(rings, net);
  Poke poker;
  poker.net = &net;
  poker.link = f.y_uplink;
  poker.poke = poke;
  if (poke) {
    LinkClaims::of(net).share(f.y_uplink);  // the models meet other traffic there live
    rings[0]->notify_rank_done(poker, 0);
  }
  std::vector<RankStarter> starters(rings.size());
  for (std::size_t i = 0; i < rings.size(); ++i) {
    starters[i].collective = rings[i].get();
    const bool is_y = size_x.count() == 0 || i == 1;
    for (std::uint32_t r = 0; r < m; ++r) q.schedule_at(is_y ? Time::us(3) : Time::zero(), starters[i], r);
  }
  q.run();
  Run out;
  for (const auto& ring : rings) REQUIRE(ring->is_done());
  out.x = outcome_of(*rings[0], net);
  out.y = outcome_of(*rings.back(), net);
  out.events = q.events_processed();
  out.embedded = plan.rings;
  out.poked = poker.at;
  return out;
}

}  // namespace

TEST_CASE("embed: two groups that never meet jump past each other's events, exactly") {
  // 64 machines: 126 steps per ring. X: 8 MiB over 2 channels, chunks of one 64 KiB message; Y:
  // 16 MiB, two messages a chunk: their periods differ, and they run at once for most of X's time.
  const TwoGroups f = make_two_groups(64);
  const Run both = run(f, 64, Bytes::mib(8), Bytes::mib(16), FastPath::Auto);
  const Run full = run(f, 64, Bytes::mib(8), Bytes::mib(16), FastPath::Off);
  CHECK(both.embedded == 2);
  CHECK_FALSE(both.x.interfered);
  check_same(both.x, full.x);
  check_same(both.y, full.y);
  // They overlap: Y joins 3 us after X, and X runs for longer than that.
  CHECK(full.x.finish[0] > Time::us(3) * 10);
  // Each alone, embedded, and both at once: the events of both are about those of each alone (584
  // against 206 + 378; 169,472 in full). When each group's jumps stopped at the other's pending
  // events, both at once took 4,029.
  const Run x = run(f, 64, Bytes::mib(8), Bytes(), FastPath::Auto);
  const Run y = run(f, 64, Bytes(), Bytes::mib(16), FastPath::Auto);
  CHECK(x.embedded == 1);
  CHECK(both.events <= (x.events + y.events) * 11 / 10);
  CHECK(both.events * 4 < full.events);
}

TEST_CASE("embed: what a passed-over event leads to, on a shared link within a jump, interferes") {
  // X's rank 0, done, sends a message over Y's uplink of machine 0 (shared: Y's models meet other
  // traffic there live), while Y's models have jumped past that time: the run must say so.
  const TwoGroups f = make_two_groups(64);
  const Run poked = run(f, 64, Bytes::mib(8), Bytes::mib(64), FastPath::Auto, true);
  CHECK(poked.poked > Time::zero());
  CHECK(poked.poked < poked.y.finish[0]);
  CHECK(poked.y.interfered);
}

TEST_CASE("link claims: another party's message on a claimed link is remembered for the jumps' periods") {
  // A jump repeats the last period only if nothing else met the models over it: a message of
  // another party that came and went within it leaves no pending event, so the ledger says so.
  LinkTable links;
  const LinkId l =
      links.add({LinkKind::PCIe, Bandwidth::bytes_per_second(1'000'000'000), Time::ns(500), "pcie"});
  EventQueue q;
  Network net(q, links);
  LinkClaims& claims = LinkClaims::of(net);
  Poke::Sink holder, sink;
  claims.claim(l, &holder);
  claims.share(l);
  CHECK_FALSE(claims.met_since({l}, Time::zero()));
  net.send_at(Time::us(2), Route(&l, 1), Bytes::kib(1), sink, 0);
  q.run();
  CHECK_FALSE(claims.interfered());  // shared: met live
  CHECK(claims.met_since({l}, Time::us(2)));
  CHECK(claims.met_since({l}, Time::us(1)));
  CHECK_FALSE(claims.met_since({l}, Time::us(2) + Time::ps(1)));
}

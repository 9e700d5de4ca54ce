// Folding a ring collective onto representative ranks (sim/fast/folded_ring.cpp, built by the factory
// sim/fast/fast_path.h): the folded run must give every rank the finish time, every link the
// counters and the collective the byte breakdown of the same ring simulated rank by rank (fast path
// off), and refuse where that would not hold.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/fast/fast_path.h"
#include "sim/fast/folded_ring.h"
#include "sim/fast/link_claims.h"
#include "sim/fast/unfolded_reason.h"
#include "sim/network.h"
#include "sim/ring_collective.h"
#include "tests/unit/fold_outcome.h"

using namespace hybridsim::sim;
using hybridsim::testing::check_same;
using hybridsim::testing::FoldOutcome;

namespace {

// A ring of n ranks whose edge p is its own link: kind and bandwidth repeat with period `period`
// (edges p ≡ 0 mod period are InfiniBand at 12.5 GB/s, the others NVLink at 25 GB/s), 500 ns each.
struct RingFabric {
  LinkTable links;
  std::vector<RingChannel> channels;
};

RingFabric make_ring(std::uint32_t n, std::uint32_t period, std::uint32_t channel_count = 1) {
  RingFabric f;
  for (std::uint32_t c = 0; c < channel_count; ++c) {
    RingChannel ch;
    for (std::uint32_t p = 0; p < n; ++p) {
      // Channel 1 runs the ring the other way round (as NCCL's second ring often does).
      ch.order.push_back(c % 2 == 0 ? p : (n - p) % n);
      const bool network = p % period == 0 && period > 1;
      const LinkId l =
          f.links.add({network ? LinkKind::InfiniBand : LinkKind::NVLink,
                       network ? Bandwidth::bytes_per_second(12'500'000'000) : Bandwidth::gb_per_second(25),
                       Time::ns(500), "edge"});
      ch.routes.push_back({l});
    }
    f.channels.push_back(std::move(ch));
  }
  return f;
}

// Runs the ring with every rank joining at start[r] (all at 0 when empty).
FoldOutcome run(const RingFabric& f, std::uint32_t n, Bytes size, FastPath mode,
                CollectiveOp op = CollectiveOp::AllReduce, std::vector<Time> start = {}) {
  EventQueue q;
  Network net(q, f.links);
  CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = mode};
  const std::unique_ptr<Collective> made = make_ring_collective(net, op, n, f.channels, size, cfg);
  Collective& ring = *made;
  struct Starter final : EventHandler {
    Collective* ring = nullptr;
    void on_event(std::uint64_t r) override { ring->start(static_cast<std::uint32_t>(r)); }
  } starter;
  starter.ring = &ring;
  if (start.empty()) start.assign(n, Time::zero());
  for (std::uint32_t r = 0; r < n; ++r) q.schedule_at(start[r], starter, r);
  q.run();
  REQUIRE(ring.is_done());
  return hybridsim::testing::outcome_of(ring, net);
}

}  // namespace

TEST_CASE("fold: a uniform ring simulates one position and matches the full ring exactly") {
  // 64 ranks, 64 MiB: 1 MiB chunks of 16 messages of 64 KiB; every edge alike (NVLink 25 GB/s).
  const auto f = make_ring(64, 1);
  const FoldOutcome folded = run(f, 64, Bytes::mib(64), FastPath::Auto);
  const FoldOutcome full = run(f, 64, Bytes::mib(64), FastPath::Off);
  CHECK(folded.path.folded);
  CHECK(folded.path.simulated == 1);
  CHECK(folded.path.ranks == 64);
  CHECK_FALSE(full.path.folded);
  CHECK(full.path.reason == "fast path off");
  check_same(folded, full);
  // Each link carries 2(N−1) chunks of 1 MiB: 126 MiB, in 126 × 16 messages.
  CHECK(full.links[0].bytes == Bytes::mib(126));
  CHECK(full.messages == 64ULL * 126 * 16);
  // Link 0 is busy at least 126 × 16 messages × τ (τ = 65536 B / 25 GB/s = 2.62144 us).
  CHECK(full.links[0].busy >= Time::ps(126LL * 16 * 2'621'440));
}

TEST_CASE("fold: machines of 8 (one network edge in eight) and two channels fold with period 8") {
  const auto f = make_ring(64, 8, 2);
  const FoldOutcome folded = run(f, 64, Bytes::mib(32), FastPath::Auto);
  const FoldOutcome full = run(f, 64, Bytes::mib(32), FastPath::Off);
  CHECK(folded.path.folded);
  CHECK(folded.path.simulated == 8);
  check_same(folded, full);
  // Its models' messages, on networks of their own, which the ring's never sees (issue 31: a step's
  // memory held counted its own network's only): every rank joins at 0, so position p's timeline is
  // position p mod 8's on either channel, and at every moment the full ring holds 8 × 2 times what
  // the model of one channel's 8 positions holds (channels run one after another): its most, too.
  CHECK(folded.most_in_flight == 0);
  CHECK(full.path.model_in_flight == 0);  // no model
  CHECK(full.most_in_flight > 0);
  CHECK(folded.path.model_in_flight * 8 * 2 == full.most_in_flight);
  for (const auto op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    CAPTURE(static_cast<int>(op));
    check_same(run(f, 64, Bytes::mib(32), FastPath::Auto, op), run(f, 64, Bytes::mib(32), FastPath::Off, op));
  }
}

TEST_CASE("fold: join times that repeat with the pattern fold, others are simulated in full, still exactly") {
  const auto f = make_ring(32, 4);
  std::vector<Time> periodic, irregular;
  for (std::uint32_t r = 0; r < 32; ++r) {
    periodic.push_back(Time::us(r % 4));  // rank r joins r mod 4 us late: repeats every 4 ranks
    irregular.push_back(Time::ns(r * 37));
  }
  const FoldOutcome a = run(f, 32, Bytes::mib(8), FastPath::Auto, CollectiveOp::AllReduce, periodic);
  CHECK(a.path.folded);
  CHECK(a.path.simulated == 4);
  check_same(a, run(f, 32, Bytes::mib(8), FastPath::Off, CollectiveOp::AllReduce, periodic));
  const FoldOutcome b = run(f, 32, Bytes::mib(8), FastPath::Auto, CollectiveOp::AllReduce, irregular);
  CHECK_FALSE(b.path.folded);
  CHECK(b.path.reason == "no repeating pattern of ring edges and join times");
  check_same(b, run(f, 32, Bytes::mib(8), FastPath::Off, CollectiveOp::AllReduce, irregular));
}

TEST_CASE("fold: chunks of unequal size are exact in auto (in full) and bounded within 0.1% in bounded") {
  // 8 MiB + 40 B over 32 ranks: 8 of the 32 chunks are one byte larger.
  const auto f = make_ring(32, 1);
  const Bytes size = Bytes::of(8 * 1024 * 1024 + 40);
  const FoldOutcome full = run(f, 32, size, FastPath::Off);
  const FoldOutcome a = run(f, 32, size, FastPath::Auto);
  CHECK_FALSE(a.path.folded);
  CHECK(a.path.reason == "chunks of unequal size change its timing");
  check_same(a, full);
  const FoldOutcome b = run(f, 32, size, FastPath::Bounded);
  CHECK(b.path.folded);
  CHECK(b.path.bound > Time::zero());
  // Auto says what bounded would have folded it within (sim/README.md, "Folding"): the same bound.
  CHECK(a.path.bound == b.path.bound);
  CHECK(unfolded_reason(a.path) ==
        "chunks of unequal size change its timing (fast_path: bounded would fold it within " +
            human_time(b.path.bound) + ")");
  // The bounded fold reports the upper bound: never early, at most its bound late, and the bound
  // within 0.1% of the collective; bytes and messages stay exact.
  for (std::size_t r = 0; r < full.finish.size(); ++r) {
    CHECK(b.finish[r] >= full.finish[r]);
    CHECK(b.finish[r] - full.finish[r] <= b.path.bound);
  }
  CHECK(b.path.bound.ps() * 1000 <= full.finish[0].ps());
  CHECK(b.bytes == full.bytes);
  CHECK(b.messages == full.messages);
}

TEST_CASE("fold: two ring edges on one link, a broadcast and a single rank are simulated in full") {
  RingFabric f = make_ring(8, 1);
  f.channels[0].routes[3] = f.channels[0].routes[2];  // edges 2 and 3 share link 2
  const FoldOutcome shared = run(f, 8, Bytes::mib(1), FastPath::Auto);
  CHECK_FALSE(shared.path.folded);
  CHECK(shared.path.reason == "two ring edges share a link");
  check_same(shared, run(f, 8, Bytes::mib(1), FastPath::Off));
  const auto g = make_ring(8, 1);
  const FoldOutcome b = run(g, 8, Bytes::mib(1), FastPath::Auto, CollectiveOp::Broadcast);
  CHECK(b.path.reason == "a broadcast (its root breaks the symmetry)");
}

TEST_CASE("fold: another message crossing a folded ring's link marks the network interfered") {
  const auto f = make_ring(16, 1);
  EventQueue q;
  Network net(q, f.links);
  const std::unique_ptr<Collective> made = make_ring_collective(
      net, CollectiveOp::AllReduce, 16, f.channels, Bytes::mib(16), {.message_size = Bytes::kib(64)});
  Collective& ring = *made;
  struct Sink final : EventHandler {
    void on_event(std::uint64_t) override {}
  } sink;
  ring.start_all();
  CHECK(ring.simulation_path().folded);
  CHECK_FALSE(interfered(net));
  // 1 us later, while the ring (about 2 × 15 × 16 × 2.6 us) still runs, a copy crosses edge 5.
  const std::vector<LinkId> route = {f.channels[0].routes[5][0]};
  q.run_until(Time::us(1));
  net.send(route, Bytes::kib(4), sink, 0);
  q.run();
  CHECK(interfered(net));
  // After the ring is done its links are free again: a second copy interferes with nothing.
  Network net2(q, f.links);
  net2.send(route, Bytes::kib(4), sink, 0);
  q.run();
  CHECK_FALSE(interfered(net2));
}

namespace {

// Two all-reduces on one ring, as two gradient buckets on one NCCL stream: rank r joins the second
// when it is done with the first. The ranks of the first join at (r mod 4) us, so they finish at
// different times and the second's first ranks join while the first still holds links elsewhere.
struct Buckets {
  std::vector<Time> finish_a, finish_b;
  std::vector<LinkCounters> links;
  SimulationPath path_a, path_b;
  bool interfered = false;
};

Buckets run_buckets(const RingFabric& f, std::uint32_t n, FastPath mode) {
  EventQueue q;
  Network net(q, f.links);
  CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = mode};
  const std::unique_ptr<Collective> made_a =
      make_ring_collective(net, CollectiveOp::AllReduce, n, f.channels, Bytes::mib(4), cfg);
  const std::unique_ptr<Collective> made_b =
      make_ring_collective(net, CollectiveOp::AllReduce, n, f.channels, Bytes::mib(4), cfg);
  Collective& a = *made_a;
  Collective& b = *made_b;
  struct Starter final : EventHandler {
    Collective* next = nullptr;
    void on_event(std::uint64_t r) override { next->start(static_cast<std::uint32_t>(r)); }
  } start_a, start_b;
  start_a.next = &a;
  start_b.next = &b;
  a.notify_rank_done(start_b, 0);
  for (std::uint32_t r = 0; r < n; ++r) q.schedule_at(Time::us(r % 4), start_a, r);
  q.run();
  REQUIRE(a.is_done());
  REQUIRE(b.is_done());
  Buckets out;
  for (std::uint32_t r = 0; r < n; ++r) {
    out.finish_a.push_back(a.rank_finish_time(r));
    out.finish_b.push_back(b.rank_finish_time(r));
  }
  for (LinkId l = 0; l < f.links.size(); ++l) out.links.push_back(net.counters(l));
  out.path_a = a.simulation_path();
  out.path_b = b.simulation_path();
  out.interfered = interfered(net);
  return out;
}

}  // namespace

TEST_CASE("fold: the next bucket on the same ring is promised its links and folds, exactly") {
  const auto f = make_ring(16, 4, 2);
  const Buckets full = run_buckets(f, 16, FastPath::Off);
  const Buckets folded = run_buckets(f, 16, FastPath::Auto);
  CHECK(folded.path_a.folded);
  CHECK(folded.path_b.folded);  // its first ranks joined while the first bucket held other links
  CHECK_FALSE(folded.interfered);
  // The first bucket's ranks finish at different times: the hand-over was needed.
  CHECK(*std::min_element(full.finish_a.begin(), full.finish_a.end()) <
        *std::max_element(full.finish_a.begin(), full.finish_a.end()));
  for (std::uint32_t r = 0; r < 16; ++r) {
    CAPTURE(r);
    CHECK(folded.finish_a[r] == full.finish_a[r]);
    CHECK(folded.finish_b[r] == full.finish_b[r]);
  }
  for (std::size_t l = 0; l < full.links.size(); ++l) {
    CAPTURE(l);
    CHECK(folded.links[l].bytes == full.links[l].bytes);
    CHECK(folded.links[l].busy == full.links[l].busy);
    CHECK(folded.links[l].messages == full.links[l].messages);
  }
}

TEST_CASE("fold: a ring of the same routes takes an earlier ring's answer on shared edges, others ask") {
  // A step's buckets over one member set are rings of one plan; the step asks each in turn whether
  // two of its edges share a link (analysis/step/attempt_fold_check.cpp), and each takes the answer of
  // the ring before it where their routes are the same, whatever their ranks' order.
  RingFabric f = make_ring(8, 1);
  f.channels[0].routes[3] = f.channels[0].routes[2];  // edges 2 and 3 share link 2
  EventQueue q;
  Network net(q, f.links);
  const CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = FastPath::Auto};
  FoldedRing first(net, CollectiveOp::AllReduce, 8, f.channels, Bytes::mib(1), cfg);
  FoldedRing same(net, CollectiveOp::AllReduce, 8, f.channels, Bytes::mib(2), cfg);
  CHECK_FALSE(same.share_edge_answer(first));  // `first` has not been asked yet: nothing to take
  REQUIRE(first.plan_only_refusal() != nullptr);
  CHECK(std::string(first.plan_only_refusal()) == "two ring edges share a link");
  std::vector<RingChannel> reordered = f.channels;
  std::reverse(reordered[0].order.begin(), reordered[0].order.end());
  FoldedRing other_order(net, CollectiveOp::AllReduce, 8, reordered, Bytes::mib(1), cfg);
  CHECK(same.share_edge_answer(first));
  CHECK(other_order.share_edge_answer(first));
  CHECK_FALSE(same.share_edge_answer(first));  // it has its answer already
  CHECK(std::string(same.plan_only_refusal()) == "two ring edges share a link");
  CHECK(std::string(other_order.plan_only_refusal()) == "two ring edges share a link");
  // Other routes (each edge its own link): not taken; asked, the ring may fold.
  const RingFabric g = make_ring(8, 1);
  FoldedRing apart(net, CollectiveOp::AllReduce, 8, g.channels, Bytes::mib(1), cfg);
  CHECK_FALSE(apart.share_edge_answer(first));
  CHECK(apart.plan_only_refusal() == nullptr);
}

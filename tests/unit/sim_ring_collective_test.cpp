// Ring collectives on an idealized uniform ring, checked against the closed form the model implies
// (derived in sim/README.md) and against the classic 2(N−1)·α + 2·((N−1)/N)·S/B, which the model
// meets only where pipelining hides no latency (see the first test). Times are compared exactly
// (integer picoseconds) or relatively: doctest's Approx needs .scale(0) for that, as its default
// scale of 1 turns epsilon into an absolute tolerance in seconds.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "sim/fast/fast_path.h"
#include "sim/fast/link_claims.h"
#include "sim/ring_collective.h"

using namespace hybridsim::sim;

namespace {

// N GPUs on a bidirectional ring: link g is g→g+1, link N+g is g+1→g.
struct IdealRing {
  LinkTable links;
  std::uint32_t n;
  IdealRing(std::uint32_t gpus, Bandwidth bw, Time latency) : n(gpus) {
    for (std::uint32_t g = 0; g < n; ++g) links.add({LinkKind::Generic, bw, latency, "fwd"});
    for (std::uint32_t g = 0; g < n; ++g) links.add({LinkKind::Generic, bw, latency, "back"});
  }
  RingChannel forward() const {
    RingChannel ch;
    for (std::uint32_t p = 0; p < n; ++p) {
      ch.order.push_back(p);
      ch.routes.push_back({p});
    }
    return ch;
  }
  RingChannel backward() const {
    RingChannel ch;
    for (std::uint32_t p = 0; p < n; ++p) {
      const std::uint32_t g = (n - p) % n;  // order 0, N-1, N-2, ...
      ch.order.push_back(g);
      const std::uint32_t next = (g + n - 1) % n;  // link from g to g-1 is N + (g-1)
      ch.routes.push_back({n + next});
    }
    return ch;
  }
};

Time run_collective(IdealRing& ring, CollectiveOp op, std::vector<RingChannel> channels, Bytes size,
                    CollectiveConfig config, std::uint64_t* messages = nullptr) {
  EventQueue queue;
  Network network(queue, ring.links);
  RingCollective coll(network, op, ring.n, std::move(channels), size, config);
  coll.start_all();
  queue.run();
  CHECK(coll.is_done());
  if (messages) *messages = coll.messages_sent();
  return coll.finish_time();
}

// The model's closed form for one channel, no reduction cost, m messages of τ each per chunk:
// every link carries 2(N−1)·m messages back to back unless a step must wait for its predecessor's
// first message (period τ+α), so T = (2(N−1)−1)·max(m·τ, τ+α) + m·τ + α.
Time closed_form_allreduce(std::int64_t n, std::int64_t m, Time tau, Time alpha) {
  const Time period = max(tau * m, tau + alpha);
  return period * (2 * (n - 1) - 1) + tau * m + alpha;
}

double classic_allreduce_seconds(double n, double bytes, double bw, double alpha_s) {
  return 2 * (n - 1) * alpha_s + 2 * ((n - 1) / n) * bytes / bw;
}

}  // namespace

TEST_CASE(
    "ring all-reduce matches the closed form, the classic formula where no latency is hidden") {
  const Bandwidth bw = Bandwidth::gb_per_second(50);
  const Time alpha = Time::ns(500);
  CollectiveConfig config;
  config.message_size = Bytes::kib(256);
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);  // isolate the network term
  const Time tau = transfer_time(config.message_size, bw);
  REQUIRE(tau == Time::ps(5'242'880));  // 256 KiB / 50 GB/s, exact: no rounding below
  for (std::uint32_t n : {2u, 8u, 64u, 512u}) {
    for (std::int64_t m : {1, 4, 16}) {
      CAPTURE(n);
      CAPTURE(m);
      IdealRing ring(n, bw, alpha);
      const Bytes size = Bytes::of(config.message_size.count() * m * n);
      std::uint64_t messages = 0;
      const Time t = run_collective(ring, CollectiveOp::AllReduce, {ring.forward()}, size, config,
                                    &messages);
      CHECK(messages == static_cast<std::uint64_t>(2 * (n - 1) * m * n));
      CHECK(t == closed_form_allreduce(n, m, tau, alpha));

      // The classic formula 2(N−1)·(α + S/(N·B)), with S/(N·B) = m·τ here, in exact picoseconds and
      // as the usual floating-point expression (the same number).
      const Time classic = (alpha + tau * m) * (2 * (static_cast<std::int64_t>(n) - 1));
      const double classic_s = classic_allreduce_seconds(n, static_cast<double>(size.count()),
                                                         static_cast<double>(bw.bytes_per_second()),
                                                         alpha.to_seconds());
      CHECK(classic_s == doctest::Approx(classic.to_seconds()).scale(0).epsilon(1e-12));
      // With one message per chunk every step waits for the previous one: T is the classic time.
      // With m·τ ≥ τ + α (all m > 1 here) the links stream back to back and only one latency is
      // exposed, T = 2(N−1)·m·τ + α: (2N−3)·α below the classic formula, a relative gap of
      // (2N−3)·α / (2(N−1)·(α + m·τ)), from half of α / (α + m·τ) (N = 2) to just under it.
      const Time hidden = m == 1 ? Time::zero() : alpha * (2 * static_cast<std::int64_t>(n) - 3);
      CHECK(classic - t == hidden);
      const double gap = (classic_s - t.to_seconds()) / classic_s;
      const double bound = alpha.to_seconds() / (alpha + tau * m).to_seconds();
      const double expected_gap = m == 1 ? 0.0
                                         : static_cast<double>(2 * n - 3) * alpha.to_seconds() /
                                               (static_cast<double>(2 * (n - 1)) *
                                                (alpha + tau * m).to_seconds());
      CHECK(std::abs(gap - expected_gap) < 1e-12);
      if (m == 1 || bound < 0.01) {
        // Within 1% of the classic formula (equal for m = 1; 0.3% to 0.6% below it for m = 16).
        CHECK(std::abs(gap) < 0.01);
      } else {
        // m = 4: α/(α + m·τ) = 2.3%, and the simulated time is 1.16% (N = 2) to 2.33% (N = 512)
        // below the classic formula, not within 1% of it.
        CHECK(gap > 0.01);
        CHECK(gap < bound);
      }
    }
  }
}

TEST_CASE("two channels in opposite directions halve the bandwidth term") {
  const Bandwidth bw = Bandwidth::gb_per_second(25);
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  const Time alpha = Time::ns(100);
  IdealRing ring(8, bw, alpha);
  const Bytes size = Bytes::mib(64);
  const Time one = run_collective(ring, CollectiveOp::AllReduce, {ring.forward()}, size, config);
  const Time two = run_collective(ring, CollectiveOp::AllReduce, {ring.forward(), ring.backward()},
                                  size, config);
  // 64 MiB over 8 ranks: one channel has chunks of 8 MiB = 16 messages of 512 KiB, two channels
  // (on disjoint links) chunks of 4 MiB = 8 messages, so latency hides: T = 2(N−1)·m·τ + α, and
  // the second channel halves everything but the one exposed latency.
  const Time tau = transfer_time(Bytes::kib(512), bw);
  CHECK(one == closed_form_allreduce(8, 16, tau, alpha));
  CHECK(two == closed_form_allreduce(8, 8, tau, alpha));
  CHECK(two * 2 - alpha == one);
  CHECK(two.to_seconds() == doctest::Approx(one.to_seconds() / 2).scale(0).epsilon(1e-4));
  // Two channels in the same direction share each link: no faster than one.
  const Time same = run_collective(ring, CollectiveOp::AllReduce, {ring.forward(), ring.forward()},
                                   size, config);
  CHECK(same >= one);
}

TEST_CASE("busbw tends to the link bandwidth for large sizes and to zero for tiny ones") {
  const Bandwidth bw = Bandwidth::gb_per_second(25);
  CollectiveConfig config;
  IdealRing ring(8, bw, Time::us(2));
  auto busbw = [&](Bytes size) {
    const Time t = run_collective(ring, CollectiveOp::AllReduce, {ring.forward()}, size, config);
    return static_cast<double>(size.count()) / t.to_seconds() * bus_factor(CollectiveOp::AllReduce, 8);
  };
  const double large = busbw(Bytes::gib(1));
  CHECK(large < 25e9);
  CHECK(large > 0.9 * 25e9);
  CHECK(busbw(Bytes::of(1024)) < 0.01 * 25e9);
}

TEST_CASE("reduction cost slows the reduce-scatter half only") {
  const Bandwidth bw = Bandwidth::gb_per_second(25);
  IdealRing ring(4, bw, Time::ns(100));
  CollectiveConfig off;
  off.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  CollectiveConfig on;  // default: 225 GB/s effective
  const Bytes size = Bytes::of(4 * 512 * 1024);  // one message per chunk
  const Time t_off = run_collective(ring, CollectiveOp::AllReduce, {ring.forward()}, size, off);
  const Time t_on = run_collective(ring, CollectiveOp::AllReduce, {ring.forward()}, size, on);
  // With one message per chunk every step waits for the previous; N−1 = 3 reductions lie on the
  // critical path, each 512 KiB / 225 GB/s.
  CHECK(t_on - t_off == transfer_time(Bytes::kib(512), on.reduction_bandwidth) * 3);
  const Time ag_off = run_collective(ring, CollectiveOp::AllGather, {ring.forward()}, size, off);
  const Time ag_on = run_collective(ring, CollectiveOp::AllGather, {ring.forward()}, size, on);
  CHECK(ag_off == ag_on);
}

TEST_CASE("reduce-scatter plus all-gather takes as long as all-reduce") {
  const Bandwidth bw = Bandwidth::gb_per_second(25);
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  IdealRing ring(8, bw, Time::us(1));
  const Bytes size = Bytes::of(8 * 512 * 1024);  // one message per chunk: steps do not overlap
  const Time ar = run_collective(ring, CollectiveOp::AllReduce, {ring.forward()}, size, config);
  const Time rs = run_collective(ring, CollectiveOp::ReduceScatter, {ring.forward()}, size, config);
  const Time ag = run_collective(ring, CollectiveOp::AllGather, {ring.forward()}, size, config);
  CHECK(rs == ag);
  CHECK(rs + ag == ar);
}

TEST_CASE("pipelined broadcast along the ring") {
  const Bandwidth bw = Bandwidth::gb_per_second(25);
  const Time alpha = Time::us(1);
  CollectiveConfig config;
  IdealRing ring(4, bw, alpha);
  const std::int64_t m = 8;
  const Bytes size = Bytes::of(512 * 1024 * m);
  const Time tau = transfer_time(Bytes::kib(512), bw);
  const Time t = run_collective(ring, CollectiveOp::Broadcast, {ring.forward()}, size, config);
  // The root streams m messages; each of the N−1 = 3 hops adds one message time and one latency
  // (the next rank forwards message j as soon as it arrived): T = m·τ + 2·(τ + α) + α.
  CHECK(t == tau * m + (tau + alpha) * 2 + alpha);
}

TEST_CASE(
    "point-to-point send/recv: a broadcast over two ranks streams its messages over one link") {
  // 12 GB/s does not divide 10^12 ps/s evenly, so every message time is rounded up.
  const Bandwidth bw = Bandwidth::gb_per_second(12);
  const Time alpha = Time::us(1);
  CollectiveConfig config;  // default 512 KiB messages; reduction plays no part in a broadcast
  IdealRing ring(2, bw, alpha);
  // ⌊1.3 MiB⌋ = 1,363,148 B: two full messages of 524,288 B and a last one of 314,572 B.
  const Bytes size = Bytes::of(1'363'148);
  const std::int64_t last_bytes = size.count() - 2 * config.message_size.count();
  REQUIRE(last_bytes == 314'572);
  // Derivation: the sender puts all three messages on link 0→1 at t = 0. The link is a FIFO server,
  // so they leave back to back: message 1 finishes serializing at τ, message 2 at 2τ, message 3 at
  // 2τ + τ_last, and each arrives one latency α after its tail left. The receiver is done when the
  // last message arrived, the sender when it was delivered: T = 2·τ + τ_last + α, with
  //   τ      = ceil(524,288 B × 10^12 / 12×10^9 B/s) ps = ceil(43,690,666.67) = 43,690,667 ps,
  //   τ_last = ceil(314,572 B × 10^12 / 12×10^9 B/s) ps = ceil(26,214,333.33) = 26,214,334 ps,
  // so T = 87,381,334 + 26,214,334 + 1,000,000 = 114,595,668 ps.
  const Time tau = transfer_time(config.message_size, bw);
  const Time tau_last = transfer_time(Bytes::of(last_bytes), bw);
  CHECK(tau == Time::ps(43'690'667));
  CHECK(tau_last == Time::ps(26'214'334));
  EventQueue queue;
  Network network(queue, ring.links);
  RingCollective p2p(network, CollectiveOp::Broadcast, 2, {ring.forward()}, size, config);
  p2p.start_all();
  queue.run();
  REQUIRE(p2p.is_done());
  CHECK(p2p.messages_sent() == 3);
  CHECK(p2p.rank_finish_time(1) == tau * 2 + tau_last + alpha);
  CHECK(p2p.rank_finish_time(0) == tau * 2 + tau_last + alpha);
  CHECK(p2p.finish_time() == Time::ps(114'595'668));
  // Only the forward link carried anything: the whole buffer, once.
  CHECK(p2p.bytes_by_link_kind()[static_cast<int>(LinkKind::Generic)] == size);
  CHECK(network.counters(0).bytes == size);
  CHECK(network.counters(0).messages == 3);
  CHECK(network.counters(0).busy == tau * 2 + tau_last);  // busy back to back from t = 0
  CHECK(network.counters(1).bytes == Bytes::of(0));
}

TEST_CASE("ranks that start late delay everyone, and per-rank finish times are reported") {
  const Bandwidth bw = Bandwidth::gb_per_second(25);
  IdealRing ring(4, bw, Time::ns(100));
  CollectiveConfig config;
  EventQueue queue;
  Network network(queue, ring.links);
  RingCollective coll(network, CollectiveOp::AllReduce, 4, {ring.forward()}, Bytes::mib(8), config);
  struct Starter final : EventHandler {
    RingCollective* c;
    void on_event(std::uint64_t rank) override { c->start(static_cast<std::uint32_t>(rank)); }
  } starter;
  starter.c = &coll;
  struct Done final : EventHandler {
    std::vector<std::uint64_t> ranks;
    void on_event(std::uint64_t tag) override { ranks.push_back(tag - 100); }
  } done;
  coll.notify_rank_done(done, 100);
  for (std::uint32_t r = 0; r < 3; ++r) coll.start(r);
  queue.schedule_at(Time::ms(1), starter, 3);  // rank 3 joins 1 ms late
  queue.run();
  REQUIRE(coll.is_done());
  CHECK(done.ranks.size() == 4);
  CHECK(coll.rank_start_time(3) == Time::ms(1));
  for (std::uint32_t r = 0; r < 4; ++r) CHECK(coll.rank_finish_time(r) > Time::ms(1));
  // Alone it would take well under 1 ms (8 MiB at 25 GB/s ≈ 0.5 ms of bus traffic).
  CHECK(coll.finish_time() - Time::ms(1) < Time::ms(1));
}

TEST_CASE("two all-reduces sharing links each take longer than alone") {
  const Bandwidth bw = Bandwidth::gb_per_second(25);
  const Time alpha = Time::ns(100);
  CollectiveConfig config;  // the default reduction (225 GB/s) keeps up with 25 GB/s links
  IdealRing ring(8, bw, alpha);
  {
    // Folded, the first would assume it has the links to itself. The second is promised them (as
    // the next bucket on one ring would be), but its ranks join while the first still holds them:
    // that marks the network interfered (analysis/ then simulates again with folding off, as below).
    EventQueue queue;
    Network network(queue, ring.links);
    const auto a =
        make_ring_collective(network, CollectiveOp::AllReduce, 8, {ring.forward()}, Bytes::mib(32), config);
    const auto b =
        make_ring_collective(network, CollectiveOp::AllReduce, 8, {ring.forward()}, Bytes::mib(32), config);
    a->start_all();
    b->start_all();
    queue.run();
    CHECK(a->simulation_path().folded);
    CHECK(b->simulation_path().folded);
    CHECK(interfered(network));
  }
  config.fast_path = FastPath::Off;
  const Bytes size = Bytes::mib(32);
  const Time alone = run_collective(ring, CollectiveOp::AllReduce, {ring.forward()}, size, config);
  // Chunks of 4 MiB = 8 messages of 512 KiB: each link streams 2·7·8 = 112 messages back to back,
  // then one latency.
  const Time tau = transfer_time(Bytes::kib(512), bw);
  CHECK(alone == tau * 112 + alpha);
  EventQueue queue;
  Network network(queue, ring.links);
  RingCollective a(network, CollectiveOp::AllReduce, 8, {ring.forward()}, size, config);
  RingCollective b(network, CollectiveOp::AllReduce, 8, {ring.forward()}, size, config);
  a.start_all();
  b.start_all();
  queue.run();
  CHECK(a.finish_time() > alone);
  CHECK(b.finish_time() > alone);
  // Together they move twice the bytes over the same links, which stay busy throughout: the last
  // one finishes after 224 message times and one latency, 2·alone − α (a ratio of 2 − 4e-5).
  const Time together = max(a.finish_time(), b.finish_time());
  CHECK(together == tau * 224 + alpha);
  CHECK(together.to_seconds() == doctest::Approx(2 * alone.to_seconds()).scale(0).epsilon(1e-4));
}

TEST_CASE("bytes by link kind count every link a message crosses") {
  IdealRing ring(4, Bandwidth::gb_per_second(25), Time::ns(100));
  EventQueue queue;
  Network network(queue, ring.links);
  RingCollective coll(network, CollectiveOp::AllReduce, 4, {ring.forward()}, Bytes::mib(4), {});
  coll.start_all();
  queue.run();
  // Each rank sends 2(N−1) chunks of S/N: 6 × 1 MiB, over one link each.
  CHECK(coll.bytes_by_link_kind()[static_cast<int>(LinkKind::Generic)] == Bytes::mib(4 * 6));
}

// Ring collectives on an idealized uniform ring, checked against the closed form the model implies
// (derived in sim/README.md) and against the classic 2(N−1)·α + 2·((N−1)/N)·S/B.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

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

TEST_CASE("ring all-reduce matches the closed form and the classic formula") {
  const Bandwidth bw = Bandwidth::gb_per_second(50);
  const Time alpha = Time::ns(500);
  CollectiveConfig config;
  config.message_size = Bytes::kib(256);
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);  // isolate the network term
  const Time tau = transfer_time(config.message_size, bw);
  for (std::uint32_t n : {2u, 8u, 64u, 512u}) {
    for (std::int64_t m : {1, 4}) {
      CAPTURE(n);
      CAPTURE(m);
      IdealRing ring(n, bw, alpha);
      const Bytes size = Bytes::of(config.message_size.count() * m * n);
      std::uint64_t messages = 0;
      const Time t = run_collective(ring, CollectiveOp::AllReduce, {ring.forward()}, size, config,
                                    &messages);
      CHECK(messages == static_cast<std::uint64_t>(2 * (n - 1) * m * n));
      CHECK(t == closed_form_allreduce(n, m, tau, alpha));
      const double classic = classic_allreduce_seconds(n, static_cast<double>(size.count()),
                                                       static_cast<double>(bw.bytes_per_second()),
                                                       alpha.to_seconds());
      CHECK(t.to_seconds() == doctest::Approx(classic).epsilon(0.01));
    }
  }
}

TEST_CASE("two channels in opposite directions halve the bandwidth term") {
  const Bandwidth bw = Bandwidth::gb_per_second(25);
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  IdealRing ring(8, bw, Time::ns(100));
  const Bytes size = Bytes::mib(64);
  const Time one = run_collective(ring, CollectiveOp::AllReduce, {ring.forward()}, size, config);
  const Time two = run_collective(ring, CollectiveOp::AllReduce, {ring.forward(), ring.backward()},
                                  size, config);
  // 64 MiB over 8 ranks: chunk 8 MiB = 16 messages, so latency hides and T ≈ 2·(7/8)·S/(C·B).
  CHECK(two.to_seconds() == doctest::Approx(one.to_seconds() / 2).epsilon(0.01));
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
  CollectiveConfig config;
  IdealRing ring(8, bw, Time::ns(100));
  const Bytes size = Bytes::mib(32);
  const Time alone = run_collective(ring, CollectiveOp::AllReduce, {ring.forward()}, size, config);
  EventQueue queue;
  Network network(queue, ring.links);
  RingCollective a(network, CollectiveOp::AllReduce, 8, {ring.forward()}, size, config);
  RingCollective b(network, CollectiveOp::AllReduce, 8, {ring.forward()}, size, config);
  a.start_all();
  b.start_all();
  queue.run();
  CHECK(a.finish_time() > alone);
  CHECK(b.finish_time() > alone);
  // Together they move twice the bytes over the same links.
  CHECK(max(a.finish_time(), b.finish_time()).to_seconds() ==
        doctest::Approx(2 * alone.to_seconds()).epsilon(0.02));
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

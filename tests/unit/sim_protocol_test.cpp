// The protocol timing of sim/ collectives (sim/protocol.h): link rate classes of the network, a
// ring's base and per-hop latencies and payload rate, the per-channel cap; every time derived by
// hand from the timing rule of sim/README.md.
//
// Numbers: a 10 GB/s link moves 1000 bytes in 100 ns; at a rate scale of 0.5 in 200 ns.
#include <doctest/doctest.h>

#include <vector>

#include "sim/error.h"
#include "sim/network.h"
#include "sim/protocol.h"
#include "sim/ring_collective.h"

using namespace hybridsim::sim;

namespace {

struct Arrivals final : EventHandler {
  explicit Arrivals(EventQueue& q) : queue(q) {}
  void on_event(std::uint64_t tag) override {
    at.resize(std::max<std::size_t>(at.size(), tag + 1)), at[tag] = queue.now();
  }
  EventQueue& queue;
  std::vector<Time> at;
};

std::array<double, kLinkKindCount> scale_of(LinkKind kind, double s) {
  std::array<double, kLinkKindCount> a{1, 1, 1, 1, 1, 1, 1};
  a[static_cast<std::size_t>(kind)] = s;
  return a;
}

// N ranks on a one-way ring of Generic links (10 GB/s, 1 µs each): link g is g → g+1.
struct Ring {
  LinkTable links;
  std::uint32_t n;
  explicit Ring(std::uint32_t ranks) : n(ranks) {
    for (std::uint32_t g = 0; g < n; ++g)
      links.add({LinkKind::Generic, Bandwidth::gb_per_second(10), Time::us(1), "ring"});
  }
  RingChannel channel() const {
    RingChannel ch;
    for (std::uint32_t p = 0; p < n; ++p) {
      ch.order.push_back(p);
      ch.routes.push_back({p});
    }
    return ch;
  }
  Time run(CollectiveOp op, Bytes size, CollectiveConfig config) {
    EventQueue queue;
    Network network(queue, links);
    RingCollective coll(network, op, n, {channel()}, size, config);
    coll.start_all();
    queue.run();
    CHECK(coll.is_done());
    return coll.finish_time();
  }
};

}  // namespace

TEST_CASE("network rate classes: a message of a scaled class occupies the link longer") {
  LinkTable links;
  links.add({LinkKind::NVLink, Bandwidth::gb_per_second(10), Time::ns(0), "nv"});
  EventQueue queue;
  Network network(queue, links);
  Arrivals arrivals(queue);
  // All ones is the plain class 0; equal scales share one class.
  CHECK(network.rate_class({1, 1, 1, 1, 1, 1, 1}) == 0);
  const std::uint8_t half = network.rate_class(scale_of(LinkKind::NVLink, 0.5));
  CHECK(half == 1);
  CHECK(network.rate_class(scale_of(LinkKind::NVLink, 0.5)) == half);
  CHECK(network.rate_class(scale_of(LinkKind::PCIe, 0.5)) == 2);
  const LinkId route[] = {0};
  // 1000 B at line rate: 100 ns; then 1000 B at half rate queued behind it: 200 ns more, done at
  // 300 ns; a third at line rate behind that: 400 ns. PCIe's scale does not touch an NVLink.
  network.send(route, Bytes::of(1000), arrivals, 0);
  network.send_at(Time::zero(), route, Bytes::of(1000), arrivals, 1, half);
  network.send_at(Time::zero(), route, Bytes::of(1000), arrivals, 2, 2);
  queue.run();
  CHECK(arrivals.at[0] == Time::ns(100));
  CHECK(arrivals.at[1] == Time::ns(300));
  CHECK(arrivals.at[2] == Time::ns(400));
  CHECK(network.counters(0).busy == Time::ns(400));
}

TEST_CASE("hop kinds and the step delay: the protocol's hop latency less the links' own") {
  LinkTable links;
  links.add({LinkKind::NVLink, Bandwidth::gb_per_second(10), Time::ns(700), "nv"});
  links.add({LinkKind::PCIe, Bandwidth::gb_per_second(10), Time::ns(500), "pcie"});
  links.add({LinkKind::InfiniBand, Bandwidth::gb_per_second(10), Time::ns(500), "ib"});
  const LinkId nvlink[] = {0}, pcie[] = {1, 1}, net[] = {1, 2, 1};
  CHECK(hop_kind(nvlink, links) == HopKind::NVLink);
  CHECK(hop_kind(pcie, links) == HopKind::PCIe);
  CHECK(hop_kind(net, links) == HopKind::Network);
  ProtocolTiming t;
  CHECK(t.step_delay(nvlink, links) == Time::zero());  // ideal: the links' latencies only
  t.protocol = Protocol::Simple;
  t.hop_latency = {Time::ns(3400), Time::ns(5700), Time::ns(9600)};
  CHECK(t.step_delay(nvlink, links) == Time::ns(3400 - 700));
  CHECK(t.step_delay(pcie, links) == Time::ns(5700 - 1000));
  CHECK(t.step_delay(net, links) == Time::ns(9600 - 1500));
  t.hop_latency = {Time::ns(470), Time::ns(1000), Time::ns(2700)};  // LL: below the links' own
  CHECK(t.step_delay(nvlink, links) == Time::zero());
  CHECK(parse_protocol("LL128") == Protocol::LL128);
  CHECK(parse_protocol("simple") == Protocol::Simple);
  CHECK_THROWS_AS(parse_protocol("fast"), hybridsim::InputError);
}

TEST_CASE("the step delay of a route depends on its links' kinds and latencies alone") {
  // A folded tree matches two channel groups by their routes, link by link (kind, bandwidth,
  // latency), and no longer compares the routes' delays (sim/fast/tree_groups.cpp): it relies on
  // this. Two routes over other links of the same kinds and latencies (other bandwidths and names)
  // have the same delay under every protocol; one latency changed, they do not.
  LinkTable links;
  links.add({LinkKind::NVLink, Bandwidth::gb_per_second(10), Time::ns(700), "nv a"});
  links.add({LinkKind::PCIe, Bandwidth::gb_per_second(10), Time::ns(500), "pcie a"});
  links.add({LinkKind::InfiniBand, Bandwidth::gb_per_second(10), Time::ns(450), "ib a"});
  links.add({LinkKind::NVLink, Bandwidth::gb_per_second(25), Time::ns(700), "nv b"});
  links.add({LinkKind::PCIe, Bandwidth::gb_per_second(16), Time::ns(500), "pcie b"});
  links.add({LinkKind::InfiniBand, Bandwidth::gb_per_second(12), Time::ns(450), "ib b"});
  links.add({LinkKind::InfiniBand, Bandwidth::gb_per_second(10), Time::ns(451), "ib c"});
  const LinkId a[] = {1, 2, 1}, b[] = {4, 5, 4}, c[] = {4, 6, 4}, nv_a[] = {0}, nv_b[] = {3};
  ProtocolTiming t;
  t.protocol = Protocol::Simple;
  t.hop_latency = {Time::ns(3400), Time::ns(5700), Time::ns(9600)};
  CHECK(t.step_delay(a, links) == Time::ns(9600 - 1450));
  CHECK(t.step_delay(b, links) == t.step_delay(a, links));
  CHECK(t.step_delay(nv_b, links) == t.step_delay(nv_a, links));
  CHECK(t.step_delay(c, links) == Time::ns(9600 - 1451));  // one latency 1 ns longer
  t.protocol = Protocol::LL;
  t.hop_latency = {Time::ns(470), Time::ns(1000), Time::ns(2700)};
  CHECK(t.step_delay(b, links) == t.step_delay(a, links));
  CHECK(t.step_delay(a, links) == Time::ns(2700 - 1450));
}

TEST_CASE("ring all-reduce under a protocol: base latency, per-step latency, scaled link rate") {
  Ring ring(4);
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  // Ideal: 4000 B over 4 ranks is one 1000 B message per step: 6 steps of 100 ns + 1 µs.
  CHECK(ring.run(CollectiveOp::AllReduce, Bytes::of(4000), config) == Time::ns(6 * 1100));
  // A protocol: links at half rate (200 ns a message), 5 µs base latency, a 3 µs hop over these
  // (PCIe-kind, Generic) links, so each step waits 3 µs − 1 µs = 2 µs before it is sent:
  // T = 5 µs + 6 × (2 µs + 200 ns + 1 µs) = 24.2 µs.
  config.timing.protocol = Protocol::Simple;
  config.timing.link_rate_scale = scale_of(LinkKind::Generic, 0.5);
  config.timing.base_latency = Time::us(5);
  config.timing.hop_latency[static_cast<std::size_t>(HopKind::PCIe)] = Time::us(3);
  CHECK(ring.run(CollectiveOp::AllReduce, Bytes::of(4000), config) == Time::ns(24'200));
  // The reduce-scatter half: 3 steps, 5 µs + 3 × 3.2 µs = 14.6 µs.
  CHECK(ring.run(CollectiveOp::ReduceScatter, Bytes::of(4000), config) == Time::ns(14'600));
}

TEST_CASE("the per-channel cap paces a channel's sender") {
  Ring ring(2);
  CollectiveConfig config;
  config.message_size = Bytes::of(1000);
  config.timing.protocol = Protocol::LL128;
  // A send/recv of 4 messages of 1000 B over one 10 GB/s link (100 ns each, 1 µs latency). Without
  // a cap they leave back to back: 4 × 100 ns + 1 µs = 1.4 µs.
  CHECK(ring.run(CollectiveOp::Broadcast, Bytes::of(4000), config) == Time::ns(1400));
  // Capped at 1 GB/s the sender lets one out every 1 µs: the last leaves at 3 µs, done at
  // 3 µs + 100 ns + 1 µs = 4.1 µs.
  config.timing.channel_cap = Bandwidth::gb_per_second(1);
  CHECK(ring.run(CollectiveOp::Broadcast, Bytes::of(4000), config) == Time::ns(4100));
}

TEST_CASE("a rank that joins late sends nothing before its base latency, in step order") {
  // 3 ranks, rank 2 joins at 10 µs. Protocol: 1 µs base latency, no hop delay, line rate.
  Ring ring(3);
  EventQueue queue;
  Network network(queue, ring.links);
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  config.timing.protocol = Protocol::Simple;
  config.timing.base_latency = Time::us(1);
  RingCollective coll(network, CollectiveOp::AllReduce, 3, {ring.channel()}, Bytes::of(3000), config);
  coll.start(0);
  coll.start(1);
  queue.run_until(Time::us(10));
  coll.start(2);
  queue.run();
  // Rank 2's data arrived before it joined; its own step 0 and everything it forwards leave at
  // 11 µs, and from there the ring runs as if all had started together 1 µs earlier: rank 0 gets
  // rank 2's step 0 at 11 µs + 1.1 µs; the remaining 3 steps of the 4 take 1.1 µs each.
  CHECK(coll.is_done());
  CHECK(coll.finish_time() == Time::us(11) + Time::ns(4 * 1100));
}

TEST_CASE("a broadcast under a protocol pipelines in at least N−1 messages") {
  Ring ring(4);
  CollectiveConfig config;
  // Ideal: 3000 B is one message (300 ns a hop): m·τ + (N−2)·(τ + α) + α = 0.3 + 2 × 1.3 + 1 µs.
  CHECK(ring.run(CollectiveOp::Broadcast, Bytes::of(3000), config) == Time::ns(3900));
  // Under a protocol (here without extra latency or rate change) the 3 hops get 3 messages of
  // 1000 B (100 ns): 3 × 0.1 + 2 × 1.1 + 1 µs = 3.5 µs.
  config.timing.protocol = Protocol::Simple;
  CHECK(ring.run(CollectiveOp::Broadcast, Bytes::of(3000), config) == Time::ns(3500));
}

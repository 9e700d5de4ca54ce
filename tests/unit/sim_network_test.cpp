// Tests of sim::Network: exact delivery times under the timing rule of sim/README.md (cut-through and
// store-and-forward, over 1-3 hops with equal and unequal links), FIFO sharing of a link direction,
// independence of the two directions, per-link counters, the service-time cache per size and class,
// message slots, watches and the hop observer.
//
// Numbers: a 1 GB/s link moves a byte in 1 ns, so a 1000-byte message occupies it for 1 us; 2 GB/s
// takes 500 ns and 4 GB/s 250 ns. Times below are in nanoseconds.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <tuple>
#include <vector>

#include "sim/error.h"
#include "sim/event_queue.h"
#include "sim/link.h"
#include "sim/network.h"
#include "sim/work_progress.h"

using hybridsim::InternalError;
using hybridsim::sim::Bandwidth;
using hybridsim::sim::Bytes;
using hybridsim::sim::EventHandler;
using hybridsim::sim::EventQueue;
using hybridsim::sim::HopRecord;
using hybridsim::sim::LinkId;
using hybridsim::sim::LinkKind;
using hybridsim::sim::LinkTable;
using hybridsim::sim::Network;
using hybridsim::sim::NetworkObserver;
using hybridsim::sim::Switching;
using hybridsim::sim::Time;

namespace {

const Bytes kMessage = Bytes::of(1'000);

// Records when each tag was delivered.
struct Receiver final : EventHandler {
  explicit Receiver(EventQueue& q) : queue(q) {}
  void on_event(std::uint64_t tag) override { delivered.emplace_back(tag, queue.now()); }
  Time time_of(std::uint64_t tag) const {
    for (const auto& [t, at] : delivered)
      if (t == tag) return at;
    return Time::max();
  }
  EventQueue& queue;
  std::vector<std::pair<std::uint64_t, Time>> delivered;
};

struct Recorder final : NetworkObserver {
  void on_hop(const HopRecord& hop) override { hops.push_back(hop); }
  std::vector<HopRecord> hops;
};

LinkId add_link(LinkTable& links, std::int64_t gb_per_second, std::int64_t latency_ns) {
  return links.add({LinkKind::Generic, Bandwidth::gb_per_second(gb_per_second),
                    Time::ns(latency_ns), "link"});
}

// Delivery time of one 1000-byte message over a route of links (GB/s, latency ns) sent at time 0.
Time deliver_one(const std::vector<std::pair<int, int>>& hops, Switching switching) {
  LinkTable links;
  std::vector<LinkId> route;
  for (const auto& [bw, lat] : hops) route.push_back(add_link(links, bw, lat));
  EventQueue q;
  Network net(q, links, switching);
  Receiver rx(q);
  net.send(route, kMessage, rx, 7);
  q.run();
  REQUIRE(rx.delivered.size() == 1);
  CHECK(rx.delivered[0].first == 7);
  CHECK(net.hops_processed() == route.size());
  return rx.delivered[0].second;
}

}  // namespace

TEST_CASE("Network: one message over equal hops") {
  // Cut-through: b/B + L1 + ... + Lk. 1 hop: 1000 + 100; 2 hops: 1000 + 200; 3 hops: 1000 + 300.
  CHECK(deliver_one({{1, 100}}, Switching::CutThrough) == Time::ns(1'100));
  CHECK(deliver_one({{1, 100}, {1, 100}}, Switching::CutThrough) == Time::ns(1'200));
  CHECK(deliver_one({{1, 100}, {1, 100}, {1, 100}}, Switching::CutThrough) == Time::ns(1'300));
  // Store-and-forward: k*b/B + L1 + ... + Lk. 1 hop: 1100; 2 hops: 2000 + 200; 3 hops: 3000 + 300.
  CHECK(deliver_one({{1, 100}}, Switching::StoreAndForward) == Time::ns(1'100));
  CHECK(deliver_one({{1, 100}, {1, 100}}, Switching::StoreAndForward) == Time::ns(2'200));
  CHECK(deliver_one({{1, 100}, {1, 100}, {1, 100}}, Switching::StoreAndForward) == Time::ns(3'300));
}

TEST_CASE("Network: one message over unequal hops") {
  // Fast then slow (2 GB/s, 100 ns; 1 GB/s, 200 ns), cut-through: hop 1 runs [0, 500]; the head
  // reaches hop 2 at 100 and the tail at 600; hop 2 runs [100, max(100 + 1000, 600)] = [100, 1100];
  // delivered 1100 + 200 = 1300 (the slowest link's time plus all latencies).
  CHECK(deliver_one({{2, 100}, {1, 200}}, Switching::CutThrough) == Time::ns(1'300));
  // Slow then fast (1 GB/s, 100 ns; 2 GB/s, 200 ns): hop 1 [0, 1000]; head at hop 2 at 100, tail at
  // 1100; hop 2 finishes at max(100 + 500, 1100) = 1100 (it waits for the tail); delivered 1300.
  CHECK(deliver_one({{1, 100}, {2, 200}}, Switching::CutThrough) == Time::ns(1'300));
  // Store-and-forward, fast then slow: 500 + 100 + 1000 + 200 = 1800; slow then fast the same.
  CHECK(deliver_one({{2, 100}, {1, 200}}, Switching::StoreAndForward) == Time::ns(1'800));
  CHECK(deliver_one({{1, 100}, {2, 200}}, Switching::StoreAndForward) == Time::ns(1'800));
  // Three hops (2 GB/s 100 ns, 1 GB/s 200 ns, 4 GB/s 300 ns), cut-through: hop 1 [0, 500]; hop 2
  // [100, 1100]; head at hop 3 at 300, tail at 1300: hop 3 [300, max(550, 1300)] = [300, 1300];
  // delivered 1300 + 300 = 1600.
  CHECK(deliver_one({{2, 100}, {1, 200}, {4, 300}}, Switching::CutThrough) == Time::ns(1'600));
  // Store-and-forward: 500 + 100 + 1000 + 200 + 250 + 300 = 2350.
  CHECK(deliver_one({{2, 100}, {1, 200}, {4, 300}}, Switching::StoreAndForward) == Time::ns(2'350));
}

TEST_CASE("Network: two messages sharing one link direction take twice as long") {
  // Both sent at 0 over one 1 GB/s, 100 ns link: the first occupies it [0, 1000] and arrives at
  // 1100; the second waits, occupies [1000, 2000] and arrives at 2100.
  LinkTable links;
  const LinkId l = add_link(links, 1, 100);
  const std::vector<LinkId> route = {l};
  EventQueue q;
  Network net(q, links);
  Receiver rx(q);
  net.send(route, kMessage, rx, 1);
  net.send(route, kMessage, rx, 2);
  q.run();
  CHECK(rx.time_of(1) == Time::ns(1'100));
  CHECK(rx.time_of(2) == Time::ns(2'100));
  // Counters: 2000 bytes, busy 2 x 1000 ns, 2 messages, at most one waiting behind the one in service.
  CHECK(net.counters(l).bytes == Bytes::of(2'000));
  CHECK(net.counters(l).busy == Time::ns(2'000));
  CHECK(net.counters(l).messages == 2);
  CHECK(net.counters(l).max_queue_depth == 1);
}

TEST_CASE("Network: messages from two senders meet on a shared second hop") {
  // Routes up0 -> core and up1 -> core, all 1 GB/s and 100 ns, both sent at 0. Both heads reach the
  // core at 100; the first sent goes first: core [100, 1100], delivered 1200; the second waits:
  // core [1100, 2100], delivered 2200. Each uplink is used once, without waiting.
  LinkTable links;
  const LinkId up0 = add_link(links, 1, 100);
  const LinkId up1 = add_link(links, 1, 100);
  const LinkId core = add_link(links, 1, 100);
  const std::vector<LinkId> a = {up0, core};
  const std::vector<LinkId> b = {up1, core};
  EventQueue q;
  Network net(q, links);
  Receiver rx(q);
  net.send(a, kMessage, rx, 1);
  net.send(b, kMessage, rx, 2);
  q.run();
  CHECK(rx.time_of(1) == Time::ns(1'200));
  CHECK(rx.time_of(2) == Time::ns(2'200));
  CHECK(net.counters(core).messages == 2);
  CHECK(net.counters(core).max_queue_depth == 1);
  CHECK(net.counters(up0).max_queue_depth == 0);
  CHECK(net.counters(up1).busy == Time::ns(1'000));
}

TEST_CASE("Network: the two directions of a cable do not interfere") {
  // One message each way at 0 over the forward and the reverse link: both arrive at 1000 + 100.
  LinkTable links;
  const LinkId forward = add_link(links, 1, 100);
  const LinkId reverse = add_link(links, 1, 100);
  const std::vector<LinkId> there = {forward};
  const std::vector<LinkId> back = {reverse};
  EventQueue q;
  Network net(q, links);
  Receiver rx(q);
  net.send(there, kMessage, rx, 1);
  net.send(back, kMessage, rx, 2);
  q.run();
  CHECK(rx.time_of(1) == Time::ns(1'100));
  CHECK(rx.time_of(2) == Time::ns(1'100));
  CHECK(net.counters(forward).max_queue_depth == 0);
  CHECK(net.counters(reverse).max_queue_depth == 0);
}

TEST_CASE("Network: per-link counters") {
  // Three messages at 0 over one link (1 GB/s, 100 ns): they occupy [0,1000], [1000,2000] and
  // [2000,3000]; when the third arrives, it and the second wait behind the first, so the deepest
  // queue is 2. A fourth message sent at 5000, when the link is idle, waits for nothing.
  LinkTable links;
  const LinkId l = add_link(links, 1, 100);
  const LinkId idle = add_link(links, 1, 100);
  const std::vector<LinkId> route = {l};
  EventQueue q;
  Network net(q, links);
  Receiver rx(q);
  for (std::uint64_t i = 0; i < 3; ++i) net.send(route, kMessage, rx, i);
  q.run();
  CHECK(rx.time_of(2) == Time::ns(3'100));
  CHECK(net.counters(l).max_queue_depth == 2);
  q.run_until(Time::ns(5'000));
  net.send(route, Bytes::of(500), rx, 3);
  q.run();
  CHECK(rx.time_of(3) == Time::ns(5'600));  // 5000 + 500 + 100
  const auto& c = net.counters(l);
  CHECK(c.bytes == Bytes::of(3'500));
  CHECK(c.busy == Time::ns(3'500));
  CHECK(c.messages == 4);
  CHECK(c.max_queue_depth == 2);
  // An unused link has zero counters.
  CHECK(net.counters(idle).messages == 0);
  CHECK(net.counters(idle).bytes == Bytes::of(0));
  CHECK(net.counters(idle).busy == Time::zero());
}

TEST_CASE("Network: cut-through waiting for the tail counts as busy time") {
  // Slow then fast (1 GB/s, 100 ns; 2 GB/s, 200 ns): hop 2 is held [100, 1100] waiting for the
  // tail, so its busy time is 1000 ns, not its 500 ns of transfer.
  LinkTable links;
  const LinkId slow = add_link(links, 1, 100);
  const LinkId fast = add_link(links, 2, 200);
  const std::vector<LinkId> route = {slow, fast};
  EventQueue q;
  Network net(q, links);
  Receiver rx(q);
  net.send(route, kMessage, rx, 1);
  q.run();
  CHECK(net.counters(fast).busy == Time::ns(1'000));
  CHECK(net.counters(slow).busy == Time::ns(1'000));
}

TEST_CASE("Network: an empty route delivers at once") {
  LinkTable links;
  EventQueue q;
  Network net(q, links);
  Receiver rx(q);
  q.run_until(Time::ns(42));
  net.send({}, kMessage, rx, 5);
  q.run();
  REQUIRE(rx.delivered.size() == 1);
  CHECK(rx.delivered[0].second == Time::ns(42));
  CHECK(net.hops_processed() == 0);
}

TEST_CASE("Network: the observer sees every hop") {
  // Three hops (2 GB/s 100 ns, 1 GB/s 200 ns, 4 GB/s 300 ns), cut-through, as derived above:
  // hop 1 [0, 500], hop 2 [100, 1100], hop 3 [300, 1300].
  LinkTable links;
  const std::vector<LinkId> route = {add_link(links, 2, 100), add_link(links, 1, 200),
                                     add_link(links, 4, 300)};
  EventQueue q;
  Network net(q, links);
  Recorder obs;
  net.set_observer(&obs);
  Receiver rx(q);
  net.send(route, kMessage, rx, 9);
  q.run();
  REQUIRE(obs.hops.size() == 3);
  const std::int64_t starts[] = {0, 100, 300};
  const std::int64_t finishes[] = {500, 1'100, 1'300};
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(obs.hops[i].link == route[i]);
    CHECK(obs.hops[i].start == Time::ns(starts[i]));
    CHECK(obs.hops[i].finish == Time::ns(finishes[i]));
    CHECK(obs.hops[i].bytes == kMessage);
    CHECK(obs.hops[i].tag == 9);
  }
  CHECK(rx.time_of(9) == Time::ns(1'600));
}

TEST_CASE("Network: an observer may send messages from on_hop") {
  // The observer sends a second message (over the reverse link) when it sees the first hop of the
  // first one; the first message must still cross each of its links exactly once: 3 hops, delivered
  // at 1000 + 3 x 100 = 1300; the second, sent at 0 over one link, at 1100.
  LinkTable links;
  const std::vector<LinkId> route = {add_link(links, 1, 100), add_link(links, 1, 100),
                                     add_link(links, 1, 100)};
  const std::vector<LinkId> reverse = {add_link(links, 1, 100)};
  EventQueue q;
  Network net(q, links);
  Receiver rx(q);
  struct Sender final : NetworkObserver {
    Network& net;
    Receiver& rx;
    const std::vector<LinkId>& route;
    int hops = 0;
    Sender(Network& n, Receiver& r, const std::vector<LinkId>& l) : net(n), rx(r), route(l) {}
    void on_hop(const HopRecord&) override {
      if (hops++ == 0) net.send(route, kMessage, rx, 2);
    }
  } sender(net, rx, reverse);
  net.set_observer(&sender);
  net.send(route, kMessage, rx, 1);
  q.run();
  CHECK(rx.time_of(1) == Time::ns(1'300));
  CHECK(rx.time_of(2) == Time::ns(1'100));
  CHECK(net.hops_processed() == 4);
  CHECK(sender.hops == 4);
}

TEST_CASE("Network::send_at enters the first link at the given time") {
  // Sent at 0 to enter at 500 ns over 1 GB/s, 100 ns links (2 hops, cut-through): 500 + 1000 + 200.
  LinkTable links;
  const std::vector<LinkId> route = {add_link(links, 1, 100), add_link(links, 1, 100)};
  EventQueue q;
  Network net(q, links);
  Receiver rx(q);
  net.send_at(Time::ns(500), route, kMessage, rx, 1);
  net.send_at(Time::zero(), {}, kMessage, rx, 2);
  q.run();
  CHECK(rx.time_of(1) == Time::ns(1'700));
  CHECK(rx.time_of(2) == Time::zero());
}

TEST_CASE("Network::send_at into the past or in a rate class not made is refused, leaving no message") {
  // Two hops: a message holds its slot until it enters its last link.
  LinkTable links;
  const std::vector<LinkId> route = {add_link(links, 1, 100), add_link(links, 1, 100)};
  EventQueue q;
  Network net(q, links);
  Receiver rx(q);
  // Class 0 always exists, class 1 once rate_class() has made it (checked out of line, send_rare).
  CHECK_THROWS_AS(net.send_at(Time::zero(), route, kMessage, rx, 1, 1), InternalError);
  CHECK(net.most_messages_in_flight() == 0);
  net.send_at(Time::us(1), route, kMessage, rx, 1);
  q.run();
  CHECK(net.messages_in_flight() == 0);
  CHECK_THROWS_AS(net.send_at(Time::zero(), route, kMessage, rx, 2), InternalError);
  CHECK(net.messages_in_flight() == 0);
  net.send(route, kMessage, rx, 3);
  CHECK(net.messages_in_flight() == 1);
  q.run();
  CHECK(net.messages_in_flight() == 0);
  std::array<double, hybridsim::sim::kLinkKindCount> scale;
  scale.fill(0.5);
  REQUIRE(net.rate_class(scale) == 1);
  CHECK_THROWS_AS(net.send_at(q.now(), route, kMessage, rx, 4, 2), InternalError);
  CHECK(net.messages_in_flight() == 0);
  const Time sent = q.now();
  net.send_at(sent, route, kMessage, rx, 5, 1);
  q.run();
  // 1000 B at half of 1 GB/s: 2000 ns, cut-through over two 100-ns links.
  CHECK(rx.time_of(5) - sent == Time::ns(2'200));
}

TEST_CASE("Network: a free link times each message by its own size and class") {
  // Two 1 GB/s, 100 ns links; each message is sent 10 us after the last, so both links are free
  // whenever one arrives. Cut-through over two hops: service + 200 ns. 1000 B at line rate 1000 ns
  // (delivered 1200 after its send); the same size at half the rate 2000 ns (2200); line rate again
  // (1200); 2000 B at line rate (2200); 1000 B (1200). A link's cached time kept for a message of
  // the same size but another class, or the same class but another size, gives 1200 for the
  // second or the fourth.
  LinkTable links;
  const std::vector<LinkId> route = {add_link(links, 1, 100), add_link(links, 1, 100)};
  EventQueue q;
  Network net(q, links);
  std::array<double, hybridsim::sim::kLinkKindCount> scale;
  scale.fill(1.0);
  scale[static_cast<std::size_t>(LinkKind::Generic)] = 0.5;
  const std::uint8_t half = net.rate_class(scale);
  Receiver rx(q);
  const std::uint8_t classes[] = {0, half, 0, 0, 0};
  const std::int64_t sizes[] = {1'000, 1'000, 1'000, 2'000, 1'000};
  for (std::uint64_t i = 0; i < 5; ++i)
    net.send_at(Time::us(10 * static_cast<std::int64_t>(i)), route, Bytes::of(sizes[i]), rx, i, classes[i]);
  q.run();
  const std::int64_t after_send[] = {1'200, 2'200, 1'200, 2'200, 1'200};
  for (std::uint64_t i = 0; i < 5; ++i)
    CHECK(rx.time_of(i) == Time::ns(10'000 * static_cast<std::int64_t>(i) + after_send[i]));
  // Each link busy for the five services: 1000 + 2000 + 1000 + 2000 + 1000 ns.
  CHECK(net.counters(route[0]).busy == Time::ns(7'000));
  CHECK(net.counters(route[1]).busy == Time::ns(7'000));
  CHECK(net.hops_processed() == 10);
}

TEST_CASE("Network: message slots are counted in flight until their last hop, and reused") {
  // Three two-hop messages entering at 1, 2 and 3 us: each holds a slot until its tail is on the
  // second link. After they are delivered two more take two of the freed slots.
  LinkTable links;
  const std::vector<LinkId> route = {add_link(links, 1, 100), add_link(links, 1, 100)};
  EventQueue q;
  Network net(q, links);
  Receiver rx(q);
  for (std::uint64_t i = 1; i <= 3; ++i)
    net.send_at(Time::us(static_cast<std::int64_t>(i)), route, kMessage, rx, i);
  CHECK(net.messages_in_flight() == 3);
  q.run_until(Time::ns(1'050));  // the first is on its first link
  CHECK(net.messages_in_flight() == 3);
  q.run_until(Time::ns(1'150));  // and now on its last
  CHECK(net.messages_in_flight() == 2);
  q.run();
  CHECK(net.messages_in_flight() == 0);
  net.send(route, kMessage, rx, 4);
  net.send_at(Time::us(10), route, kMessage, rx, 5);
  CHECK(net.messages_in_flight() == 2);
  q.run();
  CHECK(net.messages_in_flight() == 0);
  CHECK(rx.delivered.size() == 5);
}

namespace {
// Records the arrivals the network shows it.
struct ArrivalLog final : hybridsim::sim::ArrivalWatcher {
  void on_arrival(const hybridsim::sim::LinkArrival& a) override { seen.emplace_back(a.link, a.time); }
  std::vector<std::pair<LinkId, Time>> seen;
};

// Two 1 GB/s, 100 ns links and a network with an arrival log attached, nothing watched yet.
struct Watched {
  Watched() : route{add_link(links, 1, 100), add_link(links, 1, 100)}, net(q, links) {
    auto owned = std::make_unique<ArrivalLog>();
    log = owned.get();
    net.attach_watcher(std::move(owned));
  }
  auto parts() { return std::tie(route, q, net, *log, rx); }
  LinkTable links;
  std::vector<LinkId> route;
  EventQueue q;
  Network net;
  ArrivalLog* log;
  Receiver rx{q};
};
}  // namespace

TEST_CASE("Network: a watched link shows its arrivals until its watch ends") {
  // Two 1 GB/s, 100 ns links; messages sent at 0, 2 and 4 us reach the second link 100 ns later.
  Watched w;
  auto [route, q, net, log, rx] = w.parts();
  net.watch(route[1], true);
  net.watch_until(route[1], Time::ns(2'100));  // the second message arrives then: not shown
  for (int k = 0; k < 3; ++k) net.send_at(Time::us(2 * k), route, kMessage, rx, k);
  q.run_until(Time::us(3));
  net.watch(route[0], true);  // watched anew: no end
  net.watch(route[1], true);
  q.run();
  using Seen = std::vector<std::pair<LinkId, Time>>;
  CHECK(log.seen == Seen{{route[1], Time::ns(100)}, {route[0], Time::us(4)}, {route[1], Time::ns(4'100)}});
  CHECK(rx.time_of(2) == Time::ns(5'200));
}

TEST_CASE("Network: a watch whose end has passed shows arrivals again once its end is moved later") {
  // As above: messages at 0, 2, 4 and 6 us reach the second link 100 ns later. The watch ends at
  // 1 us, so the arrival at 2.1 us finds it ended; moved to 5 us at 3 us, the arrival at 4.1 us is
  // shown, and the one at 6.1 us is not.
  Watched w;
  auto [route, q, net, log, rx] = w.parts();
  net.watch(route[1], true);
  net.watch_until(route[1], Time::us(1));
  for (int k = 0; k < 4; ++k) net.send_at(Time::us(2 * k), route, kMessage, rx, k);
  q.run_until(Time::us(3));
  net.watch_until(route[1], Time::us(5));
  q.run();
  using Seen = std::vector<std::pair<LinkId, Time>>;
  CHECK(log.seen == Seen{{route[1], Time::ns(100)}, {route[1], Time::ns(4'100)}});
  CHECK(rx.time_of(3) == Time::ns(7'200));
}

TEST_CASE("Network: its links' state is made in batches, told, and the last batch's links time alike") {
  // 2^16 + 3 links (a batch of kStateBatch and 3 more): told at 0, 65,536 and 65,539 links. A message
  // over the first link and one over the last (each 1 GB/s, 100 ns then 300 ns) arrive as one link's
  // rule says: 1000 + 100 and 1000 + 300 ns.
  struct Told final : hybridsim::sim::WorkProgress {
    std::vector<std::uint64_t> done;
    void built(std::string_view part, std::uint64_t d, std::uint64_t total, std::string_view unit) override {
      CHECK(part == "preparing its links");
      CHECK(unit == "links");
      CHECK(total == 65'539);
      done.push_back(d);
    }
  } told;
  static_assert(hybridsim::sim::kStateBatch == 65'536);
  LinkTable links;
  for (int i = 0; i < 65'538; ++i) add_link(links, 1, 100);
  const LinkId last = add_link(links, 1, 300);
  EventQueue q;
  Network net(q, links, Switching::CutThrough, &told);
  CHECK(told.done == std::vector<std::uint64_t>{0, 65'536, 65'539});
  Receiver rx(q);
  const std::vector<LinkId> first_route{0}, last_route{last};
  net.send(first_route, kMessage, rx, 1);
  net.send(last_route, kMessage, rx, 2);
  q.run();
  CHECK(rx.time_of(1) == Time::ns(1'100));
  CHECK(rx.time_of(2) == Time::ns(1'300));
  // A network of one batch or less is not told.
  Told none;
  LinkTable few;
  add_link(few, 1, 100);
  const Network small(q, few, Switching::CutThrough, &none);
  CHECK(none.done.empty());
}

// Tests of sim::EventQueue: the documented total order (time, then scheduling order), safe O(1)
// cancellation, run/run_until/step/stop, determinism under a random storm, and a million events.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "sim/error.h"
#include "sim/event_queue.h"

using hybridsim::InternalError;
using hybridsim::sim::EventHandler;
using hybridsim::sim::EventId;
using hybridsim::sim::EventQueue;
using hybridsim::sim::Time;

namespace {

// Records (time in ps, tag) of every event it receives.
struct Recorder final : EventHandler {
  explicit Recorder(EventQueue& q) : queue(q) {}
  void on_event(std::uint64_t tag) override { log.emplace_back(queue.now().ps(), tag); }
  std::vector<std::uint64_t> tags() const {
    std::vector<std::uint64_t> out;
    for (const auto& e : log) out.push_back(e.second);
    return out;
  }
  EventQueue& queue;
  std::vector<std::pair<std::int64_t, std::uint64_t>> log;
};

using Tags = std::vector<std::uint64_t>;

}  // namespace

TEST_CASE("EventQueue processes events in time order") {
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ns(30), r, 30);
  q.schedule_at(Time::ns(10), r, 10);
  q.schedule_after(Time::ns(20), r, 20);
  CHECK(q.pending() == 3);
  CHECK(q.next_time() == Time::ns(10));
  q.run();
  CHECK(r.tags() == Tags{10, 20, 30});
  CHECK(r.log.front().first == 10'000);
  CHECK(q.now() == Time::ns(30));  // the clock stops at the last event
  CHECK(q.events_processed() == 3);
  CHECK(q.pending() == 0);
  CHECK(q.next_time() == Time::max());
  CHECK_FALSE(q.step());
}

TEST_CASE("EventQueue breaks ties by scheduling order") {
  EventQueue q;
  Recorder r(q);
  // Five events at 5 ns scheduled 0..4, interleaved with events at other times.
  for (std::uint64_t i = 0; i < 5; ++i) {
    q.schedule_at(Time::ns(5), r, i);
    q.schedule_at(Time::ns(i % 2 == 0 ? 1 : 9), r, 100 + i);
  }
  q.run();
  CHECK(r.tags() == Tags{100, 102, 104, 0, 1, 2, 3, 4, 101, 103});
}

TEST_CASE("EventQueue: events scheduled for now by a handler run after those already pending") {
  EventQueue q;
  Recorder r(q);
  struct Spawner final : EventHandler {
    EventQueue& q;
    Recorder& r;
    Spawner(EventQueue& queue, Recorder& rec) : q(queue), r(rec) {}
    void on_event(std::uint64_t) override {
      q.schedule_after(Time::zero(), r, 99);  // same time, scheduled last
    }
  } spawner(q, r);
  q.schedule_at(Time::ns(1), spawner);
  q.schedule_at(Time::ns(1), r, 1);
  q.schedule_at(Time::ns(1), r, 2);
  q.schedule_at(Time::ns(2), r, 3);
  q.run();
  CHECK(r.tags() == Tags{1, 2, 99, 3});
  CHECK(r.log[2].first == 1'000);
}

TEST_CASE("EventQueue cancellation is safe to repeat and after firing") {
  EventQueue q;
  Recorder r(q);
  const EventId a = q.schedule_at(Time::ns(1), r, 1);
  const EventId b = q.schedule_at(Time::ns(2), r, 2);
  const EventId c = q.schedule_at(Time::ns(3), r, 3);
  CHECK(q.is_pending(b));
  CHECK(q.cancel(b));
  CHECK_FALSE(q.is_pending(b));
  CHECK_FALSE(q.cancel(b));  // twice: no effect
  CHECK(q.pending() == 2);
  CHECK(q.step());  // fires a
  CHECK_FALSE(q.is_pending(a));
  CHECK_FALSE(q.cancel(a));  // after firing: no effect
  CHECK(q.is_pending(c));
  q.run();
  CHECK(r.tags() == Tags{1, 3});
  CHECK(q.events_processed() == 2);
  CHECK_FALSE(q.cancel(EventId{}));  // a default handle names nothing
  CHECK_FALSE(q.is_pending(EventId{}));
  CHECK_FALSE(q.cancel(EventId{12345, 1}));  // a slot that never existed
}

TEST_CASE("EventQueue: cancelling the only event leaves nothing to run") {
  EventQueue q;
  Recorder r(q);
  const EventId id = q.schedule_at(Time::us(1), r, 1);
  CHECK(q.cancel(id));
  CHECK(q.pending() == 0);
  CHECK(q.next_time() == Time::max());
  CHECK_FALSE(q.step());
  q.run();
  CHECK(r.log.empty());
  CHECK(q.events_processed() == 0);
  CHECK(q.now() == Time::zero());  // the cancelled event does not move the clock
}

TEST_CASE("EventQueue: a stale handle does not cancel the event that reused its slot") {
  EventQueue q;
  Recorder r(q);
  const EventId old_id = q.schedule_at(Time::ns(1), r, 1);
  q.run();
  const EventId new_id = q.schedule_at(Time::ns(2), r, 2);  // may reuse old_id's slot
  CHECK_FALSE(q.cancel(old_id));
  CHECK(q.is_pending(new_id));
  // The same after a cancellation: the cancelled event's slot is reused by a later event.
  CHECK(q.cancel(new_id));
  q.run();
  const EventId third = q.schedule_at(Time::ns(3), r, 3);
  CHECK_FALSE(q.cancel(new_id));
  CHECK(q.is_pending(third));
  q.run();
  CHECK(r.tags() == Tags{1, 3});
}

TEST_CASE("EventQueue::run_until runs events at exactly `until` and leaves the clock there") {
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ns(10), r, 10);
  q.schedule_at(Time::ns(20), r, 20);
  q.schedule_at(Time::ns(30), r, 30);
  q.run_until(Time::ns(20));
  CHECK(r.tags() == Tags{10, 20});
  CHECK(q.now() == Time::ns(20));
  CHECK(q.pending() == 1);
  q.run_until(Time::ns(25));  // nothing due: only the clock moves
  CHECK(r.tags() == Tags{10, 20});
  CHECK(q.now() == Time::ns(25));
  CHECK_THROWS_AS(q.schedule_at(Time::ns(24), r, 24), InternalError);  // in the past now
  CHECK_THROWS_AS(q.run_until(Time::ns(24)), InternalError);
  q.run_until(Time::ns(30));
  CHECK(r.tags() == Tags{10, 20, 30});
  // On an empty queue run_until(Time::max()) returns, with the clock at Time::max().
  q.run_until(Time::max());
  CHECK(q.now() == Time::max());
}

TEST_CASE("EventQueue: events scheduled after looking ahead still come out in order") {
  // next_time() and run_until() look at the next event (here at 100 ns); events then scheduled
  // before it, with ties among them, must still run first and in scheduling order.
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ns(100), r, 100);
  q.schedule_at(Time::ns(100), r, 101);
  CHECK(q.next_time() == Time::ns(100));
  q.schedule_at(Time::ns(60), r, 60);
  q.run_until(Time::ns(40));
  CHECK(r.log.empty());
  q.schedule_at(Time::ns(60), r, 61);
  q.schedule_at(Time::ns(50), r, 50);
  q.schedule_at(Time::ns(100), r, 102);
  const EventId cancelled = q.schedule_at(Time::ns(55), r, 55);
  CHECK(q.cancel(cancelled));
  CHECK(q.next_time() == Time::ns(50));
  q.run();
  CHECK(r.tags() == Tags{50, 60, 61, 100, 101, 102});
}

TEST_CASE("EventQueue rejects events in the past") {
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ns(100), r);
  q.run();
  CHECK_THROWS_AS(q.schedule_at(Time::ns(99), r), InternalError);
  CHECK_THROWS_AS(q.schedule_after(Time::ps(-1), r), InternalError);
  CHECK_NOTHROW(q.schedule_after(Time::zero(), r));  // now itself is fine
  CHECK(q.pending() == 1);
}

TEST_CASE("EventQueue::stop returns from run after the current event") {
  EventQueue q;
  struct Stopper final : EventHandler {
    EventQueue& q;
    int seen = 0;
    explicit Stopper(EventQueue& queue) : q(queue) {}
    void on_event(std::uint64_t tag) override {
      ++seen;
      if (tag == 2) q.stop();
    }
  } s(q);
  for (std::uint64_t i = 1; i <= 4; ++i) q.schedule_at(Time::ns(static_cast<std::int64_t>(i)), s, i);
  q.run();
  CHECK(s.seen == 2);
  CHECK(q.now() == Time::ns(2));
  CHECK(q.pending() == 2);
  q.run_until(Time::ns(10));  // a new run starts afresh
  CHECK(s.seen == 4);
  CHECK(q.now() == Time::ns(10));
  // stop() inside run_until leaves the clock at the stopping event.
  q.schedule_at(Time::ns(11), s, 2);
  q.schedule_at(Time::ns(12), s, 5);
  q.run_until(Time::ns(20));
  CHECK(q.now() == Time::ns(11));
  CHECK(q.pending() == 1);
}

TEST_CASE("EventQueue handles times near Time::max()") {
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::max(), r, 3);
  q.schedule_at(Time::max() - Time::ps(1), r, 2);
  q.schedule_at(Time::ps(1), r, 1);
  q.schedule_at(Time::max(), r, 4);
  q.run();
  CHECK(r.tags() == Tags{1, 2, 3, 4});
  CHECK(q.now() == Time::max());
}

namespace {

// A random storm: each event schedules 0-3 new events (a third of them at the current time), and
// sometimes cancels a pending one. It checks every firing against a plain reference (a sorted set of
// (time, scheduling number)) and hashes the trace.
class Storm final : public EventHandler {
 public:
  // `spread`: children come 0, up to 50 ps or up to `spread` ps after their parent.
  // `origin`: the first events come within 1 ns after it.
  Storm(EventQueue& q, std::uint64_t seed, std::uint64_t spread = 100'000, Time origin = Time::zero())
      : q_(q), rng_(seed), spread_(spread), origin_(origin) {}
  void start(int events) {
    for (int i = 0; i < events; ++i) schedule(origin_ + Time::ps(static_cast<std::int64_t>(rng_() % 1000)));
  }
  void on_event(std::uint64_t tag) override {
    const auto due = ids_.find(tag);
    if (due == ids_.end() || reference_.empty() ||
        *reference_.begin() != std::make_pair(q_.now().ps(), tag))
      ++order_errors_;
    reference_.erase({q_.now().ps(), tag});
    ids_.erase(tag);
    hash_ = (hash_ ^ static_cast<std::uint64_t>(q_.now().ps())) * 0x100000001B3ULL;
    hash_ = (hash_ ^ tag) * 0x100000001B3ULL;
    ++fired_;
    if (fired_ > limit_) return;
    const int children = static_cast<int>(rng_() % 4);  // 1.5 on average: the storm grows
    for (int c = 0; c < children; ++c) {
      const std::uint64_t kind = rng_() % 3;
      const std::uint64_t range = kind == 1 ? 50 : spread_;
      const Time delay = kind == 0 ? Time::zero() : Time::ps(static_cast<std::int64_t>(rng_() % range));
      schedule(q_.now() + delay);
    }
    if (rng_() % 5 == 0 && !ids_.empty()) {  // cancel the pending event with the next larger number
      auto victim = ids_.lower_bound(rng_() % next_tag_);
      if (victim == ids_.end()) victim = ids_.begin();
      CHECK(q_.cancel(victim->second.first));
      reference_.erase({victim->second.second, victim->first});
      ids_.erase(victim);
    }
  }
  // Schedules an event from outside any handler (between run_until() slices).
  void inject(Time at) { schedule(at); }
  std::uint64_t hash() const { return hash_; }
  std::uint64_t fired() const { return fired_; }
  int order_errors() const { return order_errors_; }
  bool reference_empty() const { return reference_.empty(); }

 private:
  void schedule(Time at) {
    const std::uint64_t tag = next_tag_++;
    ids_[tag] = {q_.schedule_at(at, *this, tag), at.ps()};
    reference_.insert({at.ps(), tag});
  }
  EventQueue& q_;
  std::mt19937_64 rng_;
  std::uint64_t spread_;
  Time origin_;
  std::map<std::uint64_t, std::pair<EventId, std::int64_t>> ids_;  // tag -> (id, time)
  std::set<std::pair<std::int64_t, std::uint64_t>> reference_;     // (time, scheduling number)
  std::uint64_t next_tag_ = 0;
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
  std::uint64_t fired_ = 0;
  std::uint64_t limit_ = 200'000;
  int order_errors_ = 0;
};

}  // namespace

TEST_CASE("EventQueue is deterministic and follows the documented order under a random storm") {
  std::uint64_t hashes[2] = {};
  std::uint64_t fired[2] = {};
  for (int run = 0; run < 2; ++run) {
    EventQueue q;
    Storm storm(q, 2024);
    storm.start(1'000);
    q.run();
    CHECK(storm.order_errors() == 0);
    CHECK(storm.reference_empty());
    CHECK(q.pending() == 0);
    hashes[run] = storm.hash();
    fired[run] = storm.fired();
  }
  CHECK(fired[0] > 200'000);
  CHECK(hashes[0] == hashes[1]);
  CHECK(fired[0] == fired[1]);
}

TEST_CASE("EventQueue follows the documented order in a dense storm with many ties") {
  // Children at most 3 ps apart: hundreds of events share each time, so runs of equal times are long.
  EventQueue q;
  Storm storm(q, 7, /*spread=*/4);
  storm.start(5'000);
  q.run();
  CHECK(storm.order_errors() == 0);
  CHECK(storm.reference_empty());
  CHECK(storm.fired() > 200'000);
}

TEST_CASE("EventQueue follows the documented order in storms of other spreads and near 2^62 ps") {
  // Spreads around the queue's 256-ps block (children land in the block being run, and in the next
  // ones), and up to 2^45 ps (children spread over every digit level of the radix heap), starting
  // at 2^62 ps so that times use the high bits.
  const Time far = Time::ps(std::int64_t{1} << 62);
  const std::uint64_t spreads[] = {256, 300, std::uint64_t{1} << 45};
  const Time origins[] = {Time::zero(), far, far};
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    EventQueue q;
    Storm storm(q, 11 + static_cast<std::uint64_t>(i), spreads[i], origins[i]);
    storm.start(2'000);
    q.run();
    CHECK(storm.order_errors() == 0);
    CHECK(storm.reference_empty());
    CHECK(storm.fired() > 200'000);
    CHECK(q.now() > origins[i]);
  }
}

TEST_CASE("EventQueue follows the documented order in sparse storms (a few events a 64-ns span)") {
  // A step's pattern: from 20 events, children up to 16 us, 268 us or 2.1 ms later, so that most
  // 64-ns spans of the radix heap's level 1 hold one event or a few (the refill's few-event path);
  // a third of the children at the present time, a third within 50 ps (into the front, before its
  // latest entry).
  const std::uint64_t spreads[] = {std::uint64_t{1} << 24, std::uint64_t{1} << 28, std::uint64_t{1} << 31};
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    EventQueue q;
    Storm storm(q, 31 + static_cast<std::uint64_t>(i), spreads[i]);
    storm.start(20);
    q.run();
    CHECK(storm.order_errors() == 0);
    CHECK(storm.reference_empty());
    CHECK(storm.fired() > 200'000);
  }
}

TEST_CASE("EventQueue: a new queue's events one to a 64-ns span, scheduled latest first, come out in order") {
  // Each refill takes one span into the front while the front's array is still small. (A refill that
  // took several spans at once, tried for a step's sparse pattern, crashed here: growing the array
  // for the second span left the front reading the old one; tests/bench/MEASUREMENTS.md.)
  EventQueue q;
  Recorder rec(q);
  for (int i = 40; i-- > 0;)
    q.schedule_at(Time::ns(100 * (i + 1)) + Time::ps(7 * i), rec, static_cast<std::uint64_t>(i));
  q.run();
  std::vector<std::uint64_t> expected(40);
  for (std::uint64_t i = 0; i < 40; ++i) expected[i] = i;
  CHECK(rec.tags() == expected);
}

TEST_CASE("EventQueue follows the documented order when driven in run_until slices") {
  // Between slices, events are injected at or shortly after now() — often before the next pending
  // event, which run_until() has already looked at — and next_time() is called at random.
  EventQueue q;
  Storm storm(q, 99, /*spread=*/2'000);
  storm.start(200);
  std::mt19937_64 rng(5);
  Time t = Time::zero();
  for (int slice = 0; slice < 20'000; ++slice) {
    t += Time::ps(static_cast<std::int64_t>(rng() % 300));
    q.run_until(t);
    CHECK(q.now() == t);
    const int injected = static_cast<int>(rng() % 4);
    for (int i = 0; i < injected; ++i) storm.inject(t + Time::ps(static_cast<std::int64_t>(rng() % 40)));
    if (rng() % 3 == 0) CHECK(q.next_time() >= t);
  }
  q.run();
  CHECK(storm.order_errors() == 0);
  CHECK(storm.reference_empty());
  CHECK(q.pending() == 0);
}

TEST_CASE("EventQueue keeps scheduling order among many events at one time") {
  // 100 events at 1 ns; each of the first 50 schedules another at 1 ns when it runs (they join the
  // end), and every 7th original is cancelled. Expected: the originals 0..99 without the multiples
  // of 7, then the 50 children (of the originals 0..49 that ran) in the order their parents ran.
  EventQueue q;
  Recorder r(q);
  struct Parent final : EventHandler {
    EventQueue& q;
    Recorder& r;
    Parent(EventQueue& queue, Recorder& rec) : q(queue), r(rec) {}
    void on_event(std::uint64_t tag) override {
      r.on_event(tag);
      if (tag < 50) q.schedule_after(Time::zero(), r, 1000 + tag);
    }
  } parent(q, r);
  std::vector<EventId> ids;
  for (std::uint64_t i = 0; i < 100; ++i) ids.push_back(q.schedule_at(Time::ns(1), parent, i));
  for (std::size_t i = 0; i < ids.size(); i += 7) CHECK(q.cancel(ids[i]));
  q.run();
  Tags expected;
  for (std::uint64_t i = 0; i < 100; ++i)
    if (i % 7 != 0) expected.push_back(i);
  for (std::uint64_t i = 0; i < 50; ++i)
    if (i % 7 != 0) expected.push_back(1000 + i);
  CHECK(r.tags() == expected);
  CHECK(q.now() == Time::ns(1));
}

TEST_CASE("EventQueue processes a million events with the right count and order") {
  // Random times in [0, 100,000) ps give about ten events per distinct time: the order must be by
  // time, then by index (the scheduling order) — a stable sort of the indices by time.
  constexpr std::size_t kEvents = 1'000'000;
  std::mt19937_64 rng(42);
  std::vector<std::int64_t> times(kEvents);
  for (auto& t : times) t = static_cast<std::int64_t>(rng() % 100'000);
  std::vector<std::uint64_t> expected(kEvents);
  std::iota(expected.begin(), expected.end(), 0);
  std::stable_sort(expected.begin(), expected.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return times[a] < times[b]; });

  EventQueue q;
  q.reserve(kEvents);
  Recorder r(q);
  r.log.reserve(kEvents);
  for (std::size_t i = 0; i < kEvents; ++i) q.schedule_at(Time::ps(times[i]), r, i);
  CHECK(q.pending() == kEvents);
  q.run();
  CHECK(q.events_processed() == kEvents);
  CHECK(r.log.size() == kEvents);
  CHECK(r.tags() == expected);
  CHECK(q.now() == Time::ps(times[expected.back()]));
}

TEST_CASE("EventQueue: short delays into the time block being run keep the order") {
  // 10, 20 and 30 ps share one of the queue's 256-ps blocks. At 10 ps the handler schedules 20 ps
  // (after the pending 20), 15 ps twice (before it: 15 then 16), 30 ps (after the pending 30) and
  // 40 ps. Expected by time, then scheduling order: 10, 15, 16, 20, 21, 30, 31, 40.
  EventQueue q;
  Recorder r(q);
  struct Spawner final : EventHandler {
    EventQueue& q;
    Recorder& r;
    Spawner(EventQueue& queue, Recorder& rec) : q(queue), r(rec) {}
    void on_event(std::uint64_t tag) override {
      r.on_event(tag);
      q.schedule_at(Time::ps(20), r, 21);
      q.schedule_at(Time::ps(15), r, 15);
      q.schedule_at(Time::ps(15), r, 16);
      q.schedule_at(Time::ps(30), r, 31);
      q.schedule_at(Time::ps(40), r, 40);
    }
  } spawner(q, r);
  q.schedule_at(Time::ps(30), r, 30);
  q.schedule_at(Time::ps(10), spawner, 10);
  q.schedule_at(Time::ps(20), r, 20);
  q.run();
  CHECK(r.tags() == Tags{10, 15, 16, 20, 21, 30, 31, 40});
}

TEST_CASE("EventQueue sorts a crowded time block stably") {
  // 200 events in the block [1 us, 1 us + 256 ps), at 1 us + (37 i mod 100) ps for event i: two
  // events per time, which must come out by time, then by i (a stable sort of i by time).
  EventQueue q;
  Recorder r(q);
  const auto at = [](std::uint64_t i) { return 1'000'000 + static_cast<std::int64_t>(37 * i % 100); };
  for (std::uint64_t i = 0; i < 200; ++i) q.schedule_at(Time::ps(at(i)), r, i);
  std::vector<std::uint64_t> expected(200);
  std::iota(expected.begin(), expected.end(), 0);
  std::stable_sort(expected.begin(), expected.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return at(a) < at(b); });
  CHECK(expected[0] == 0);    // 37 * 0 mod 100 = 0
  CHECK(expected[1] == 100);  // 37 * 100 mod 100 = 0, scheduled later
  q.run();
  CHECK(r.tags() == expected);
}

TEST_CASE("EventQueue: a 64-ns span of up to 64 events, with ties, fires by time then scheduling order") {
  // n events in the span [1,048,576 ps, + 64 ns) (a span's start: 16 * 65,536 ps), event i in block
  // 11 * (37 i mod 23) of it, at 200 ps into the block for odd i: times out of scheduling order,
  // over blocks across the span, ties between events 46 apart. A level-1 bucket of at most 64
  // events becomes the front in one refill: sorted by insertion up to 16, above by ranks of the
  // time's low 16 bits, counted eight at a time (more are staged by radix sort); an event scheduled
  // by the first into the span, at a time before the front's latest entry, must come out among them
  // by time. n covers both sides of 16 (the limit was 8) and of 64.
  for (const std::uint64_t n : {9, 12, 16, 17, 18, 40, 47, 48, 63, 64, 65, 66}) {
    CAPTURE(n);
    EventQueue q;
    Recorder r(q);
    const auto at = [](std::uint64_t i) {
      return 16 * 65'536 + 256 * 11 * static_cast<std::int64_t>(37 * i % 23) +
             200 * static_cast<std::int64_t>(i % 2);
    };
    struct Spawner final : EventHandler {
      EventQueue& q;
      Recorder& r;
      std::int64_t late;
      Spawner(EventQueue& queue, Recorder& rec, std::int64_t t) : q(queue), r(rec), late(t) {}
      void on_event(std::uint64_t tag) override {
        r.on_event(tag);
        q.schedule_at(Time::ps(late), r, 1000);  // before the front's latest entry; after event 3
      }
    } spawner(q, r, at(3));              // event 3's time, in the span's block 209
    q.schedule_at(Time::ps(5), r, 999);  // the clock's first block: the span is a level-1 bucket
    for (std::uint64_t i = 0; i < n; ++i) {
      if (i == 0) {
        q.schedule_at(Time::ps(at(0)), spawner, 0);
      } else {
        q.schedule_at(Time::ps(at(i)), r, i);
      }
    }
    std::vector<std::uint64_t> expected(n);
    std::iota(expected.begin(), expected.end(), 0);
    expected.push_back(1000);  // scheduled last
    const auto time = [&](std::uint64_t tag) { return tag == 1000 ? at(3) : at(tag); };
    std::stable_sort(expected.begin(), expected.end(),
                     [&](std::uint64_t a, std::uint64_t b) { return time(a) < time(b); });
    expected.insert(expected.begin(), 999);
    q.run();
    CHECK(r.tags() == expected);
  }
}

TEST_CASE(
    "EventQueue: two to four events of a 64-ns span, at every choice of three times, keep scheduling order") {
  // n events in one level-1 bucket (the span [1,048,576 ps, + 65,536 ps) while the clock is in its
  // first block), each at one of three times: the span's last picosecond, its first, and 300 ps in
  // (block 1), every one of the 3^n assignments: the front must list them by time, ties in
  // scheduling order. Two and three are placed by their ranks (rank_few), four by insertion; the
  // odd events are posted, the even ones scheduled with an id, which must no longer be pending once
  // they fired.
  constexpr std::int64_t kSpan = 16 * 65'536;
  constexpr std::array<std::int64_t, 3> kOffsets = {65'535, 0, 300};
  for (const std::uint64_t n : {2, 3, 4}) {
    std::uint64_t assignments = 1;
    for (std::uint64_t i = 0; i < n; ++i) assignments *= kOffsets.size();
    for (std::uint64_t a = 0; a < assignments; ++a) {
      CAPTURE(n);
      CAPTURE(a);
      std::vector<std::int64_t> at(n);
      for (std::uint64_t i = 0, rest = a; i < n; ++i, rest /= kOffsets.size())
        at[i] = kSpan + kOffsets[rest % kOffsets.size()];
      EventQueue q;
      Recorder r(q);
      q.schedule_at(Time::ps(5), r, 999);  // the clock's first block: the span is a level-1 bucket
      std::vector<EventId> ids;
      for (std::uint64_t i = 0; i < n; ++i) {
        if (i % 2 == 0)
          ids.push_back(q.schedule_at(Time::ps(at[i]), r, i));
        else
          q.post_at(Time::ps(at[i]), r, i);
      }
      std::vector<std::uint64_t> expected(n);
      std::iota(expected.begin(), expected.end(), 0);
      std::stable_sort(expected.begin(), expected.end(),
                       [&](std::uint64_t x, std::uint64_t y) { return at[x] < at[y]; });
      expected.insert(expected.begin(), 999);
      q.run();
      CHECK(r.tags() == expected);
      for (const EventId id : ids) CHECK_FALSE(q.is_pending(id));
      CHECK(q.pending() == 0);
    }
  }
}

TEST_CASE("EventQueue: a 64-ns span's ties in every group of eight, at its ends, keep scheduling order") {
  // 17 to 64 events in one level-1 bucket, each at one of four times of the span [1,048,576 ps,
  // + 65,536 ps): its first and last picosecond and the two either side of its middle (the 16-bit
  // keys' sign bit once biased), the offset (5 i + i / 8) mod 4, so that every time recurs in every
  // group of eight entries, before and after an entry's own lane: the front's ranks must put each
  // time's events in scheduling order (rank(i) = i - #{j < i later} + #{j > i earlier}).
  constexpr std::int64_t kSpan = 16 * 65'536;
  constexpr std::array<std::int64_t, 4> kOffsets = {65'535, 0, 32'768, 32'767};
  for (const std::uint64_t n : {17, 23, 24, 25, 40, 56, 63, 64}) {
    CAPTURE(n);
    EventQueue q;
    Recorder r(q);
    const auto at = [&](std::uint64_t i) { return kSpan + kOffsets[(5 * i + i / 8) % 4]; };
    q.schedule_at(Time::ps(5), r, 999);  // the clock's first block: the span is a level-1 bucket
    for (std::uint64_t i = 0; i < n; ++i) q.schedule_at(Time::ps(at(i)), r, i);
    std::vector<std::uint64_t> expected(n);
    std::iota(expected.begin(), expected.end(), 0);
    std::stable_sort(expected.begin(), expected.end(),
                     [&](std::uint64_t a, std::uint64_t b) { return at(a) < at(b); });
    expected.insert(expected.begin(), 999);
    q.run();
    CHECK(r.tags() == expected);
    CHECK(r.log.back().first == kSpan + 65'535);
  }
}

TEST_CASE("EventQueue orders times that differ in every bit, near 2^62 ps") {
  // Times 2^62 + 2^k for k = 61 down to 0, scheduled in that (descending) order, each twice, and
  // 2^62 itself last: expected 2^62 first, then k = 0, 1, ..., 61, each pair in scheduling order.
  EventQueue q;
  Recorder r(q);
  const std::int64_t base = std::int64_t{1} << 62;
  for (int k = 61; k >= 0; --k) {
    q.schedule_at(Time::ps(base + (std::int64_t{1} << k)), r, static_cast<std::uint64_t>(2 * k));
    q.schedule_at(Time::ps(base + (std::int64_t{1} << k)), r, static_cast<std::uint64_t>(2 * k + 1));
  }
  q.schedule_at(Time::ps(base), r, 1000);
  q.run();
  Tags expected{1000};
  for (std::uint64_t k = 0; k < 62; ++k) {
    expected.push_back(2 * k);
    expected.push_back(2 * k + 1);
  }
  CHECK(r.tags() == expected);
  CHECK(q.now() == Time::ps(base + (std::int64_t{1} << 61)));
}

TEST_CASE("EventQueue::run_until stops inside a time block, events then scheduled at now come next") {
  // 100 and 101 ps share a block. run_until(100 ps) runs the first; two events then scheduled at
  // 100 ps (now) come before the one at 101 ps, in scheduling order. A look-ahead from an empty
  // front (run_until(150 ps) sees 300 ps) does not stop 200 ps, scheduled afterwards, coming first.
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ps(100), r, 100);
  q.schedule_at(Time::ps(101), r, 101);
  q.schedule_at(Time::ps(300), r, 300);
  q.run_until(Time::ps(100));
  CHECK(r.tags() == Tags{100});
  q.schedule_at(Time::ps(100), r, 1000);
  q.schedule_at(Time::ps(100), r, 1001);
  q.run_until(Time::ps(150));
  CHECK(r.tags() == Tags{100, 1000, 1001, 101});
  CHECK(q.now() == Time::ps(150));
  q.schedule_at(Time::ps(200), r, 200);
  q.schedule_at(Time::ps(300), r, 301);
  q.run();
  CHECK(r.tags() == Tags{100, 1000, 1001, 101, 200, 300, 301});
}

TEST_CASE("EventQueue: an event cancelled and rescheduled at the same time goes after the others") {
  // Four events at 500 ps; after the first has run (the block is being run), the second is
  // cancelled and rescheduled at 500 ps: it now comes after the third and fourth, as a new event.
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ps(500), r, 1);
  const EventId second = q.schedule_at(Time::ps(500), r, 2);
  q.schedule_at(Time::ps(500), r, 3);
  q.schedule_at(Time::ps(500), r, 4);
  CHECK(q.step());
  CHECK(q.cancel(second));
  CHECK_FALSE(q.is_pending(second));
  const EventId again = q.schedule_at(Time::ps(500), r, 22);
  CHECK(q.is_pending(again));
  CHECK(q.pending() == 3);
  q.run();
  CHECK(r.tags() == Tags{1, 3, 4, 22});
}

TEST_CASE("EventQueue keeps working after it ran empty") {
  // After the queue ran dry at 200 ps, events at 200, 250 ps (the same block) and 300 ps (the next)
  // and, once those ran, at 10 ns: all run, in time order.
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ps(10), r, 10);
  q.schedule_at(Time::ps(200), r, 200);
  q.run();
  q.schedule_at(Time::ps(300), r, 300);
  q.schedule_at(Time::ps(250), r, 250);
  q.schedule_at(Time::ps(200), r, 201);
  q.run();
  CHECK(r.tags() == Tags{10, 200, 201, 250, 300});
  CHECK(q.next_time() == Time::max());
  q.schedule_at(Time::ns(10), r, 10'000);
  q.run();
  CHECK(r.tags() == Tags{10, 200, 201, 250, 300, 10'000});
  CHECK(q.pending() == 0);
}

namespace {
// On each event, schedules one more at the same time, `left` times in all.
struct Refiller final : EventHandler {
  explicit Refiller(EventQueue& q) : queue(q) {}
  void on_event(std::uint64_t tag) override {
    ++fired;
    if (left > 0) {
      --left;
      queue.schedule_at(queue.now(), *this, tag);
    }
  }
  EventQueue& queue;
  std::uint64_t left = 0, fired = 0;
};
}  // namespace

TEST_CASE("EventQueue: a front of many events at one time, each adding one more, is not copied per event") {
  // 20,000 events at one time come up as one staged block; each schedules another at that time,
  // appended to the front. The front had room for one more after each copy, so every event copied
  // all of it (4e8 entries here; a 65,536-GPU tree's 128 B size in `collective` ran 27 s without an
  // event done). With room for as many again, the copies stay within a few times the events.
  EventQueue q;
  Refiller r(q);
  constexpr std::uint64_t n = 20'000;
  r.left = n;
  for (std::uint64_t i = 0; i < n; ++i) q.schedule_at(Time::ns(5), r, i);
  q.run();
  CHECK(r.fired == 2 * n);
  CHECK(q.now() == Time::ns(5));
  MESSAGE("entries moved: ", q.front_entries_moved(), " for ", r.fired, " events");
  CHECK(q.front_entries_moved() <= 4 * n);
}

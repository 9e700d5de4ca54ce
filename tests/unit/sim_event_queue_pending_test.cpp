// Tests of sim::EventQueue::pending_events(): the pending events listed in the order they would fire
// (time, then scheduling order), cancelled ones left out; every listed event cancelled by its id and
// scheduled again, shifted in time, in the listed order (what a ring jump does, sim/fast/ring_jump.cpp)
// keeps their order; and the same inside a staged 64-ns span (events scheduled into it later,
// cancelled, moved).
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/event_queue.h"

using hybridsim::sim::EventHandler;
using hybridsim::sim::EventId;
using hybridsim::sim::EventQueue;
using hybridsim::sim::PendingEvent;
using hybridsim::sim::Time;

namespace {

struct Recorder final : EventHandler {
  explicit Recorder(EventQueue& q) : queue(q) {}
  void on_event(std::uint64_t tag) override { log.emplace_back(queue.now().ps(), tag); }
  EventQueue& queue;
  std::vector<std::pair<std::int64_t, std::uint64_t>> log;
};

using Listed = std::vector<std::pair<std::int64_t, std::uint64_t>>;  // (time in ps, tag)

Listed listed(const std::vector<PendingEvent>& events, const EventHandler* handler) {
  Listed out;
  for (const PendingEvent& e : events) {
    CHECK(e.handler == handler);
    out.emplace_back(e.time.ps(), e.tag);
  }
  return out;
}

// Cancels every listed event by its id and schedules it again `shift` later, in the listed order
// (as a ring jump moves its rings' events): returns the list.
std::vector<PendingEvent> move_all(EventQueue& q, Time shift) {
  const std::vector<PendingEvent> listed_events = q.pending_events();
  for (const PendingEvent& e : listed_events) CHECK(q.cancel(e.id));
  for (const PendingEvent& e : listed_events) q.schedule_at(e.time + shift, *e.handler, e.tag);
  return listed_events;
}

}  // namespace

TEST_CASE("EventQueue::pending_events lists ties in scheduling order and leaves cancelled events out") {
  // Scheduled in this order: 1 ns (tag 1), 300 ps (2), 1 ns (3), 300 ps (4), 5 us (5), 1 ns (6), and
  // 300 ps (7), which is cancelled. By time, then scheduling order: 300 ps: 2, 4; 1 ns: 1, 3, 6; 5 us: 5.
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ns(1), r, 1);
  q.schedule_at(Time::ps(300), r, 2);
  q.schedule_at(Time::ns(1), r, 3);
  q.schedule_at(Time::ps(300), r, 4);
  q.schedule_at(Time::us(5), r, 5);
  q.schedule_at(Time::ns(1), r, 6);
  CHECK(q.cancel(q.schedule_at(Time::ps(300), r, 7)));
  const Listed expected{{300, 2}, {300, 4}, {1000, 1}, {1000, 3}, {1000, 6}, {5'000'000, 5}};
  CHECK(listed(q.pending_events(), &r) == expected);
  CHECK(q.pending() == 6);
  // Listing changes nothing: the events then fire in the listed order.
  q.run();
  CHECK(r.log == expected);
}

TEST_CASE("EventQueue::pending_events inside a time block being run, with events at now") {
  // Events at 10, 20, 20, 30 ps share one 256-ps block. After the first has run (now = 10 ps), events
  // are scheduled at 10 ps (now, twice), 20 ps (after the pending one) and 15 ps. Expected: 10 ps:
  // 100, 101; 15 ps: 150; 20 ps: 2, 3, 200; 30 ps: 4.
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ps(10), r, 1);
  q.schedule_at(Time::ps(20), r, 2);
  q.schedule_at(Time::ps(20), r, 3);
  q.schedule_at(Time::ps(30), r, 4);
  CHECK(q.step());
  q.schedule_at(Time::ps(10), r, 100);
  q.schedule_at(Time::ps(20), r, 200);
  q.schedule_at(Time::ps(10), r, 101);
  q.schedule_at(Time::ps(15), r, 150);
  const Listed expected{{10, 100}, {10, 101}, {15, 150}, {20, 2}, {20, 3}, {20, 200}, {30, 4}};
  CHECK(listed(q.pending_events(), &r) == expected);
  q.run();
  Listed fired{{10, 1}};
  fired.insert(fired.end(), expected.begin(), expected.end());
  CHECK(r.log == fired);
}

TEST_CASE("EventQueue: listed events cancelled by id and scheduled again shifted keep their order") {
  // At now = 100 ps: pending 100 ps (tags 1, 2), 2 ns (3, 4), 7 us (5); 6 (at 3 ns) is cancelled.
  // Listed in that order, each cancelled (old handles stale, nothing pending, the clock stays) and
  // scheduled again 1 us later, after an event at now (tag 9): 9 at 100 ps, then 1, 2 at 1.0001 us,
  // 3, 4 at 1.002 us, 5 at 8 us.
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ps(100), r, 0);
  CHECK(q.step());
  const EventId first = q.schedule_at(Time::ps(100), r, 1);
  q.schedule_at(Time::ps(100), r, 2);
  q.schedule_at(Time::ns(2), r, 3);
  q.schedule_at(Time::ns(2), r, 4);
  q.schedule_at(Time::us(7), r, 5);
  CHECK(q.cancel(q.schedule_at(Time::ns(3), r, 6)));
  const std::vector<PendingEvent> listed_events = q.pending_events();
  CHECK(listed(listed_events, &r) == Listed{{100, 1}, {100, 2}, {2000, 3}, {2000, 4}, {7'000'000, 5}});
  for (const PendingEvent& e : listed_events) CHECK(q.cancel(e.id));
  CHECK(q.pending() == 0);
  CHECK(q.now() == Time::ps(100));
  CHECK(q.next_time() == Time::max());
  CHECK(q.pending_events().empty());
  CHECK_FALSE(q.is_pending(first));
  CHECK_FALSE(q.cancel(first));

  q.schedule_at(Time::ps(100), r, 9);
  for (const PendingEvent& e : listed_events) q.schedule_at(e.time + Time::us(1), *e.handler, e.tag);
  CHECK(q.pending() == 6);
  q.run();
  CHECK(r.log == Listed{{100, 0},
                        {100, 9},
                        {1'000'100, 1},
                        {1'000'100, 2},
                        {1'002'000, 3},
                        {1'002'000, 4},
                        {8'000'000, 5}});
  CHECK(q.events_processed() == 7);
}

TEST_CASE("EventQueue: events at now cancelled and scheduled again unshifted keep their ties") {
  // Inside a block being run (now = 50 ps): 50 ps (tags 1, 2) and 60 ps (3). Moved by 0, then 50 ps
  // (4) and 60 ps (5) scheduled: 1, 2, 4 at 50 ps, then 3, 5.
  EventQueue q;
  Recorder r(q);
  q.schedule_at(Time::ps(50), r, 0);
  q.schedule_at(Time::ps(60), r, 3);
  CHECK(q.step());
  q.schedule_at(Time::ps(50), r, 1);
  q.schedule_at(Time::ps(50), r, 2);
  CHECK(move_all(q, Time::zero()).size() == 3);
  q.schedule_at(Time::ps(50), r, 4);
  q.schedule_at(Time::ps(60), r, 5);
  q.run();
  CHECK(r.log == Listed{{50, 0}, {50, 1}, {50, 2}, {50, 4}, {60, 3}, {60, 5}});
}

namespace {

// A random model checked against a reference: each event schedules children (at now, up to 300 ps
// or up to `spread` ps later; about 400 events stay pending) and sometimes cancels a pending event. The
// reference is the set of (time, scheduling number, tag); pending_events() must list it in order, and every
// firing must be its first element. move_and_shift() cancels every listed event and schedules it again
// `shift` later.
class Model final : public EventHandler {
 public:
  // With `post`, odd tags are posted (EventQueue::post_at, no EventId) and cancelled by cancel_if,
  // and a move cancels everything with one cancel_if.
  Model(EventQueue& q, std::uint64_t seed, std::uint64_t spread, bool post = false)
      : q_(q), rng_(seed), spread_(spread), post_(post) {}
  void start(int events) {
    for (int i = 0; i < events; ++i)
      schedule(Time::ps(static_cast<std::int64_t>(rng_() % 1000)), next_tag_++);
  }
  void on_event(std::uint64_t tag) override {
    const auto it = pending_.find(tag);
    if (reference_.empty() || it == pending_.end() ||
        *reference_.begin() != std::make_tuple(q_.now().ps(), it->second.seq, tag)) {
      ++order_errors_;
    } else {
      reference_.erase(reference_.begin());
      pending_.erase(it);
    }
    ++fired_;
    if (stopped_) return;
    // 1.5 children on average below 400 pending, 0.5 above (less the cancellations): about 400 stay.
    const int children = static_cast<int>(rng_() % (pending_.size() < 400 ? 4 : 2));
    for (int c = 0; c < children; ++c) {
      const std::uint64_t kind = rng_() % 3;
      const std::uint64_t range = kind == 1 ? 300 : spread_;
      schedule(q_.now() + (kind == 0 ? Time::zero() : Time::ps(static_cast<std::int64_t>(rng_() % range))),
               next_tag_++);
    }
    if (rng_() % 5 == 0 && !pending_.empty()) {
      auto victim = pending_.lower_bound(rng_() % next_tag_);
      if (victim == pending_.end()) victim = pending_.begin();
      if (is_posted(victim->first)) {
        const std::uint64_t tag = victim->first;
        CHECK(q_.cancel_if([&](const PendingEvent& e) { return e.tag == tag; }) == 1);
      } else {
        CHECK(q_.cancel(victim->second.id));
      }
      reference_.erase({victim->second.time, victim->second.seq, victim->first});
      pending_.erase(victim);
    }
    if (rng_() % 500 == 0) check_listing();  // from inside a handler too
  }
  void check_listing() {
    std::vector<std::tuple<std::int64_t, std::uint64_t>> expected, got;
    for (const auto& e : reference_) expected.emplace_back(std::get<0>(e), std::get<2>(e));
    for (const PendingEvent& e : q_.pending_events()) got.emplace_back(e.time.ps(), e.tag);
    if (got != expected) ++listing_errors_;
    ++listings_;
  }
  void move_and_shift(Time shift) {
    const std::vector<PendingEvent> listed_events = q_.pending_events();
    if (listed_events.size() != reference_.size()) ++listing_errors_;
    if (post_) {
      if (q_.cancel_if([](const PendingEvent&) { return true; }) != listed_events.size()) ++listing_errors_;
    } else {
      for (const PendingEvent& e : listed_events)
        if (!q_.cancel(e.id)) ++listing_errors_;
    }
    if (q_.pending() != 0) ++listing_errors_;
    reference_.clear();
    pending_.clear();
    for (const PendingEvent& e : listed_events) schedule(e.time + shift, e.tag);
  }
  std::uint64_t fired() const { return fired_; }
  int order_errors() const { return order_errors_; }
  int listing_errors() const { return listing_errors_; }
  int listings() const { return listings_; }
  bool done() const { return reference_.empty(); }
  void stop_growing() { stopped_ = true; }

 private:
  struct Pending {
    EventId id;
    std::int64_t time;
    std::uint64_t seq;
  };
  bool is_posted(std::uint64_t tag) const { return post_ && tag % 2 == 1; }
  void schedule(Time at, std::uint64_t tag) {
    const std::uint64_t seq = next_seq_++;
    EventId id;
    if (is_posted(tag)) {
      q_.post_at(at, *this, tag);
    } else {
      id = q_.schedule_at(at, *this, tag);
    }
    pending_[tag] = Pending{id, at.ps(), seq};
    reference_.insert({at.ps(), seq, tag});
  }
  EventQueue& q_;
  std::mt19937_64 rng_;
  std::uint64_t spread_;
  bool post_;
  std::map<std::uint64_t, Pending> pending_;                                    // by tag
  std::set<std::tuple<std::int64_t, std::uint64_t, std::uint64_t>> reference_;  // (time, seq, tag)
  std::uint64_t next_tag_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t fired_ = 0;
  bool stopped_ = false;
  int order_errors_ = 0;
  int listing_errors_ = 0;
  int listings_ = 0;
};

}  // namespace

TEST_CASE("EventQueue::pending_events and moves by cancel agree with a reference model") {
  // Spreads of 256 ps (children in the block being run and the next), 5,000 ps, 300,000 ps (64-ns
  // spans of dozens of events, sorted as a whole and listed while partly run) and 2^40 ps (every
  // level of the radix heap). Every few slices the listing is checked; sometimes everything is
  // cancelled and scheduled again 0 to 999 ps later. The events then still fire in the reference's order.
  // Then the same with half the events posted (no EventId), cancelled and moved by cancel_if.
  const std::uint64_t spreads[] = {256, 5'000, 300'000, std::uint64_t{1} << 40};
  for (int i = 0; i < 8; ++i) {
    CAPTURE(i);
    EventQueue q;
    Model model(q, 31 + static_cast<std::uint64_t>(i % 4), spreads[i % 4], /*post=*/i >= 4);
    model.start(300);
    std::mt19937_64 rng(77 + static_cast<std::uint64_t>(i % 4));
    int slices = 0, moves = 0;
    for (; slices < 2'000 && q.pending() > 0; ++slices) {
      q.run_until(q.now() + Time::ps(static_cast<std::int64_t>(rng() % (spreads[i % 4] / 20 + 50))));
      if (rng() % 4 == 0) (void)q.next_time();  // a look-ahead before listing
      if (rng() % 3 == 0) model.check_listing();
      if (rng() % 50 == 0) {
        model.move_and_shift(Time::ps(static_cast<std::int64_t>(rng() % 1000)));
        ++moves;
      }
    }
    CHECK(slices == 2'000);
    CHECK(moves > 20);  // about 2,000 / 50
    model.stop_growing();
    q.run();
    CHECK(model.order_errors() == 0);
    CHECK(model.listing_errors() == 0);
    CHECK(model.listings() > 800);  // about 2,000 / 3, and some from inside handlers
    CHECK(model.done());
    CHECK(model.fired() > 100'000);
  }
}

// Staged spans: a level-1 bucket of the radix heap (a 64-ns span, 256 blocks of 256 ps) with many
// events is sorted as a whole when it comes up; events later scheduled into its blocks must still
// come after the staged ones of equal time, be listed, cancelled and moved like any other.
namespace {

// Ten events whose blocks (time / 256 ps) are 257 to 468: all in [256, 511], one level-1 bucket
// while the clock is at 0. The first step takes it: base block 257 (66,000 ps), sorted, and fires
// tag 2, the first of the two at 66,000 ps. Tag 5 stays in the front; the rest stay staged.
void schedule_span(EventQueue& q, Recorder& r) {
  const std::pair<std::int64_t, std::uint64_t> events[] = {
      {70'000, 1}, {66'000, 2}, {70'000, 3}, {100'000, 4}, {66'000, 5},
      {80'000, 6}, {90'000, 7}, {70'000, 8}, {120'000, 9}, {66'100, 10}};
  for (const auto& e : events) q.schedule_at(Time::ps(e.first), r, e.second);
  REQUIRE(q.step());
  REQUIRE(r.log == Listed{{66'000, 2}});
}

}  // namespace

TEST_CASE("EventQueue: events scheduled into a staged span come after its events of equal time") {
  EventQueue q;
  Recorder r(q);
  schedule_span(q, r);
  // Now 66,000 ps. 70,000 and 69,999 ps are in block 273, staged; 66,000 ps is the front's block
  // (appended after tag 5); 100,000 ps is block 390, staged.
  q.schedule_at(Time::ps(70'000), r, 11);
  q.schedule_at(Time::ps(66'000), r, 12);
  q.schedule_at(Time::ps(100'000), r, 13);
  q.schedule_at(Time::ps(69'999), r, 14);
  // By time, then scheduling order (tags 1-10 before 11-14):
  const Listed expected{{66'000, 5},  {66'000, 12}, {66'100, 10}, {69'999, 14}, {70'000, 1},
                        {70'000, 3},  {70'000, 8},  {70'000, 11}, {80'000, 6},  {90'000, 7},
                        {100'000, 4}, {100'000, 13}, {120'000, 9}};
  CHECK(listed(q.pending_events(), &r) == expected);
  CHECK(q.pending() == 13);
  r.log.clear();
  q.run();
  CHECK(r.log == expected);
}

TEST_CASE("EventQueue: many events scheduled into one staged block keep their ties") {
  EventQueue q;
  Recorder r(q);
  schedule_span(q, r);
  // Block 273 (69,888-70,143 ps) is staged with tags 1, 3, 8 at 70,000 ps. Eleven more go into it
  // (more than the 8 merged by insertion): tags 100-109 at 70,000 ps, then 110 at 69,900 ps.
  for (std::uint64_t t = 100; t < 110; ++t) q.schedule_at(Time::ps(70'000), r, t);
  q.schedule_at(Time::ps(69'900), r, 110);
  r.log.clear();
  q.run_until(Time::ps(70'000));
  // 66,000: 5; 66,100: 10; 69,900: 110; 70,000: 1, 3, 8, then 100-109 in scheduling order.
  Listed expected{{66'000, 5}, {66'100, 10}, {69'900, 110}, {70'000, 1}, {70'000, 3}, {70'000, 8}};
  for (std::uint64_t t = 100; t < 110; ++t) expected.emplace_back(70'000, t);
  CHECK(r.log == expected);
  CHECK(q.pending() == 4);  // tags 6, 7, 4, 9
}

TEST_CASE("EventQueue: cancelling and moving events of a staged span") {
  EventQueue q;
  Recorder r(q);
  schedule_span(q, r);
  const auto late_id = q.schedule_at(Time::ps(80'000), r, 20);  // block 312, staged: after tag 6
  q.schedule_at(Time::ps(90'000), r, 21);                      // block 351, staged: after tag 7
  CHECK(q.cancel(late_id));
  CHECK_FALSE(q.cancel(late_id));
  // Listed in fire order: 66,000: 5; 66,100: 10; 70,000: 1, 3, 8; 80,000: 6; 90,000: 7, 21;
  // 100,000: 4; 120,000: 9 (tag 20 cancelled, not listed).
  const Listed expected{{66'000, 5}, {66'100, 10}, {70'000, 1}, {70'000, 3}, {70'000, 8},
                        {80'000, 6}, {90'000, 7},  {90'000, 21}, {100'000, 4}, {120'000, 9}};
  // Cancelled and scheduled again 1 us later, in the order listed, they fire in that order,
  // 1,000,000 ps later.
  CHECK(listed(move_all(q, Time::us(1)), &r) == expected);
  CHECK(q.pending() == expected.size());
  r.log.clear();
  q.run();
  Listed shifted;
  for (const auto& e : expected) shifted.emplace_back(e.first + 1'000'000, e.second);
  CHECK(r.log == shifted);
}

TEST_CASE(
    "EventQueue: posted events keep the scheduling order, take no slot and are cancelled by cancel_if") {
  // At 1 ns, in this order: 1 scheduled, 2 posted, 3 scheduled, 4 posted; then 5 posted at 300 ps and
  // 6 posted at 70 ns (another 64-ns span). Posts name nothing: their listed ids are empty, cancel()
  // of one does nothing; the scheduled events keep working handles.
  EventQueue q;
  Recorder r(q);
  const EventId one = q.schedule_at(Time::ns(1), r, 1);
  q.post_at(Time::ns(1), r, 2);
  const EventId three = q.schedule_at(Time::ns(1), r, 3);
  q.post_at(Time::ns(1), r, 4);
  q.post_at(Time::ps(300), r, 5);
  q.post_after(Time::ns(70), r, 6);
  CHECK(q.pending() == 6);
  const std::vector<PendingEvent> listed_events = q.pending_events();
  CHECK(listed(listed_events, &r) ==
        Listed{{300, 5}, {1'000, 1}, {1'000, 2}, {1'000, 3}, {1'000, 4}, {70'000, 6}});
  for (const PendingEvent& e : listed_events) {
    const bool posted = e.tag % 2 == 0 || e.tag == 5;
    CHECK(q.is_pending(e.id) == !posted);
    if (posted) CHECK_FALSE(q.cancel(e.id));
  }
  CHECK(q.pending() == 6);
  // One posted (4) and one scheduled (3) cancelled by what they are; 3's handle is then stale.
  CHECK(q.cancel_if([](const PendingEvent& e) { return e.tag == 4 || e.tag == 3; }) == 2);
  CHECK_FALSE(q.is_pending(three));
  CHECK(q.is_pending(one));
  CHECK(q.cancel_if([](const PendingEvent& e) { return e.tag == 4; }) == 0);  // already cancelled
  CHECK(q.pending() == 4);
  q.run();
  CHECK(r.log == Listed{{300, 5}, {1'000, 1}, {1'000, 2}, {70'000, 6}});
  CHECK_FALSE(q.is_pending(one));
  CHECK(q.pending() == 0);
}

TEST_CASE("EventQueue: posted events fired and cancelled leave the slots of scheduled ones alone") {
  // A chain of posts (each fired post posts the next 500 ps on) runs past a scheduled event that was
  // fired (its slot freed) and beside one still pending. After it, a new scheduled event's handle
  // works and the old ones are stale: a fired post that freed or reused a slot would break that.
  struct Poster final : EventHandler {
    explicit Poster(EventQueue& q) : queue(q) {}
    void on_event(std::uint64_t tag) override {
      log.push_back(tag);
      if (tag < 100) queue.post_after(Time::ps(500), *this, tag + 1);
    }
    EventQueue& queue;
    std::vector<std::uint64_t> log;
  };
  EventQueue q;
  Poster p(q);
  Recorder r(q);
  const EventId fired = q.schedule_at(Time::ps(700), r, 1000);
  const EventId later = q.schedule_at(Time::us(1), r, 1001);
  q.post_at(Time::zero(), p, 0);
  q.run_until(Time::ps(500 * 60));
  CHECK(p.log.size() == 61);
  CHECK(q.pending() == 2);  // the chain's next post and `later`
  CHECK_FALSE(q.is_pending(fired));
  CHECK(q.is_pending(later));
  const EventId fresh = q.schedule_after(Time::ns(5), r, 1002);
  CHECK(q.is_pending(fresh));
  CHECK_FALSE(q.cancel(fired));
  // The pending post dropped by cancel_if: the chain stops there and nothing else is touched.
  CHECK(q.cancel_if([&](const PendingEvent& e) { return e.handler == &p; }) == 1);
  CHECK(q.cancel(fresh));
  q.run();
  CHECK(p.log.size() == 61);
  CHECK(r.log == Listed{{700, 1000}, {1'000'000, 1001}});
}

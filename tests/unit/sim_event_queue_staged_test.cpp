// Tests of sim::EventQueue's staged spans: a level-1 bucket of the radix heap (a 64-ns span, 256
// blocks of 256 ps) with more than 8 events is sorted as a whole when it comes up, and events later
// scheduled into its blocks must still come after the staged ones of equal time, be listed, taken
// and cancelled like any other.
#include <doctest/doctest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/event_queue.h"

using hybridsim::sim::EventHandler;
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

Listed listed(const std::vector<PendingEvent>& events) {
  Listed out;
  for (const PendingEvent& e : events) out.emplace_back(e.time.ps(), e.tag);
  return out;
}

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
  CHECK(listed(q.pending_events()) == expected);
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

TEST_CASE("EventQueue: cancelling and taking events of a staged span") {
  EventQueue q;
  Recorder r(q);
  schedule_span(q, r);
  const auto late_id = q.schedule_at(Time::ps(80'000), r, 20);  // block 312, staged: after tag 6
  q.schedule_at(Time::ps(90'000), r, 21);                      // block 351, staged: after tag 7
  CHECK(q.cancel(late_id));
  CHECK_FALSE(q.cancel(late_id));
  // Taken in fire order: 66,000: 5; 66,100: 10; 70,000: 1, 3, 8; 80,000: 6; 90,000: 7, 21;
  // 100,000: 4; 120,000: 9 (tag 20 cancelled, not listed).
  const Listed expected{{66'000, 5}, {66'100, 10}, {70'000, 1}, {70'000, 3}, {70'000, 8},
                        {80'000, 6}, {90'000, 7},  {90'000, 21}, {100'000, 4}, {120'000, 9}};
  const std::vector<PendingEvent> taken = q.take_pending_events();
  CHECK(listed(taken) == expected);
  CHECK(q.pending() == 0);
  CHECK_FALSE(q.step());
  // Scheduled again 1 us later, in the order taken, they fire in that order, 1,000,000 ps later.
  for (const PendingEvent& e : taken) q.schedule_at(e.time + Time::us(1), *e.handler, e.tag);
  r.log.clear();
  q.run();
  Listed shifted;
  for (const auto& e : expected) shifted.emplace_back(e.first + 1'000'000, e.second);
  CHECK(r.log == shifted);
}

// The execution record's entries handed from one record to the next of a run
// (sim::ExecutionRecord::Storage): cleared and reused where they hold the new record's tasks and are
// not over twice as many, freed otherwise (an executor's record on them: sim_stream_executor_test.cpp).
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "sim/execution_record.h"

using namespace hybridsim::sim;

TEST_CASE("execution record: entries handed on are cleared and reused where they fit, else freed") {
  // Two streams of 3 and 2 tasks: 5 entries and one more (6), every one written.
  ExecutionRecord a({3, 2}, {0, 0});
  for (std::uint32_t t = 0; t < 3; ++t) a.set_ended(0, t, Time::us(t + 1));
  for (std::uint32_t t = 0; t < 2; ++t) a.set_ended(1, t, Time::us(t + 5));
  a.set_kernel_ended(0, 0, Time::us(1), Time::ps(7));
  a.set_released_by(1, 1, {0, 2});
  ExecutionRecord::Storage kept = a.take_storage();
  CHECK(kept.capacity() == 6);
  CHECK(a.stream_count() == 0);

  // 2 + 2 tasks: 5 entries, within 6 and at least half of it: the same block, read as fresh.
  ExecutionRecord b({2, 2}, {0, 1}, Time::zero(), std::move(kept));
  for (std::uint32_t s = 0; s < 2; ++s)
    for (std::uint32_t t = 0; t < 2; ++t) {
      CHECK_FALSE(b.has_run(s, t));
      CHECK(b.slowed(s, t) == Time::zero());
      CHECK_FALSE(b.released_by(s, t));
    }
  b.set_ended(0, 0, Time::us(3));
  CHECK(b.reached(0, 1) == Time::us(3));
  kept = b.take_storage();
  CHECK(kept.capacity() == 6);

  // 1 task (2 entries, fewer than half of 6): freed, a block of its own. 10 tasks (11): too few.
  ExecutionRecord c({1}, {0}, Time::zero(), std::move(kept));
  CHECK_FALSE(c.has_run(0, 0));
  CHECK(c.take_storage().capacity() == 2);
  ExecutionRecord d({10}, {0}, Time::zero(), ExecutionRecord({3, 2}, {0, 0}).take_storage());
  CHECK(d.take_storage().capacity() == 11);
}

// The execution record's entries handed from one record to the next of a run
// (sim::ExecutionRecord::Storage): cleared and reused where they hold the new record's tasks and are
// not over twice as many, freed otherwise; a record on reused entries reads as one on fresh ones.
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "sim/execution_record.h"
#include "sim/stream_executor.h"

using namespace hybridsim::sim;

TEST_CASE("execution record: entries handed on are cleared and reused where they fit, else freed") {
  // Two streams of 3 and 2 tasks: 5 entries and one more (6), every one written.
  ExecutionRecord a({3, 2}, {0, 0});
  for (std::uint32_t t = 0; t < 3; ++t) a.set_ended(0, t, Time::us(t + 1));
  for (std::uint32_t t = 0; t < 2; ++t) a.set_ended(1, t, Time::us(t + 5));
  a.set_slowed(0, 0, Time::ps(7));
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

TEST_CASE("stream executor: a record on an earlier run's entries reads as one on fresh ones") {
  // Run 1 (9 entries): GPU1's wait (stream 1, task 1) is released by GPU0's record at 100 us.
  GpuProgram g0, g1;
  g0.streams = {{"compute", {Task::record(1), Task::kernel(Time::us(100), 0), Task::record(0)}}};
  g1.streams = {
      {"compute", {Task::kernel(Time::us(5), 1), Task::wait(0), Task::kernel(Time::us(10), 2, Time::us(3))}},
      {"side", {Task::kernel(Time::us(1), 3), Task::wait(1)}}};
  EventQueue q1;
  const std::vector<GpuProgram> first = {g0, g1};
  StreamExecutor exec1(q1, first, {}, 2, {});
  exec1.start();
  q1.run();
  REQUIRE(exec1.record().released_by(1, 1) == ExecutionRecord::TaskRef{0, 2});
  ExecutionRecord::Storage kept = exec1.take_record_storage();
  REQUIRE(kept.capacity() == 9);

  // Run 2 (7 entries, the wait's at the same place) on them: e0 is recorded at 0 us, so the same wait,
  // reached at 5 us, is released by nothing and passes at 5 us; GPU1's 10 us kernel then runs 8-18 us
  // (3 us launch delay).
  GpuProgram h0, h1;
  h0.streams = {{"compute", {Task::record(0), Task::kernel(Time::us(100), 0), Task::kernel(Time::us(1), 4)}}};
  h1.streams = {
      {"compute", {Task::kernel(Time::us(5), 1), Task::wait(0), Task::kernel(Time::us(10), 2, Time::us(3))}}};
  EventQueue q2;
  const std::vector<GpuProgram> second = {h0, h1};
  StreamExecutor exec2(q2, second, {}, 1, {});
  exec2.reuse_record_storage(std::move(kept));
  exec2.start();
  q2.run();
  const ExecutionRecord& r = exec2.record();
  REQUIRE(r.stream_count() == 2);
  CHECK_FALSE(r.released_by(1, 1));
  CHECK(r.ended(1, 1) == Time::us(5));
  CHECK(r.ended(1, 2) == Time::us(18));
  CHECK(r.slowed(1, 2) == Time::zero());
  CHECK(r.ended(0, 2) == Time::us(101));
  CHECK(exec2.take_record_storage().capacity() == 9);  // the first run's block
}

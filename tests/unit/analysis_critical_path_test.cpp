// The critical path walk on hand-built programs whose path is known: across an event between GPUs,
// past a record that came before its wait, and through the last rank to join a collective.
#include <doctest/doctest.h>

#include "analysis/step/critical_path.h"
#include "sim/error.h"
#include "sim/ring_collective.h"
#include "sim/stream_executor.h"

using namespace hybridsim;
using sim::Task;
using sim::Time;

namespace {

analysis::CriticalPath walk(const workloads::StepProgram& program,
                            std::vector<sim::Collective*> collectives = {},
                            sim::EventQueue* external = nullptr, Time* step = nullptr) {
  sim::EventQueue local;
  sim::EventQueue& queue = external ? *external : local;
  sim::StreamExecutor exec(queue, program.gpus, std::move(collectives), program.event_count, {});
  exec.start();
  queue.run();
  REQUIRE(exec.is_done());
  if (step) *step = exec.finish_time();
  return analysis::critical_path(program, exec.record(), exec.finish_time());
}

}  // namespace

TEST_CASE("critical path: an event carries the path from one GPU to another") {
  // GPU0: 100 us, record e0; a side stream of 20 us. GPU1: a 5 us kernel, wait e0, 10 us.
  // The step ends at 110 us on GPU1; its path is GPU0's 100 us then GPU1's 10 us (GPU1's 5 us
  // kernel and GPU0's side stream are off the path).
  workloads::StepProgram p;
  p.gpus.resize(2);
  p.gpus[0].streams = {{"compute", {Task::kernel(Time::us(100), 0), Task::record(0)}},
                       {"side", {Task::kernel(Time::us(20), 1)}}};
  p.gpus[1].streams = {
      {"compute", {Task::kernel(Time::us(5), 2), Task::wait(0), Task::kernel(Time::us(10), 3)}}};
  p.event_count = 1;
  Time step;
  const auto path = walk(p, {}, nullptr, &step);
  CHECK(step == Time::us(110));
  CHECK(path.compute == Time::us(110));
  CHECK(path.gpus_visited == 2);
  CHECK(path.gpu_changes == 1);
}

TEST_CASE("critical path: a wait whose event was recorded earlier stays on its own stream") {
  // The record happens at 10 us; GPU1 reaches the wait at 50 us, so it did not wait at all.
  workloads::StepProgram p;
  p.gpus.resize(2);
  p.gpus[0].streams = {{"compute", {Task::kernel(Time::us(10), 0), Task::record(0)}}};
  p.gpus[1].streams = {
      {"compute", {Task::kernel(Time::us(50), 1), Task::wait(0), Task::kernel(Time::us(10), 2)}}};
  p.event_count = 1;
  const auto path = walk(p);
  CHECK(path.compute == Time::us(60));
  CHECK(path.gpus_visited == 1);
  CHECK(path.gpu_changes == 0);
}

TEST_CASE("critical path: a collective is charged from its last rank's arrival, on that rank's path") {
  sim::LinkTable links;
  links.add({sim::LinkKind::NVLink, sim::Bandwidth::gb_per_second(25), Time::ns(500), "0→1"});
  links.add({sim::LinkKind::NVLink, sim::Bandwidth::gb_per_second(25), Time::ns(500), "1→0"});
  const sim::RingChannel ring{{0, 1}, {{0}, {1}}};
  sim::EventQueue q;
  sim::Network net(q, links);
  sim::RingCollective ar(net, sim::CollectiveOp::AllReduce, 2, {ring}, sim::Bytes::mib(8), {});
  // GPU0 computes 200 us, GPU1 300 us; then both join an all-reduce. GPU1 arrives last, so the path
  // is GPU1's 300 us of compute, then the all-reduce from 300 us to the end of the step.
  workloads::StepProgram p;
  p.gpus.resize(2);
  p.gpus[0].streams = {{"compute", {Task::kernel(Time::us(200), 0), Task::record(0)}},
                       {"communication", {Task::wait(0), Task::collective(0, 0)}}};
  p.gpus[1].streams = {{"compute", {Task::kernel(Time::us(300), 1), Task::record(1)}},
                       {"communication", {Task::wait(1), Task::collective(0, 1)}}};
  p.event_count = 2;
  workloads::CollectiveSpec spec;
  spec.members = {0, 1};
  p.collectives = {spec};
  Time step;
  const auto path = walk(p, {&ar}, &q, &step);
  CHECK(path.compute == Time::us(300));
  CHECK(path.gradient_communication == step - Time::us(300));
  CHECK(path.model_parallel_transfers == Time::zero());
  CHECK(path.gpus_visited >= 1);
  // Whichever rank finished last, the path ends up on GPU1, where the 300 us ran.
  CHECK(path.gpu_changes <= 1);
}

TEST_CASE("critical path: a kernel's launch delay is a part of its own, not compute") {
  workloads::StepProgram p;
  p.gpus.resize(1);
  p.gpus[0].streams = {
      {"compute", {Task::kernel(Time::us(10), 0), Task::kernel(Time::us(20), 1, Time::us(3))}}};
  Time step;
  const auto path = walk(p, {}, nullptr, &step);
  CHECK(step == Time::us(33));
  CHECK(path.compute == Time::us(30));
  CHECK(path.launch_gaps == Time::us(3));
}

TEST_CASE("critical path: a record of an unfinished step, or of another program, is refused") {
  // The check reads each stream's last entry (a stream ends its tasks in order) and its task count.
  workloads::StepProgram p;
  p.gpus.resize(2);
  p.gpus[0].streams = {{"compute", {Task::kernel(Time::us(10), 0), Task::kernel(Time::us(10), 1)}}};
  p.gpus[1].streams = {{"compute", {Task::kernel(Time::us(30), 2), Task::kernel(Time::us(30), 3)}}};
  sim::EventQueue queue;
  sim::StreamExecutor exec(queue, p.gpus, {}, 0, {});
  exec.start();
  queue.run_until(Time::us(40));  // GPU1's second kernel still runs
  CHECK_THROWS_WITH_AS(analysis::critical_path(p, exec.record(), Time::us(60)),
                       "critical path: a task of the step never ran", InternalError);
  queue.run();
  CHECK(analysis::critical_path(p, exec.record(), Time::us(60)).compute == Time::us(60));
  // As many streams, but the tasks split otherwise between them: reading each stream's tasks by the
  // other program's counts would run into the next stream's entries, which ran.
  workloads::StepProgram other = p;
  other.gpus[0].streams[0].tasks.push_back(Task::kernel(Time::us(10), 4));
  other.gpus[1].streams[0].tasks = {Task::kernel(Time::us(30), 2)};
  CHECK_THROWS_WITH_AS(analysis::critical_path(other, exec.record(), Time::us(60)),
                       "critical path: the record is of another program", InternalError);
}

// GPU streams: in-order kernels, overlapping streams, CUDA-like events across streams and GPUs,
// collective tasks that block a stream until its rank is done.
#include <doctest/doctest.h>

#include "sim/ring_collective.h"
#include "sim/stream_executor.h"

using namespace hybridsim::sim;

namespace {

Time run(const std::vector<GpuProgram>& programs, std::uint32_t events,
         std::vector<Collective*> collectives = {}, EventQueue* external = nullptr,
         StreamExecutorOptions options = {}) {
  EventQueue local;
  EventQueue& queue = external ? *external : local;
  StreamExecutor exec(queue, programs, std::move(collectives), events, options);
  exec.start();
  queue.run();
  CHECK(exec.is_done());
  CHECK(exec.describe_stuck().empty());
  return exec.finish_time();
}

}  // namespace

TEST_CASE("one stream: step time is the sum of its kernels") {
  GpuProgram gpu;
  gpu.streams = {{"compute", {Task::kernel(Time::us(40), 0), Task::kernel(Time::us(25), 1),
                              Task::kernel(Time::ns(1500), 2)}}};
  CHECK(run({gpu}, 0) == Time::us(66) + Time::ns(500));
}

TEST_CASE("streams of one GPU overlap; a wait orders them like a CUDA event") {
  GpuProgram gpu;
  // compute: 40 us, record e0, 30 us.  side: wait e0, 50 us.  Side ends at 40 + 50 = 90 us.
  gpu.streams = {{"compute", {Task::kernel(Time::us(40), 0), Task::record(0), Task::kernel(Time::us(30), 1)}},
                 {"side", {Task::wait(0), Task::kernel(Time::us(50), 2)}}};
  CHECK(run({gpu}, 1) == Time::us(90));
}

TEST_CASE("a wait on an event already recorded does not block") {
  GpuProgram gpu;
  gpu.streams = {{"a", {Task::record(0), Task::kernel(Time::us(10), 0)}},
                 {"b", {Task::kernel(Time::us(20), 1), Task::wait(0), Task::kernel(Time::us(5), 2)}}};
  CHECK(run({gpu}, 1) == Time::us(25));
}

TEST_CASE("events work across GPUs") {
  GpuProgram g0, g1;
  g0.streams = {{"compute", {Task::kernel(Time::us(100), 0), Task::record(0)}}};
  g1.streams = {{"compute", {Task::wait(0), Task::kernel(Time::us(10), 1)}}};
  CHECK(run({g0, g1}, 1) == Time::us(110));
}

TEST_CASE("compute scale models a faster GPU; slowdown applies only beside communication") {
  GpuProgram gpu;
  gpu.compute_scale = 0.5;
  gpu.streams = {{"compute", {Task::kernel(Time::us(100), 0)}}};
  CHECK(run({gpu}, 0) == Time::us(50));
}

TEST_CASE("a collective task blocks its stream until the rank is done") {
  LinkTable links;
  links.add({LinkKind::NVLink, Bandwidth::gb_per_second(25), Time::ns(500), "0→1"});
  links.add({LinkKind::NVLink, Bandwidth::gb_per_second(25), Time::ns(500), "1→0"});
  const RingChannel ring{{0, 1}, {{0}, {1}}};
  const Bytes size = Bytes::mib(8);

  // The all-reduce alone.
  Time alone;
  {
    EventQueue q;
    Network net(q, links);
    RingCollective ar(net, CollectiveOp::AllReduce, 2, {ring}, size, {});
    ar.start_all();
    q.run();
    alone = ar.finish_time();
  }
  // GPU0 computes 200 us, GPU1 300 us, then each records e_g; the communication stream waits for
  // it and joins the all-reduce. GPU1 joins last, so the step ends at 300 us + the all-reduce
  // (GPU0's data is already waiting for it; the ring then runs as if both started at 300 us).
  EventQueue q;
  Network net(q, links);
  RingCollective ar(net, CollectiveOp::AllReduce, 2, {ring}, size, {});
  GpuProgram g0, g1;
  g0.streams = {{"compute", {Task::kernel(Time::us(200), 0), Task::record(0)}},
                {"communication", {Task::wait(0), Task::collective(0, 0)}}};
  g1.streams = {{"compute", {Task::kernel(Time::us(300), 0), Task::record(1)}},
                {"communication", {Task::wait(1), Task::collective(0, 1)}}};
  const Time step = run({g0, g1}, 2, {&ar}, &q);
  CHECK(step > Time::us(300));
  CHECK(step <= Time::us(300) + alone);
  // GPU0 started 100 us early and pushed its first step's messages, so at most that part is saved.
  CHECK(step >= Time::us(300) + alone - Time::us(100));
}

TEST_CASE("a wait that is never satisfied is reported as stuck") {
  GpuProgram gpu;
  gpu.streams = {{"compute", {Task::wait(0), Task::kernel(Time::us(1), 0)}}};
  EventQueue q;
  const std::vector<GpuProgram> programs = {gpu};
  StreamExecutor exec(q, programs, {}, 1, {});
  exec.start();
  q.run();
  CHECK_FALSE(exec.is_done());
  CHECK(exec.describe_stuck().find("waiting for event 0") != std::string::npos);
}

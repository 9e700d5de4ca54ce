// GPU streams: in-order kernels, overlapping streams, CUDA-like events across streams and GPUs,
// collective tasks that block a stream until its rank is done.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

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

// The execution record's case: GPU0 records e1, runs 100 us, records e0; GPU1 runs 5 us, waits for
// e0, runs 10 us after a 3 us launch delay; GPU1's second stream runs 1 us and waits for e1.
std::vector<GpuProgram> waits_across_gpus() {
  GpuProgram g0, g1;
  g0.streams = {{"compute", {Task::record(1), Task::kernel(Time::us(100), 0), Task::record(0)}}};
  g1.streams = {
      {"compute", {Task::kernel(Time::us(5), 1), Task::wait(0), Task::kernel(Time::us(10), 2, Time::us(3))}},
      {"side", {Task::kernel(Time::us(1), 3), Task::wait(1)}}};
  return {g0, g1};
}

}  // namespace

TEST_CASE("one stream: step time is the sum of its kernels") {
  GpuProgram gpu;
  gpu.streams = {{"compute", {Task::kernel(Time::us(40), 0), Task::kernel(Time::us(25), 1),
                              Task::kernel(Time::ns(1500), 2)}}};
  CHECK(run({gpu}, 0) == Time::us(66) + Time::ns(500));
}

TEST_CASE("streams of one GPU overlap, a wait orders them like a CUDA event") {
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

TEST_CASE("compute scale models a faster GPU") {
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

// ---- What the executor records, and how communication slows the kernels beside it ----

namespace {

// A collective whose every rank is done a fixed time after it joins: the rates below depend only
// on when it runs, so the expected times are simple arithmetic.
class FixedCollective final : public Collective {
 public:
  FixedCollective(EventQueue& q, std::uint32_t ranks, Time duration)
      : q_(q), n_(ranks), d_(duration), finish_(ranks) {}
  void notify_rank_done(EventHandler& h, std::uint64_t tag_base) override {
    handler_ = &h;
    base_ = tag_base;
  }
  void start(std::uint32_t rank) override {
    finish_[rank] = q_.now() + d_;
    q_.schedule_at(finish_[rank], *handler_, base_ + rank);
  }
  std::uint32_t ranks() const override { return n_; }
  bool is_done() const override { return true; }
  Time rank_finish_time(std::uint32_t r) const override { return finish_[r]; }
  Time finish_time() const override { return finish_[0]; }
  std::uint64_t messages_sent() const override { return 0; }
  std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const override { return {}; }
  ExpectedEvents expected_events() const override { return {}; }  // it sends nothing
  void on_event(std::uint64_t) override {}

 private:
  EventQueue& q_;
  std::uint32_t n_;
  Time d_;
  std::vector<Time> finish_;
  EventHandler* handler_ = nullptr;
  std::uint64_t base_ = 0;
};

// A V100 as sim/ sees it: 80 SMs, 900 GB/s of HBM, 600 GB/s reached by a memory-bound kernel.
GpuResources v100() { return {80, Bandwidth::gb_per_second(900), Bandwidth::gb_per_second(600)}; }

struct Run {
  Time step;
  std::vector<Time> slowed;  // of the "compute" stream's tasks
  std::vector<Time> ended;
};

// GPU 0 runs `compute` on its first stream; a "side" stream runs `side_kernel` then records e0; the
// communication stream waits for e0 and joins a FixedCollective of `collective_time` and `load`.
Run contend(std::vector<Task> compute, Time side_kernel, Time collective_time, CollectiveLoad load,
            StreamExecutorOptions options = {}, GpuResources resources = v100()) {
  EventQueue q;
  FixedCollective coll(q, 1, collective_time);
  GpuProgram g;
  g.resources = resources;
  g.streams = {{"compute", std::move(compute)},
               {"side", {Task::kernel(side_kernel, 9), Task::record(0)}},
               {"communication", {Task::wait(0), Task::collective(0, 0)}}};
  const std::vector<GpuProgram> programs = {g};
  StreamExecutor exec(q, programs, {&coll}, 1, options, {load});
  exec.start();
  q.run();
  REQUIRE(exec.is_done());
  Run r{exec.finish_time(), {}, {}};
  for (std::uint32_t i = 0; i < programs[0].streams[0].tasks.size(); ++i) {
    r.slowed.push_back(exec.record().slowed(0, i));
    r.ended.push_back(exec.record().ended(0, i));
  }
  return r;
}

}  // namespace

TEST_CASE("contention: a compute-bound kernel loses the collective's SMs while it runs, piecewise") {
  // 100 us alone. The collective holds 16 of 80 SMs from 20 us to 60 us: 20 us of work at full
  // rate, 40 us × 64/80 = 32 us of work, the remaining 48 us at full rate again: ends at 108 us,
  // 8 us slowed.
  const Run r = contend({Task::kernel(Time::us(100), 0)}, Time::us(20), Time::us(40), {16, Bandwidth()});
  CHECK(r.ended[0] == Time::us(108));
  CHECK(r.slowed[0] == Time::us(8));
  // A memory-bound kernel does not care about SMs (and this collective moves no memory).
  const Run m = contend({Task::kernel(Time::us(100), 0, Time::zero(), KernelBound::Memory)}, Time::us(20),
                        Time::us(40), {16, Bandwidth()});
  CHECK(m.ended[0] == Time::us(100));
  CHECK(m.slowed[0] == Time::zero());
}

TEST_CASE(
    "contention: a memory-bound kernel shares HBM with the collective's traffic in proportion to demand") {
  // The collective starts at once (side kernel of 0) and outlasts the kernel. Kernel alone 600 GB/s,
  // collective 450 GB/s, peak 900: the kernel gets 900 / (600 + 450) = 6/7 of its rate, so 70 us take
  // 70 × 7/6 = 81.666... us, rounded up to the picosecond: 81,666,667 ps.
  const Run r = contend({Task::kernel(Time::us(70), 0, Time::zero(), KernelBound::Memory)}, Time::zero(),
                        Time::ms(1), {4, Bandwidth::gb_per_second(450)});
  CHECK(r.ended[0] == Time::ps(81'666'667));
  CHECK(r.slowed[0] == Time::ps(11'666'667));
  // 300 GB/s of traffic leaves the kernel its 600 of 900: no slowdown.
  const Run fits = contend({Task::kernel(Time::us(70), 0, Time::zero(), KernelBound::Memory)}, Time::zero(),
                           Time::ms(1), {4, Bandwidth::gb_per_second(300)});
  CHECK(fits.ended[0] == Time::us(70));
}

TEST_CASE("contention: off, or on a GPU without resources, kernels take their time alone") {
  const CollectiveLoad heavy{40, Bandwidth::gb_per_second(900)};
  CHECK(contend({Task::kernel(Time::us(100), 0)}, Time::zero(), Time::ms(1), heavy, {.contention = false})
            .ended[0] == Time::us(100));
  CHECK(contend({Task::kernel(Time::us(100), 0)}, Time::zero(), Time::ms(1), heavy, {}, GpuResources{})
            .ended[0] == Time::us(100));
  // On: 40 of 80 SMs held, half the rate: 200 us.
  CHECK(contend({Task::kernel(Time::us(100), 0)}, Time::zero(), Time::ms(1), heavy).ended[0] ==
        Time::us(200));
}

TEST_CASE(
    "contention: a kernel keeps one SM even when collectives hold them all, and rates apply per kernel") {
  // 80 SMs held from 0 to 50 us: the first kernel (1 us alone) keeps 1 of 80 SMs and does
  // 50 / 80 = 0.625 us of work by then; the remaining 0.375 us at full rate end it at 50.375 us.
  // The second kernel starts after the collective ended: alone, 10 us.
  const Run r = contend({Task::kernel(Time::us(1), 0), Task::kernel(Time::us(10), 1)}, Time::zero(),
                        Time::us(50), {80, Bandwidth()});
  CHECK(r.ended[0] == Time::ns(50'375));
  CHECK(r.slowed[0] == Time::ns(49'375));
  CHECK(r.ended[1] == Time::ns(60'375));
  CHECK(r.slowed[1] == Time::zero());
}

TEST_CASE("contention: a slowed kernel's end is exact past 2^63 ps of work times SMs too") {
  // 1 of 80 SMs held throughout, so each kernel runs at 79/80 and takes ceil(work × 80 / 79):
  // 1 s = 10^12 ps gives 1,012,658,227,848.1... -> 1,012,658,227,849 ps; 40 hours = 1.44 × 10^17 ps,
  // whose product with 80 (1.152 × 10^19) is past 2^63, gives 145,822,784,810,126,582.2... ->
  // 145,822,784,810,126,583 ps.
  const Time one = Time::ps(1'012'658'227'849);
  const Time forty_hours = Time::ps(145'822'784'810'126'583);
  const Run r = contend({Task::kernel(Time::s(1), 0), Task::kernel(Time::s(144'000), 1)}, Time::zero(),
                        Time::s(1'000'000), {1, Bandwidth()});
  CHECK(r.ended[0] == one);
  CHECK(r.slowed[0] == one - Time::s(1));
  CHECK(r.ended[1] == one + forty_hours);
  CHECK(r.slowed[1] == forty_hours - Time::s(144'000));
}

TEST_CASE("kernel after kernel: each one's launch delay is sat out, and each starts at the rate of then") {
  // Compute stream: 10 us, then 10 us after a 5 us launch delay, then 10 us, then 10 us after 2 us.
  // Alone: ends at 10, 25, 35 and 47 us. With the collective holding 40 of 80 SMs from 0 to 30 us
  // (half rate): the first kernel takes 20 us; the second is reached at 20, starts at 25, has done
  // 2.5 us of its work by 30 (5 us at half rate) and the other 7.5 us alone: ends at 37.5 us; the
  // third runs 37.5-47.5; the fourth starts at 49.5 and ends at 59.5 us.
  const std::vector<Task> compute = {
      Task::kernel(Time::us(10), 0), Task::kernel(Time::us(10), 1, Time::us(5)),
      Task::kernel(Time::us(10), 2), Task::kernel(Time::us(10), 3, Time::us(2))};
  const Run alone = contend(compute, Time::zero(), Time::us(30), {40, Bandwidth()}, {.contention = false});
  CHECK(alone.ended == std::vector<Time>{Time::us(10), Time::us(25), Time::us(35), Time::us(47)});
  const Run r = contend(compute, Time::zero(), Time::us(30), {40, Bandwidth()});
  CHECK(r.ended == std::vector<Time>{Time::us(20), Time::ns(37'500), Time::ns(47'500), Time::ns(59'500)});
  CHECK(r.slowed == std::vector<Time>{Time::us(10), Time::ns(2'500), Time::zero(), Time::zero()});
}

TEST_CASE("a per-sample kernel scales with the GPU's sample scale, a fixed-work one does not") {
  GpuProgram gpu;
  gpu.sample_scale = 2.0;
  gpu.compute_scale = 0.5;
  // 10 us × 0.5 × 2 = 10 us, then 10 us × 0.5 = 5 us.
  gpu.streams = {{"compute", {Task::kernel(Time::us(10), 0), Task::kernel(Time::us(10), 1).fixed_work()}}};
  CHECK(run({gpu}, 0) == Time::us(15));
}

TEST_CASE("readers of a shared list run its waits on their own events (the executor reads it as stored)") {
  // GPUs 0 and 1 share one list, wait for event 0 then a 5 us kernel, GPU 1's events shifted by one.
  // GPU 2 records event 0 after 10 us and event 1 after 30 us (two streams): GPU 0 ends at 15 us,
  // GPU 1 at 35 us. Read without the shift, GPU 1 would wait for event 0 and end at 15 us too.
  TaskList base{Task::wait(0), Task::kernel(Time::us(5), 0)};
  std::vector<GpuProgram> programs(3);
  programs[0].streams = {{"compute", TaskList::shifted_from(base, 0, 0)}};
  programs[1].streams = {{"compute", TaskList::shifted_from(base, 1, 0)}};
  programs[2].streams = {{"a", {Task::kernel(Time::us(10), 1), Task::record(0)}},
                         {"b", {Task::kernel(Time::us(30), 2), Task::record(1)}}};
  EventQueue q;
  StreamExecutor exec(q, programs, {}, 2, {});
  exec.start();
  q.run();
  REQUIRE(exec.is_done());
  CHECK(exec.gpu_finish_time(0) == Time::us(15));
  CHECK(exec.gpu_finish_time(1) == Time::us(35));
  CHECK(exec.gpu_finish_time(2) == Time::us(30));
}

TEST_CASE("execution record: reach, end, and which record released a wait") {
  // GPU0: 100 us kernel, record e0. GPU1: 5 us kernel, wait e0 (reached at 5 us, released by GPU0's
  // record at 100 us), 10 us kernel with a 3 us launch delay (reached at 100 us, runs 103-113 us).
  // GPU1's second stream waits for e1, recorded by GPU0 at 0 us before it got there: not released.
  EventQueue q;
  const std::vector<GpuProgram> programs = waits_across_gpus();
  StreamExecutor exec(q, programs, {}, 2, {});
  exec.start();
  q.run();
  const ExecutionRecord& r = exec.record();
  REQUIRE(r.stream_count() == 3);
  CHECK(r.gpu_of(2) == 1);
  CHECK(r.reached(1, 1) == Time::us(5));
  CHECK(r.ended(1, 1) == Time::us(100));
  CHECK(r.released_by(1, 1) == ExecutionRecord::TaskRef{0, 2});
  CHECK(r.reached(1, 2) == Time::us(100));
  CHECK(r.ended(1, 2) == Time::us(113));
  CHECK(r.slowed(1, 2) == Time::zero());
  CHECK_FALSE(r.released_by(2, 1));
  CHECK(r.ended(2, 1) == Time::us(1));
  CHECK(exec.finish_time() == Time::us(113));
  // The same through one stream's entries (how step metrics read them): stream 1's begin after
  // stream 0's three, stream 2's after stream 1's three.
  const ExecutionRecord::Stream s1 = r.stream(1);
  CHECK(s1.has_run(0));
  CHECK(s1.reached(1) == Time::us(5));
  CHECK(s1.ended(1) == Time::us(100));
  CHECK(s1.reached(2) == Time::us(100));
  CHECK(s1.ended(2) == Time::us(113));
  CHECK(s1.slowed(2) == Time::zero());
  CHECK(r.stream(2).ended(1) == Time::us(1));
  CHECK(r.stream(0).ended(1) == Time::us(100));
}

TEST_CASE("contention: a rank waiting for the others holds its SMs but moves no memory yet") {
  // A 2-rank FixedCollective (each rank done 100 us after it joins) with 8 SMs and 450 GB/s. GPU 0
  // joins at once and runs a 70 us memory-bound kernel beside it; GPU 1 joins at 50 us. Until 50 us
  // nothing flows: the kernel runs alone (50 us of work); then it shares HBM at 6/7 of its rate:
  // the remaining 20 us take 20 × 7/6 = 23.333... us → ends at 73,333,334 ps (rounded up).
  EventQueue q;
  FixedCollective coll(q, 2, Time::us(100));
  GpuProgram g0, g1;
  g0.resources = g1.resources = v100();
  g0.streams = {{"compute", {Task::kernel(Time::us(70), 0, Time::zero(), KernelBound::Memory)}},
                {"communication", {Task::collective(0, 0)}}};
  g1.streams = {{"compute", {Task::kernel(Time::us(50), 1), Task::record(0)}},
                {"communication", {Task::wait(0), Task::collective(0, 1)}}};
  const std::vector<GpuProgram> programs = {g0, g1};
  StreamExecutor exec(q, programs, {&coll}, 1, {}, {{8, Bandwidth::gb_per_second(450)}});
  exec.start();
  q.run();
  CHECK(exec.record().ended(0, 0) == Time::ps(73'333'334));
  // GPU 1's kernel ran before its rank joined: alone.
  CHECK(exec.record().ended(2, 0) == Time::us(50));
}

TEST_CASE(
    "a folded step records only its representatives' tasks, a member finishes with its representative") {
  // Two GPUs alike: a 10 us kernel, record its event; the communication stream waits for it and
  // joins a 2-rank collective that lasts 5 us from each rank's join. Folded onto GPU 0, GPU 1's
  // streams never run: its rank joins when GPU 0's does (10 us) and ends with it (15 us), so the
  // fold holds, both GPUs finish at 15 us, and the record has entries for GPU 0's 2 + 2 tasks only.
  EventQueue q;
  FixedCollective coll(q, 2, Time::us(5));
  std::vector<GpuProgram> programs(2);
  for (std::uint32_t g = 0; g < 2; ++g)
    programs[g].streams = {{"compute", {Task::kernel(Time::us(10), 0), Task::record(g)}},
                           {"communication", {Task::wait(g), Task::collective(0, g)}}};
  StreamExecutor exec(q, programs, {&coll}, 2, {});
  exec.set_fold({{0, 0}, {0}, {}});
  exec.start();
  q.run();
  REQUIRE(exec.is_done());
  CHECK(exec.fold_held());
  CHECK(exec.finish_time() == Time::us(15));
  CHECK(exec.gpu_finish_time(1) == Time::us(15));
  CHECK(coll.rank_finish_time(1) == Time::us(15));
  const ExecutionRecord& r = exec.record();
  REQUIRE(r.stream_count() == 4);
  CHECK(r.task_count(0) == 2);
  CHECK(r.task_count(1) == 2);
  CHECK(r.task_count(2) == 0);
  CHECK(r.task_count(3) == 0);
  CHECK(r.gpu_of(3) == 1);
  CHECK(r.ended(0, 0) == Time::us(10));
  CHECK(r.reached(1, 1) == Time::us(10));
  CHECK(r.ended(1, 1) == Time::us(15));
}

namespace {

// What a set-up told, a line a tick: "PART DONE/TOTAL UNIT".
struct Ticks final : WorkProgress {
  std::vector<std::string> told;
  void built(std::string_view part, std::uint64_t done, std::uint64_t total, std::string_view unit) override {
    told.push_back(std::string(part) + " " + std::to_string(done) + "/" + std::to_string(total) + " " +
                   std::string(unit));
  }
};

}  // namespace

TEST_CASE("the executor's set-up tells its progress GPU by GPU: at 0, every kWorkTickEvery and at the end") {
  // 130 GPUs of one stream and one kernel each, folded onto GPUs 0 and 1 (g % 2): each part walks
  // every GPU (or stream), so each is told at 0, 64, 128 and 130 of 130, in the order they run.
  Ticks ticks;
  static_assert(kWorkTickEvery == 64);
  constexpr std::uint32_t n = 130;
  GpuProgram gpu;
  gpu.streams = {{"compute", {Task::kernel(Time::us(10), 0)}}};
  const std::vector<GpuProgram> programs(n, gpu);
  EventQueue q;
  StreamExecutor exec(q, programs, {}, 0, {}, {}, &ticks);
  StepFold fold;
  for (std::uint32_t g = 0; g < n; ++g) fold.representative.push_back(g % 2);
  exec.set_fold(fold);
  exec.start();
  std::vector<std::string> expected;
  for (const char* part :
       {"checking its GPUs' programs", "folding its GPUs' streams", "recording its GPUs' tasks"})
    for (const int done : {0, 64, 128, 130})
      expected.push_back(std::string(part) + " " + std::to_string(done) + "/130 GPUs");
  for (const int done : {0, 64, 128, 130})
    expected.push_back("starting its GPUs' streams " + std::to_string(done) + "/130 streams");
  CHECK(ticks.told == expected);
  q.run();
  CHECK(exec.is_done());
  CHECK(exec.finish_time() == Time::us(10));
  CHECK(ticks.told.size() == expected.size());  // nothing told once the events run
}

TEST_CASE("the executor checks every reader of a shared list: its events shifted, its collectives") {
  // One list read by GPUs 0..2, each its events shifted by its index (events 0..2 of 3) and its
  // collective by one of two (rank 1 of collective 0, of 2 ranks; collective 1 has 1 rank).
  EventQueue q;
  FixedCollective two(q, 2, Time::us(1)), one(q, 1, Time::us(1));
  TaskList base{Task::record(0), Task::kernel(Time::us(1), 0), Task::wait(0), Task::collective(0, 1)};
  const auto programs = [&](std::uint32_t last_event_shift, std::uint32_t last_collective_shift) {
    std::vector<GpuProgram> out(3);
    for (std::uint32_t g = 0; g < 3; ++g)
      out[g].streams = {{"compute", TaskList::shifted_from(base, g == 2 ? last_event_shift : g,
                                                           g == 2 ? last_collective_shift : 0)}};
    return out;
  };
  const std::vector<GpuProgram> fits = programs(2, 0);
  CHECK_NOTHROW(StreamExecutor(q, fits, {&two, &one}, 3, {}));
  // The third GPU's events shifted past the step's: its first record says so, as read in full.
  const std::vector<GpuProgram> past = programs(3, 0);
  CHECK_THROWS_WITH_AS(StreamExecutor(q, past, {&two, &one}, 3, {}), "GPU 2 stream compute uses event 3 of 3",
                       hybridsim::InternalError);
  // Its collective shifted to collective 1, which has no rank 1 (its events in range).
  const std::vector<GpuProgram> rank = programs(2, 1);
  CHECK_THROWS_WITH_AS(StreamExecutor(q, rank, {&two, &one}, 3, {}),
                       "GPU 2 stream compute names a collective rank that does not exist",
                       hybridsim::InternalError);
}

TEST_CASE("stream executor: a stream woken by a record that at once waits on another event") {
  // GPU0 records e0 at 100 us and e1 at 300 us. GPU1: stream 2 waits on e1 from 0 us; stream 3 waits
  // on e0 from 50 us, then on e1; stream 4 on e0 from 60 us. e0's record wakes streams 3 and 4 (in the
  // order they came): stream 3 at once joins e1's waiters behind stream 2, which rewrites its link,
  // so e0's list is taken whole before anyone is woken (read after, stream 4 is never woken).
  GpuProgram g0, g1;
  g0.streams = {{"r0", {Task::kernel(Time::us(100), 0), Task::record(0)}},
                {"r1", {Task::kernel(Time::us(300), 1), Task::record(1)}}};
  g1.streams = {
      {"d", {Task::wait(1), Task::kernel(Time::us(10), 2)}},
      {"b", {Task::kernel(Time::us(50), 3), Task::wait(0), Task::wait(1), Task::kernel(Time::us(10), 4)}},
      {"a", {Task::kernel(Time::us(60), 5), Task::wait(0), Task::kernel(Time::us(20), 6)}}};
  EventQueue q;
  const std::vector<GpuProgram> programs = {g0, g1};
  StreamExecutor exec(q, programs, {}, 2, {});
  exec.start();
  q.run();
  REQUIRE(exec.is_done());
  CHECK(exec.finish_time() == Time::us(310));
  const ExecutionRecord& r = exec.record();
  // Each wait (stream, task): when it ended and the record (stream, task) that released it.
  struct Released {
    std::uint32_t stream, task;
    Time ended;
    ExecutionRecord::TaskRef by;
  };
  for (const Released w : {Released{3, 1, Time::us(100), {0, 1}}, Released{4, 1, Time::us(100), {0, 1}},
                           Released{3, 2, Time::us(300), {1, 1}}, Released{2, 0, Time::us(300), {1, 1}}}) {
    CAPTURE(w.stream);
    CAPTURE(w.task);
    CHECK(r.ended(w.stream, w.task) == w.ended);
    CHECK(r.released_by(w.stream, w.task) == w.by);
  }
  CHECK(r.reached(3, 2) == Time::us(100));
  CHECK(r.ended(4, 2) == Time::us(120));
  CHECK(r.ended(3, 3) == Time::us(310));
  CHECK(r.ended(2, 1) == Time::us(310));
}

TEST_CASE("stream executor: many streams blocked on one event are all released by its record") {
  // Stream 0 records e0 at 100 us; streams 1-6 (a GPU each) reach their wait at 10, 20, ... 60 us,
  // and stream 7 at 100 us, as the record: that one was not held up (no releasing record).
  GpuProgram rec;
  rec.streams = {{"r", {Task::kernel(Time::us(100), 0), Task::record(0)}}};
  std::vector<GpuProgram> programs = {rec};
  for (std::uint32_t k = 1; k <= 7; ++k) {
    GpuProgram g;
    const Time before = k == 7 ? Time::us(100) : Time::us(10 * k);
    g.streams = {{"w", {Task::kernel(before, 1), Task::wait(0), Task::kernel(Time::us(k), 2)}}};
    programs.push_back(g);
  }
  EventQueue q;
  StreamExecutor exec(q, programs, {}, 1, {});
  exec.start();
  q.run();
  REQUIRE(exec.is_done());
  const ExecutionRecord& r = exec.record();
  for (std::uint32_t k = 1; k <= 7; ++k) {
    CAPTURE(k);
    CHECK(r.ended(k, 1) == Time::us(100));
    CHECK(r.ended(k, 2) == Time::us(100 + k));
    if (k < 7)
      CHECK(r.released_by(k, 1) == ExecutionRecord::TaskRef{0, 1});
    else
      CHECK_FALSE(r.released_by(k, 1));
  }
  CHECK(exec.finish_time() == Time::us(107));
}

namespace {

// This process's resident memory (Linux: /proc/self/statm's second field, in pages).
std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace

TEST_CASE("stream executor: events that no stream records or waits on take no resident memory") {
  // A folded step's members never reach their events (GPT-3 pp 16 at 16,384 GPUs: 15 M events, of
  // which its 128 simulated GPUs use 0.1 M). 2^24 events, none used: their states come zeroed from
  // calloc, untouched (201 MB of address space), where they were filled, 32 bytes each: 537 MB
  // resident before evstate. Sanitizers' allocators may touch the memory they hand out: not checked.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr bool kSanitized = true;
#elif defined(__has_feature)
  constexpr bool kSanitized = __has_feature(address_sanitizer) || __has_feature(memory_sanitizer);
#else
  constexpr bool kSanitized = false;
#endif
  GpuProgram gpu;
  gpu.streams = {{"compute", {Task::kernel(Time::us(10), 0)}}};
  const std::vector<GpuProgram> programs(1, gpu);
  EventQueue q;
  const std::int64_t before = resident_bytes();
  StreamExecutor exec(q, programs, {}, std::uint32_t{1} << 24, {});
  const std::int64_t grown = resident_bytes() - before;
  MESSAGE("resident memory grown by ", grown, " B");
  if (!kSanitized) CHECK(grown < 32 * 1024 * 1024);
  exec.start();
  q.run();
  CHECK(exec.finish_time() == Time::us(10));
}

TEST_CASE("the executor's collectives are prepared in batches, told past one batch, its events not told") {
  // 2^17 + 1 events (none used) and 2^16 + 2 collectives (null: a folded step's shadows, never
  // started) on 2 GPUs: the collectives told in batches of kStateBatch (2^16), after the GPUs'
  // programs are checked: at 0, 65,536 and 65,538. The events' states come zeroed from one calloc
  // (sim/stream_executor.h, EventState), nothing to tell: before evstate they were filled in batches
  // and told at 0, 65,536, 131,072 and 131,073 first.
  Ticks ticks;
  static_assert(kStateBatch == 65'536);
  GpuProgram gpu;
  gpu.streams = {{"compute", {Task::kernel(Time::us(10), 0)}}};
  const std::vector<GpuProgram> programs(2, gpu);
  EventQueue q;
  const std::vector<Collective*> shadows(65'538, nullptr);
  StreamExecutor exec(q, programs, shadows, 131'073, {}, {}, &ticks);
  const std::vector<std::string> expected = {"checking its GPUs' programs 0/2 GPUs",
                                             "checking its GPUs' programs 2/2 GPUs",
                                             "setting up its collectives' ranks 0/65538 collectives",
                                             "setting up its collectives' ranks 65536/65538 collectives",
                                             "setting up its collectives' ranks 65538/65538 collectives"};
  CHECK(ticks.told == expected);
  exec.start();
  q.run();
  CHECK(exec.is_done());
  CHECK(exec.finish_time() == Time::us(10));
}

TEST_CASE("stream executor: a record on an earlier run's entries reads as one on fresh ones") {
  // Run 1 (9 entries): GPU1's wait (stream 1, task 1) is released by GPU0's record at 100 us.
  EventQueue q1;
  const std::vector<GpuProgram> first = waits_across_gpus();
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
  ExecutionRecord::Storage back = exec2.take_record_storage();
  CHECK(back.capacity() == 9);  // the first run's block

  // An executor that never started hands the block it was given back, not its placeholder record.
  EventQueue q3;
  StreamExecutor exec3(q3, second, {}, 1, {});
  exec3.reuse_record_storage(std::move(back));
  ExecutionRecord::Storage unused = exec3.take_record_storage();
  CHECK(unused.capacity() == 9);
  CHECK(ExecutionRecord::Storage(std::move(unused)).capacity() == 9);
  CHECK(unused.capacity() == 0);  // moved from: no block, whatever count it copied
}

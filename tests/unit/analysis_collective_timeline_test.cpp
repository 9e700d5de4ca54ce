// When a step's collectives are expected to start, from its program alone
// (analysis/step/collective_timeline.h): kernels for their scaled durations, a collective holding
// its stream for its expected time, waits for the GPU's own events in order and another GPU's met.
#include <doctest/doctest.h>

#include <vector>

#include "analysis/step/collective_timeline.h"

using namespace hybridsim;
using sim::Task;
using sim::Time;

TEST_CASE("collective timeline: a collective waits for the one before it on its stream, not the compute") {
  // Two GPUs of one data-parallel group; GPU 1 runs its kernels at 1.5 times their durations. Bucket
  // 0 is ready after 10 us, bucket 1 after 30 us (45 us on GPU 1), but bucket 0 holds the
  // communication stream for 100 us: bucket 1 starts at 110 us (GPU 0) and 115 us (GPU 1).
  workloads::StepProgram program;
  program.event_count = 4;
  program.collectives.resize(3);
  for (std::uint32_t g = 0; g < 2; ++g) {
    sim::GpuProgram gpu;
    const std::uint32_t e = 2 * g;
    gpu.streams = {{"compute",
                    {Task::kernel(Time::us(10), 0), Task::record(e), Task::kernel(Time::us(20), 0),
                     Task::record(e + 1)}},
                   {"communication",
                    {Task::wait(e), Task::collective(0, g), Task::wait(e + 1), Task::collective(1, g),
                     Task::wait(2 - e), Task::collective(2, g)}}};
    gpu.compute_scale = g == 0 ? 1.0 : 1.5;
    program.gpus.push_back(gpu);
  }
  const std::vector<analysis::CollectiveWindow> w =
      analysis::collective_windows(program, {Time::us(100), Time::us(7), Time::max()});
  CHECK(w[0].first_arrival == Time::us(10));
  CHECK(w[0].last_arrival == Time::us(15));
  CHECK(w[1].first_arrival == Time::us(110));
  CHECK(w[1].last_arrival == Time::us(115));
  // Collective 2 waits for an event of the other GPU: met at once, right after bucket 1.
  CHECK(w[2].first_arrival == Time::us(117));
  CHECK(w[2].last_arrival == Time::us(122));
}

TEST_CASE("collective timeline: a rank whose stream waits for an event never recorded never arrives") {
  workloads::StepProgram program;
  program.event_count = 2;
  program.collectives.resize(1);
  sim::GpuProgram gpu;
  gpu.streams = {{"compute", {Task::kernel(Time::us(10), 0), Task::record(0)}},
                 {"communication", {Task::wait(0), Task::wait(1), Task::collective(0, 0)}},
                 {"other", {Task::record(1), Task::wait(0)}}};
  // Event 1 is recorded on this GPU, at once: the collective comes at 10 us.
  program.gpus.push_back(gpu);
  CHECK(analysis::collective_windows(program, {})[0].first_arrival == Time::us(10));
  program.gpus[0].streams[2].tasks = {Task::wait(0), Task::kernel(Time::us(5), 0), Task::record(1)};
  CHECK(analysis::collective_windows(program, {})[0].first_arrival == Time::us(15));
  program.gpus[0].streams[2].tasks = {Task::wait(1), Task::record(1)};  // waits for its own record
  CHECK(!analysis::collective_windows(program, {})[0].reached());
}

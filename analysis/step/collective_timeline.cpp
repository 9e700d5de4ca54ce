#include "analysis/step/collective_timeline.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace hybridsim::analysis {

namespace {

constexpr std::uint32_t kNoGpu = std::numeric_limits<std::uint32_t>::max();

// A kernel's time on its GPU, as StreamExecutor::start_kernel scales it, and its launch delay.
sim::Time kernel_time(const sim::GpuProgram& gpu, const sim::Task& t) {
  const double scale = gpu.kernel_scale(t.per_sample);
  const auto ps = static_cast<std::int64_t>(std::llround(static_cast<double>(t.duration.ps()) * scale));
  return sim::Time::ps(ps) + t.launch_delay;
}

}  // namespace

std::vector<CollectiveWindow> collective_windows(const workloads::StepProgram& program,
                                                 const std::vector<sim::Time>& expected_time) {
  std::vector<CollectiveWindow> out(program.collectives.size());
  // Which GPU records each event: a wait for one of another GPU's is met at once (a lower bound on
  // this GPU's times); one of its own waits for its record, stream by stream.
  std::vector<std::uint32_t> owner(program.event_count, kNoGpu);
  for (std::uint32_t g = 0; g < program.gpus.size(); ++g)
    for (const sim::StreamProgram& stream : program.gpus[g].streams)
      for (const sim::Task& stored : stream.tasks.stored()) {
        const sim::Task t = stream.tasks.shifted(stored);
        if (t.kind == sim::TaskKind::Record && t.id < owner.size()) owner[t.id] = g;
      }
  std::vector<sim::Time> recorded(program.event_count, sim::Time::max());
  std::vector<std::size_t> next;
  std::vector<sim::Time> clock;
  for (std::uint32_t g = 0; g < program.gpus.size(); ++g) {
    const sim::GpuProgram& gpu = program.gpus[g];
    next.assign(gpu.streams.size(), 0);
    clock.assign(gpu.streams.size(), sim::Time::zero());
    // Each stream runs until it waits for one of its GPU's events not yet recorded; passes repeat
    // until none moves (each pass moves one at least, or ends).
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t s = 0; s < gpu.streams.size(); ++s) {
        const sim::TaskList& tasks = gpu.streams[s].tasks;
        const std::span<const sim::Task> stored = tasks.stored();
        sim::Time& now = clock[s];
        for (; next[s] < stored.size(); ++next[s], moved = true) {
          const sim::Task t = tasks.shifted(stored[next[s]]);
          if (t.kind == sim::TaskKind::Kernel) {
            now = now + kernel_time(gpu, t);
          } else if (t.kind == sim::TaskKind::Record) {
            if (t.id < recorded.size()) recorded[t.id] = now;
          } else if (t.kind == sim::TaskKind::Wait) {
            if (t.id >= owner.size() || owner[t.id] != g) continue;  // another GPU's: met at once
            if (recorded[t.id] == sim::Time::max()) break;           // its own, not yet recorded
            now = max(now, recorded[t.id]);
          } else if (t.id < out.size()) {
            CollectiveWindow& w = out[t.id];
            w.first_arrival = min(w.first_arrival, now);
            w.last_arrival = max(w.last_arrival, now);
            if (t.id < expected_time.size() && expected_time[t.id] != sim::Time::max())
              now = now + expected_time[t.id];
          }
        }
      }
    }
  }
  return out;
}

}  // namespace hybridsim::analysis

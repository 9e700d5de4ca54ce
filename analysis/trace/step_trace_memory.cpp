// The memory counter of each GPU in a step trace: the memory model's live bytes at each point of the
// MP rank's compute stream (workloads/memory/memory_model.h: an op's forward, its backward, the optimizer),
// written as a Chrome counter sample ("C", series "GiB") when the point's first kernel starts, and
// what stays between steps at the start and once the optimizer ends. The model gives one level per point, so
// the track is a staircase over the step, its highest step the run's "peak memory".
#include <cstdint>

#include "analysis/trace/step_trace.h"
#include "workloads/memory/memory_model.h"

namespace hybridsim::analysis {
namespace {

using workloads::Phase;

double gib(sim::Bytes b) {
  return static_cast<double>(b.count()) / static_cast<double>(std::int64_t{1} << 30);
}

}  // namespace

void StepTraceObserver::init_memory_levels(const StepSetup& setup) {
  if (setup.memory != nullptr) return init_peak_levels(*setup.memory);
  const workloads::StepMemory memory = workloads::model_step_memory(profile_, setup, *setup.topology);
  memory_levels_.assign(memory.ranks.size(), MemoryLevels{});
  for (std::size_t k = 0; k < memory.ranks.size(); ++k) {
    MemoryLevels& levels = memory_levels_[k];
    levels.forward.assign(profile_.ops.size(), 0);
    levels.backward.assign(profile_.ops.size(), 0);
    for (const workloads::MemoryPoint& p : memory.ranks[k].timeline) {
      if (p.phase == workloads::MemoryPhase::Forward) levels.forward[p.op] = gib(p.live);
      else if (p.phase == workloads::MemoryPhase::Backward) levels.backward[p.op] = gib(p.live);
      else levels.optimizer = gib(p.live);
    }
    levels.after_step = gib(memory.ranks[k].after_step);
  }
}

void StepTraceObserver::init_peak_levels(const workloads::StepMemory& memory) {
  // A transformer's model (Korthikanti et al.) gives each rank one peak, its activations all live
  // between its first forward and its last backward: that level from the first op's forward to the
  // optimizer, which runs on what stays between steps. (The 2017 model's per-op levels, read off the
  // generated profile, drew a ZeRO-3 GPU at 12.7 GiB where the run said 5.10 GiB.)
  memory_levels_.assign(memory.ranks.size(), MemoryLevels{});
  for (std::size_t k = 0; k < memory.ranks.size(); ++k) {
    const workloads::RankMemory& rank = memory.ranks[k];
    MemoryLevels& levels = memory_levels_[k];
    levels.forward.assign(profile_.ops.size(), gib(rank.peak.total()));
    levels.backward = levels.forward;
    levels.optimizer = gib(rank.after_step);
    levels.after_step = gib(rank.after_step);
  }
}

void StepTraceObserver::write_memory_start(std::uint32_t gpu, sim::Time first) {
  // What the GPU holds when the step starts (the persistent parts), until its first op runs: written
  // with the GPU's first sample, and not at all when that sample is at 0 (two samples at one time).
  if (memory_started_[gpu]) return;
  memory_started_[gpu] = 1;
  const int rank = program_.mp_rank_of_gpu[gpu];
  if (first == sim::Time::zero() || rank < 0 || static_cast<std::size_t>(rank) >= memory_levels_.size())
    return;
  writer_.counter(gpu_pid(static_cast<int>(gpu)), "memory", sim::Time::zero(),
                  {{"GiB", memory_levels_[static_cast<std::size_t>(rank)].after_step}});
}

void StepTraceObserver::write_memory_sample(std::uint32_t gpu, const workloads::KernelLabel& label,
                                            sim::Time start, sim::Time end) {
  const int rank = program_.mp_rank_of_gpu[gpu];
  if (rank < 0 || static_cast<std::size_t>(rank) >= memory_levels_.size() || label.kernel != 0) return;
  switch (label.phase) {
    case Phase::Forward:
    case Phase::Backward:
    case Phase::Optimizer: write_memory_start(gpu, start); break;
    default: return;
  }
  const MemoryLevels& levels = memory_levels_[static_cast<std::size_t>(rank)];
  const TracePid pid = gpu_pid(static_cast<int>(gpu));
  switch (label.phase) {
    case Phase::Forward: writer_.counter(pid, "memory", start, {{"GiB", levels.forward[label.op]}}); return;
    case Phase::Backward: writer_.counter(pid, "memory", start, {{"GiB", levels.backward[label.op]}}); return;
    case Phase::Optimizer:
      writer_.counter(pid, "memory", start, {{"GiB", levels.optimizer}});
      writer_.counter(pid, "memory", end, {{"GiB", levels.after_step}});
      return;
    default: return;  // gradient copies: the model has no point of their own
  }
}

}  // namespace hybridsim::analysis

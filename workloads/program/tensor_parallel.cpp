// apply_tensor_parallel (tensor_parallel.h): the gradient collectives split by TP rank
// (gradient_split.h), each stage's TP groups' collectives inserted (group_collectives.h), and the
// program's dp counted by replicas; and gpu_of_worker_rank, which the groups are read from.
#include "workloads/program/tensor_parallel.h"

#include <algorithm>
#include <string>
#include <vector>

#include "sim/error.h"
#include "workloads/program/gradient_split.h"
#include "workloads/program/group_collectives.h"
#include "workloads/program/tp_rank_tasks.h"

namespace hybridsim::workloads {

using tp_parts::compute_stream_of;
using tp_parts::GradientSync;
using tp_parts::GroupInserter;

std::vector<std::vector<int>> gpu_of_worker_rank(const StepProgram& p, int workers) {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(workers),
                                    std::vector<int>(static_cast<std::size_t>(p.mp), -1));
  for (std::size_t g = 0; g < p.worker_of_gpu.size(); ++g)
    if (p.worker_of_gpu[g] >= 0)
      out[static_cast<std::size_t>(p.worker_of_gpu[g])][static_cast<std::size_t>(p.mp_rank_of_gpu[g])] =
          static_cast<int>(g);
  return out;
}

namespace {

// Per MP rank (a pipeline's stage): the TpGradients of the ops whose backward kernels its first
// worker's compute stream runs (every replica's stage runs the same), summed.
std::vector<GradientSync> gradient_syncs(const StepProgram& p, std::span<const TpGradient> gradients,
                                         const std::vector<std::vector<int>>& gpu_of_worker) {
  std::vector<GradientSync> out(static_cast<std::size_t>(p.mp));
  if (gradients.empty()) return out;
  std::uint32_t ops = 0;
  for (const TpGradient& t : gradients) ops = std::max(ops, t.op + 1);
  std::vector<bool> runs(ops, false);  // by op
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::fill(runs.begin(), runs.end(), false);
    const sim::GpuProgram& gpu = p.gpus[static_cast<std::size_t>(gpu_of_worker[0][k])];
    for (const sim::Task& task : compute_stream_of(gpu).tasks.stored())
      if (task.kind == sim::TaskKind::Kernel && task.id < p.labels.size() &&
          p.labels[task.id].phase == Phase::Backward && p.labels[task.id].op < runs.size())
        runs[p.labels[task.id].op] = true;
    for (const TpGradient& t : gradients)
      if (runs[t.op]) out[k] = {out[k].bytes + t.bytes, t.op};
  }
  return out;
}

// One replica: each TP rank's gradient "collective" has itself alone; the flat-buffer copies around
// it are not made (nothing is exchanged).
void drop_gradient_copies(StepProgram& p) {
  for (auto& gpu : p.gpus)
    for (auto& stream : gpu.streams)
      std::erase_if(stream.tasks.mutate(), [&](const sim::Task& t) { return p.is_gradient_copy(t); });
}

}  // namespace

void apply_tensor_parallel(StepProgram& p, std::span<const TpSync> syncs, int tp,
                           std::span<const TpGradient> gradients, ProgramBuildProgress* progress) {
  if (tp < 1 || p.dp % tp != 0)
    throw InputError("tensor parallelism needs dp x tp workers; got " + std::to_string(p.dp) +
                     " workers, tp " + std::to_string(tp));
  if (tp == 1) return;
  // mp > 1: a pipeline's stages, each stage a TP group of its own.
  const std::vector<std::vector<int>> gpu_of_worker = gpu_of_worker_rank(p, p.dp);
  // Each gradient collective over all dp × tp workers becomes tp collectives over one TP rank's
  // replicas (each rank holds a different shard).
  split_gradient_collectives(
      p, tp, [](const CollectiveSpec&) { return true; }, [tp](int w) { return w % tp; });
  const std::vector<GradientSync> per_stage = gradient_syncs(p, gradients, gpu_of_worker);
  GroupInserter inserter(p, syncs, CollectiveRole::TensorParallel);
  std::vector<sim::TaskList*> lists;  // every compute stream of a TP group, in place for good
  for (sim::GpuProgram& gpu : p.gpus) {
    if (gpu.streams.empty()) continue;
    gpu.streams.reserve(gpu.streams.size() + 1);  // a TP stream beside it
    lists.push_back(&compute_stream_of(gpu).tasks);
  }
  inserter.plan_events(lists);
  for (int q = 0; q < p.dp / tp; ++q) {
    build_tick(progress, "the TP groups' collectives", static_cast<std::uint64_t>(q),
               static_cast<std::uint64_t>(p.dp / tp), "replicas");
    for (std::size_t k = 0; k < static_cast<std::size_t>(p.mp); ++k) {
      std::vector<int> group;
      for (int r = 0; r < tp; ++r) group.push_back(gpu_of_worker[static_cast<std::size_t>(q * tp + r)][k]);
      inserter.insert(group, per_stage[k]);
    }
  }
  if (p.dp == tp) drop_gradient_copies(p);
  // Every replica's tp GPUs process the same samples: count them once (global_batch counted the
  // replicas already: step_global_batch, step_program.h).
  p.dp /= tp;
  p.tp = tp;
}

}  // namespace hybridsim::workloads

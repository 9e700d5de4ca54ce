#include "workloads/program/tensor_parallel.h"

#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "sim/error.h"

namespace hybridsim::workloads {
namespace {

bool is_gradient(CollectiveRole role) {
  return role == CollectiveRole::GradientAllReduce || role == CollectiveRole::GradientAllGather;
}

}  // namespace

void split_gradient_collectives(StepProgram& p, int parts,
                                const std::function<bool(const CollectiveSpec&)>& selected,
                                const std::function<int(int)>& part_of) {
  const std::size_t n = p.collectives.size();
  std::vector<std::vector<std::uint32_t>> index(n), new_rank(n);
  for (std::size_t i = 0; i < n; ++i) {
    const CollectiveSpec spec = p.collectives[i];
    if (!is_gradient(spec.role) || !selected(spec)) continue;
    std::vector<std::vector<int>> groups(static_cast<std::size_t>(parts));
    for (const int g : spec.members) {
      auto& group = groups[static_cast<std::size_t>(part_of(p.worker_of_gpu[static_cast<std::size_t>(g)]))];
      new_rank[i].push_back(static_cast<std::uint32_t>(group.size()));
      group.push_back(g);
    }
    for (std::size_t r = 0; r < groups.size(); ++r) {
      CollectiveSpec c = spec;
      c.members = groups[r];
      if (r == 0) {
        p.collectives[i] = c;
        index[i].push_back(static_cast<std::uint32_t>(i));
      } else {
        index[i].push_back(static_cast<std::uint32_t>(p.collectives.size()));
        p.collectives.push_back(c);
      }
    }
  }
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    const int w = p.worker_of_gpu[g];
    if (w < 0) continue;
    for (auto& stream : p.gpus[g].streams)
      for (auto& task : stream.tasks.mutate()) {
        if (task.kind != sim::TaskKind::Collective || task.id >= n || index[task.id].empty()) continue;
        const std::uint32_t old = task.id;
        task.rank = new_rank[old][task.rank];
        task.id = index[old][static_cast<std::size_t>(part_of(w))];
      }
  }
}

namespace {

using SyncKey = std::tuple<std::uint32_t, bool, std::uint32_t>;  // op, backward, kernel

sim::StreamProgram& compute_stream_of(sim::GpuProgram& gpu) {
  for (auto& s : gpu.streams)
    if (s.name == "compute") return s;
  throw InternalError("tensor parallel: a GPU without a compute stream");
}

// The TP collectives of replica q: rank 0's stream creates them in the order it issues them; the
// other ranks, whose compute streams are the same kernels, join the same ones in the same order.
void insert_replica(StepProgram& p, const std::map<SyncKey, std::vector<const TpSync*>>& at,
                    const std::vector<int>& group, CollectiveRole role) {
  std::vector<std::uint32_t> specs;
  for (std::size_t r = 0; r < group.size(); ++r) {
    sim::StreamProgram& stream = compute_stream_of(p.gpus[static_cast<std::size_t>(group[r])]);
    std::vector<sim::Task> tasks;
    tasks.reserve(stream.tasks.size());
    std::size_t k = 0;
    for (const sim::Task& task : stream.tasks) {
      tasks.push_back(task);
      if (task.kind != sim::TaskKind::Kernel || task.id >= p.labels.size()) continue;
      const KernelLabel& label = p.labels[task.id];
      if (label.phase != Phase::Forward && label.phase != Phase::Backward) continue;
      const auto it = at.find({label.op, label.phase == Phase::Backward, label.kernel});
      if (it == at.end()) continue;
      for (const TpSync* sync : it->second) {
        if (r == 0) {
          specs.push_back(static_cast<std::uint32_t>(p.collectives.size()));
          p.collectives.push_back({role, sync->kind, sync->bytes, group, sync->op, -1, 0});
        }
        if (k >= specs.size()) throw InternalError("a group's ranks issue different collectives");
        tasks.push_back(sim::Task::collective(specs[k++], static_cast<std::uint32_t>(r)));
      }
    }
    if (k != specs.size()) throw InternalError("a group's ranks issue different collectives");
    stream.tasks = std::move(tasks);
  }
}

// One replica: each TP rank's gradient "collective" has itself alone; the flat-buffer copies around
// it are not made (nothing is exchanged).
void drop_gradient_copies(StepProgram& p) {
  for (auto& gpu : p.gpus)
    for (auto& stream : gpu.streams)
      std::erase_if(stream.tasks.mutate(), [&](const sim::Task& t) { return p.is_gradient_copy(t); });
}

}  // namespace

void insert_group_collectives(StepProgram& p, std::span<const TpSync> syncs, const std::vector<int>& group,
                              CollectiveRole role) {
  std::map<SyncKey, std::vector<const TpSync*>> at;
  for (const TpSync& s : syncs) at[{s.op, s.backward, s.after}].push_back(&s);
  insert_replica(p, at, group, role);
}

void apply_tensor_parallel(StepProgram& p, std::span<const TpSync> syncs, int tp) {
  if (tp < 1 || p.dp % tp != 0)
    throw InputError("tensor parallelism needs dp x tp workers; got " + std::to_string(p.dp) +
                     " workers, tp " + std::to_string(tp));
  if (tp == 1) return;
  // [worker][mp rank] → GPU (mp > 1: a pipeline's stages, each stage a TP group of its own).
  std::vector<std::vector<int>> gpu_of_worker(static_cast<std::size_t>(p.dp),
                                              std::vector<int>(static_cast<std::size_t>(p.mp), -1));
  for (std::size_t g = 0; g < p.worker_of_gpu.size(); ++g)
    if (p.worker_of_gpu[g] >= 0)
      gpu_of_worker[static_cast<std::size_t>(p.worker_of_gpu[g])]
                   [static_cast<std::size_t>(p.mp_rank_of_gpu[g])] = static_cast<int>(g);
  // Each gradient collective over all dp × tp workers becomes tp collectives over one TP rank's
  // replicas (each rank holds a different shard).
  split_gradient_collectives(
      p, tp, [](const CollectiveSpec&) { return true; }, [tp](int w) { return w % tp; });
  std::map<SyncKey, std::vector<const TpSync*>> at;
  for (const TpSync& s : syncs) at[{s.op, s.backward, s.after}].push_back(&s);
  for (int q = 0; q < p.dp / tp; ++q)
    for (std::size_t k = 0; k < static_cast<std::size_t>(p.mp); ++k) {
      std::vector<int> group;
      for (int r = 0; r < tp; ++r) group.push_back(gpu_of_worker[static_cast<std::size_t>(q * tp + r)][k]);
      insert_replica(p, at, group, CollectiveRole::TensorParallel);
    }
  if (p.dp == tp) drop_gradient_copies(p);
  // Every replica's tp GPUs process the same samples: count them once.
  p.dp /= tp;
  p.tp = tp;
  p.global_batch /= tp;
}

}  // namespace hybridsim::workloads

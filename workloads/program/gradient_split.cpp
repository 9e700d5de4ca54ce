// split_gradient_collectives (gradient_split.h): each selected gradient collective becomes one per
// part, and every GPU's tasks are pointed at its part's collective and its rank within it.
#include "workloads/program/gradient_split.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "workloads/program/collective_free.h"

namespace hybridsim::workloads {
namespace {

bool is_gradient(CollectiveRole role) {
  return role == CollectiveRole::GradientAllReduce || role == CollectiveRole::GradientAllGather;
}

// ZeRO's gathers of parameters run over the group their gradients were reduce-scattered over.
bool is_parameter_gather(CollectiveRole role) {
  return role == CollectiveRole::ParameterAllGather || role == CollectiveRole::UpdatedParameterAllGather;
}

}  // namespace

void split_gradient_collectives(StepProgram& p, int parts,
                                const std::function<bool(const CollectiveSpec&)>& selected,
                                const std::function<int(int)>& part_of) {
  const std::size_t n = p.collectives.size();
  std::vector<std::vector<std::uint32_t>> index(n), new_rank(n);
  for (std::size_t i = 0; i < n; ++i) {
    const CollectiveSpec spec = p.collectives[i];
    if (!(is_gradient(spec.role) || is_parameter_gather(spec.role)) || !selected(spec)) continue;
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
  const auto split = [&](const sim::Task& t) {
    return t.kind == sim::TaskKind::Collective && t.id < n && !index[t.id].empty();
  };
  const auto split_one = [&](sim::Task& task, int w) {
    const std::uint32_t old = task.id;
    task.rank = new_rank[old][task.rank];
    task.id = index[old][static_cast<std::size_t>(part_of(w))];
  };
  CollectiveFree free;
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    const int w = p.worker_of_gpu[g];
    if (w < 0) continue;
    for (auto& stream : p.gpus[g].streams) {
      // Copy (mutate) only the lists that change: a shared list stays shared, and one without any
      // collective is not read at all (a pipeline's compute streams, at 16,384 GPUs).
      if (!free(stream.tasks)) {
        if (std::none_of(stream.tasks.begin(), stream.tasks.end(), split)) continue;
        for (auto& task : stream.tasks.mutate())
          if (split(task)) split_one(task, w);
        continue;
      }
      // Its only collectives its own (ZeRO's gathers of an expert op): changed where they are kept,
      // the list still shared (copied, ZeRO-1 with experts held a list a GPU).
      std::vector<sim::Task> own = stream.tasks.own_collectives();
      if (std::none_of(own.begin(), own.end(), split)) continue;
      for (sim::Task& task : own)
        if (split(task)) split_one(task, w);
      stream.tasks.set_own_collectives(own);
    }
  }
}

}  // namespace hybridsim::workloads

#include "workloads/program/expert_parallel.h"

#include <algorithm>
#include <string>
#include <vector>

#include "sim/error.h"
#include "workloads/program/tensor_parallel.h"

namespace hybridsim::workloads {

void apply_expert_parallel(StepProgram& p, const ExpertParallelOptions& options) {
  const int ep = options.ep, tp = p.tp;
  if (ep < 1 || p.dp % ep != 0)
    throw InputError("expert parallelism needs ep dividing the " + std::to_string(p.dp) +
                     " data-parallel replicas; got ep " + std::to_string(ep));
  if (ep == 1) return;
  // Worker w is replica w / tp, TP rank w % tp; replica q is EP rank q % ep of block q / ep.
  split_gradient_collectives(
      p, ep,
      [&](const CollectiveSpec& c) {
        return std::ranges::find(options.expert_ops, c.op_index) != options.expert_ops.end();
      },
      [ep, tp](int w) { return (w / tp) % ep; });
  std::vector<int> gpu_of_worker(static_cast<std::size_t>(p.dp * tp), -1);
  for (std::size_t g = 0; g < p.worker_of_gpu.size(); ++g)
    if (p.worker_of_gpu[g] >= 0)
      gpu_of_worker[static_cast<std::size_t>(p.worker_of_gpu[g])] = static_cast<int>(g);
  for (int block = 0; block < p.dp / ep; ++block)
    for (int r = 0; r < tp; ++r) {
      std::vector<int> group;
      for (int e = 0; e < ep; ++e)
        group.push_back(gpu_of_worker[static_cast<std::size_t>((block * ep + e) * tp + r)]);
      insert_group_collectives(p, options.syncs, group, CollectiveRole::ExpertParallel);
    }
}

}  // namespace hybridsim::workloads

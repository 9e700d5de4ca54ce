#include "workloads/program/expert_parallel.h"

#include <string>
#include <vector>

#include "sim/error.h"
#include "workloads/program/gradient_split.h"
#include "workloads/program/group_collectives.h"
#include "workloads/program/lone_collectives.h"
#include "workloads/program/sharded_data_parallel.h"
#include "workloads/program/tensor_parallel.h"

namespace hybridsim::workloads {

void apply_expert_parallel(StepProgram& p, const ExpertParallelOptions& options) {
  const int ep = options.ep, tp = p.tp;
  if (ep < 1 || p.dp % ep != 0)
    throw InputError("expert parallelism needs ep dividing the " + std::to_string(p.dp) +
                     " data-parallel replicas; got ep " + std::to_string(ep));
  if (ep == 1) return;
  // Under ZeRO the experts' optimizer share and updated gather go to their own replicas first; the
  // split below then takes their gathers with their gradients (an expert op's collectives).
  shard_experts(p, options);
  // Worker w is replica w / tp, TP rank w % tp; replica q is EP rank q % ep of block q / ep.
  const auto expert = [&](const CollectiveSpec& c) { return is_expert_op(options, c.op_index); };
  split_gradient_collectives(p, ep, expert, [ep, tp](int w) { return (w / tp) % ep; });
  // At dp = ep each expert's gradients are on one replica: nothing to reduce (lone_collectives.h).
  drop_lone_collectives(p, expert);
  // A pipeline's worker holds its pp stages (mp ranks): each stage's EP groups are its own, and only
  // the stages holding MoE layers issue all-to-alls (the others' kernels match none of the syncs).
  const std::vector<std::vector<int>> gpu_of_worker = gpu_of_worker_rank(p, p.dp * tp);
  std::vector<std::vector<int>> groups;
  for (int block = 0; block < p.dp / ep; ++block)
    for (int r = 0; r < tp; ++r)
      for (std::size_t k = 0; k < static_cast<std::size_t>(p.mp); ++k) {
        std::vector<int>& group = groups.emplace_back();
        for (int e = 0; e < ep; ++e)
          group.push_back(gpu_of_worker[static_cast<std::size_t>((block * ep + e) * tp + r)][k]);
      }
  insert_group_collectives(p, options.syncs, groups, CollectiveRole::ExpertParallel);
}

}  // namespace hybridsim::workloads

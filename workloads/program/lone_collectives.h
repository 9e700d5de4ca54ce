// Collectives of one member move nothing and take no time: a mixture's expert gradients at dp = ep,
// where each replica holds its experts whole (expert_parallel.h splits them over the dp / ep = 1
// replicas that hold them). They are dropped from the program, so that neither the step's count of
// collectives nor its trace shows an exchange that does not happen; the gradient copies around
// their buckets stay (the buffer is still filled and read back), their labels naming the bucket in
// StepProgram::unexchanged_buckets.
//   split_gradient_collectives(p, ep, ...);
//   drop_lone_collectives(p, [&](const CollectiveSpec& c) { return is expert op; });
#pragma once
#include <functional>

#include "workloads/program/step_program_types.h"

namespace hybridsim::workloads {

// Drops each gradient all-reduce (or reduce-scatter) of one member that `droppable` accepts and
// renumbers the rest in order: every task pointing at a dropped one goes, every other collective task
// is pointed at its new index (a list shared between GPUs by a uniform shift where its collectives
// all move alike, its own collectives in place). InternalError where a GPU's own collective
// (sim::TaskList::own_collective) is one of them.
void drop_lone_collectives(StepProgram& program, const std::function<bool(const CollectiveSpec&)>& droppable);

}  // namespace hybridsim::workloads

// Splitting a step program's data-parallel gradient collectives (and ZeRO's gathers of parameters)
// into one collective per part of their members: tensor parallelism's TP ranks
// (tensor_parallel.cpp), expert parallelism's EP ranks (expert_parallel.cpp).
//   split_gradient_collectives(p, tp, [](const CollectiveSpec&) { return true; },
//                              [tp](int w) { return w % tp; });
#pragma once
#include <functional>

#include "workloads/program/step_program_types.h"

namespace hybridsim::workloads {

// Each data-parallel gradient collective (or ZeRO's gather of parameters, which runs over the same
// group) that `selected` accepts becomes `parts` collectives: the
// GPU of worker w goes to part part_of(w), keeping the members' order; every GPU's tasks are
// pointed at its part's collective and its rank within it.
void split_gradient_collectives(StepProgram& program, int parts,
                                const std::function<bool(const CollectiveSpec&)>& selected,
                                const std::function<int(int)>& part_of);

}  // namespace hybridsim::workloads

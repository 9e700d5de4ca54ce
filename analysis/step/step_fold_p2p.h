// Point-to-point shadows across machines (sim/README.md, "Folding the step"): a pipeline's member
// replicas send activations and gradients between their stages' machines, through the fabric. Such
// a transfer, none of whose ends is a representative, is a shadow of the representative's transfer
// at the same place when it would see what that one sees: its route has the same links in kind,
// speed, latency and count, and the links of its route outside the two machines (switch to switch)
// carry nothing else. Links at a machine carry only that machine's traffic, which repeats its
// representative machine's (the same class key). fold_p2p_shadows_exact says why not, or nothing.
//   if (auto why = fold_p2p_shadows_exact(program, topology, comm, plan)) refuse(*why);
#pragma once
#include <optional>
#include <string>

#include "analysis/step/step_fold.h"
#include "workloads/comm/comm_plan.h"

namespace hybridsim::analysis {

// A collective of two GPUs that one sends to the other (a pipeline's transfer).
bool is_point_to_point(const workloads::CollectiveSpec& c);

std::optional<std::string> fold_p2p_shadows_exact(const workloads::StepProgram& program,
                                                  const topology::Topology& topology,
                                                  const workloads::CommOptions& comm,
                                                  const StepFoldPlan& plan);

}  // namespace hybridsim::analysis

// Point-to-point shadows across machines (sim/README.md, "Folding the step"): a pipeline's member
// replicas send activations and gradients between their stages' machines, through the fabric. Such
// a transfer, none of whose ends is a representative, is a shadow of the representative's transfer
// at the same place when it would see what that one sees: its route has the same links in kind,
// speed, latency and count, and each fabric link (switch to switch) of its route carries the
// shadows of exactly the transfers that its image carries, in the same order (a replica's forward
// and backward transfers meeting on a spine link, as its representative's meet on theirs), and
// nothing of the representatives. Links at a machine carry only that machine's traffic, which
// repeats its representative machine's (the same class key). A ring and transfers on one fabric
// link must never use it at once: the plan lists them (kept_apart) and fold_p2p_apart_held checks
// their times after the run. fold_p2p_shadows_exact says why not, or nothing.
//   if (auto why = fold_p2p_shadows_exact(program, topology, comm, plan)) refuse(*why);
#pragma once
#include <optional>
#include <string>

#include "analysis/step/step_fold.h"
#include "sim/execution_record.h"
#include "workloads/comm/comm_plan.h"

namespace hybridsim::analysis {

// A collective of two GPUs that one sends to the other (a pipeline's transfer).
bool is_point_to_point(const workloads::CollectiveSpec& c);

// `progress` (null: nobody) is told collective by collective (its rings' routes are planned here).
std::optional<std::string> fold_p2p_shadows_exact(const workloads::StepProgram& program,
                                                  const topology::Topology& topology,
                                                  const workloads::CommOptions& comm, StepFoldPlan& plan,
                                                  sim::WorkProgress* progress = nullptr);

// After a folded run: whether the collectives plan.kept_apart pairs never overlapped in time (the
// representatives' record; members repeat it), or why not.
std::optional<std::string> fold_p2p_apart_held(const workloads::StepProgram& program,
                                               const StepFoldPlan& plan, const sim::ExecutionRecord& record);

}  // namespace hybridsim::analysis

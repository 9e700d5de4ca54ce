// Whether a folded step's attempt is expected to be given up once it runs (analysis/step/): a ring
// shared by representatives and members must fold, and one that is known from its plan and its GPUs
// to run in full makes the ladder (step_runner.cpp) throw the attempt away after its run and simulate
// every GPU. What the step's estimate must foresee to count the way the step ends up running
// (estimate_program, analysis/step/step_estimate.cpp). Private to analysis/step/.
//   if (auto why = folded_ring_expected_in_full(program, fold, collectives)) { /* every GPU's estimate */ }
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/step/step_fold.h"
#include "sim/collective.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// Whether a collective has ranks on representatives and on members of a folded step.
bool spans_members(const StepFoldPlan& fold, const workloads::CollectiveSpec& spec);

// Why a folded ring (sim::FoldedRing) among `collectives` that spans representatives and members is
// expected to run in full, or nullopt. Conservative, from its plan and its GPUs' speeds (what a rank's
// join time follows), not from its run, as FoldedRing finds out at its last join:
//  - under fast_path: auto, a channel whose chunks are of unequal size: its models at the larger and
//    the smaller chunks end apart by their bytes' transfer time, which is never 0 on links of finite
//    bandwidth, and auto then runs the channel in full (what-if fast-path point 0, GNMT dp 32 on 4 DGX-1);
//  - a channel whose positions repeat neither their routes' timing nor their GPUs' speed scales
//    (compute and sample: WMT16 sentence lengths batched at random give each worker its padded
//    length, so its ranks join at times that do not repeat; what-if variability point 11).
std::optional<std::string> folded_ring_expected_in_full(
    const workloads::StepProgram& program, const StepFoldPlan& fold,
    const std::vector<std::unique_ptr<sim::Collective>>& collectives);

}  // namespace hybridsim::analysis

// Folding a training step onto representative GPUs (sim/README.md, "Folding the step"): in a
// data-parallel or hybrid step on machines that are alike, GPU g of every machine runs the same
// program and, where the collectives fold, sees the same timeline. plan_step_fold picks one
// representative per class of GPUs — same machine wiring, same index in the machine, same program
// shape, and (when refining) the same signature of what they saw — and marks as shadows the
// collectives no representative takes part in, which it may only do for collectives inside one
// machine (they repeat the one their representatives run at the same place).
//   sim::StepFold f = plan_step_fold(program, topology, {});  // empty: nothing to fold
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/stream_executor.h"
#include "sim/work_progress.h"
#include "topology/topology.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

struct StepFoldPlan {
  sim::StepFold fold;                      // empty representative list: the step is not folded
  std::vector<std::uint32_t> shadow_of;    // per collective: the one it repeats (itself if none)
  std::uint32_t representatives = 0;       // GPUs simulated
  // Pairs of collective sets (a ring's buckets, a pair of GPUs' transfers, representatives' own) that
  // share a fabric link and hold only if they never overlap in time (analysis/step/step_fold_p2p.h),
  // checked after the run.
  std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> kept_apart;
  bool empty() const { return fold.representative.empty(); }
};

// What plan_step_fold reads off the program and the machines, for several refinements at once:
// per GPU its machine, its index there and the hash of its class key before refinement, and which
// GPU records each event. Empty keys: the step cannot fold (one machine, or GPUs outside machines).
struct StepFoldBasis {
  std::vector<int> node, local;
  std::vector<std::uint64_t> key;
  // Per event, only its GPU: the basis is held through the step's run, and the place's stream and
  // task (hashed into the keys) took 12 bytes an event, 181 MB of GPT-3 pp 16's 15.1 M at 16,384 GPUs.
  std::vector<std::uint32_t> recorder_gpu;
};
// `progress` (null: none) is told GPU by GPU (a second at 65,536 GPUs).
StepFoldBasis step_fold_basis(const workloads::StepProgram& program, const topology::Topology& topology,
                              sim::WorkProgress* progress = nullptr);
// `progress` (null: none) is told GPU by GPU of its checks of the representatives and the members.
StepFoldPlan plan_step_fold(const workloads::StepProgram& program, const topology::Topology& topology,
                            const StepFoldBasis& basis, const std::vector<std::uint64_t>& refine,
                            sim::WorkProgress* progress = nullptr);

// Up to this many folded attempts of a step (step_runner.cpp's ladder, and its estimate), each with
// its classes split by what the last one saw.
inline constexpr int kFoldAttempts = 4;
// Splits the classes `refine` (empty: none split yet) by a broken attempt's per-GPU `signature` of
// what each GPU saw (0: nothing told), keeping the splits made before.
void refine_classes(std::vector<std::uint64_t>& refine, const std::vector<std::uint64_t>& signature);

// `refine[g]` (may be empty) splits classes further: GPUs whose machines' values differ never share
// one (a machine's value combines its GPUs').
StepFoldPlan plan_step_fold(const workloads::StepProgram& program, const topology::Topology& topology,
                            const std::vector<std::uint64_t>& refine);

}  // namespace hybridsim::analysis

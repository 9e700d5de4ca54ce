// The figures of one finished try at a step (private to analysis/step/): its StepResult read off
// the executor and the collectives (step time, per-GPU metrics, bytes by link kind, events, the
// fast path's bound), the most messages its collectives' models held, the representatives that ran.
//   StepResult r = step_result(setup, program, fold, executor, collectives, queue.events_processed());
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/step/attempt_collectives.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_runner.h"
#include "sim/collective.h"
#include "sim/fast/folded_tree.h"
#include "sim/fast/ring_embedding.h"
#include "sim/stream_executor.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// The step's figures, read off the finished run.
StepResult step_result(const StepSetup& setup, const workloads::StepProgram& program,
                       const StepFoldPlan& fold, const sim::StreamExecutor& executor,
                       const StepCollectives& collectives, std::uint64_t events);

// The most messages the step's networks of their own held at once, at most. A folded ring's or tree's
// models run within one event of the step's queue, on the step's thread one at a time, so the
// largest model's most bounds theirs; where a uniform trees' runner ran models ahead, up to `threads`
// of them at once (the step's and its workers'). The embedded rings' ghosts (their smaller chunks'
// segments) live on the ghost network beside the step's, as long as the step runs.
std::uint64_t models_in_flight(const std::vector<std::unique_ptr<sim::Collective>>& owned,
                               const sim::UniformTrees& trees, const sim::EmbedPlan& embedded);

// The representatives that run something: a cluster larger than the step has idle GPUs, alike on
// each idle machine, which fold onto one another, and were counted with them: GNMT dp 8 on 4 DGX-1
// said "16 of 8 GPUs simulated (the others repeat them)", its 8 GPUs each simulated.
std::uint32_t working_representatives(const workloads::StepProgram& program, const StepFoldPlan& fold);

}  // namespace hybridsim::analysis

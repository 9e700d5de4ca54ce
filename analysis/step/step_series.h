// Several training steps of one setup, each with its own draws of the variability model
// (workloads/program/variability.h: per-GPU kernel noise, per-worker padded sentence lengths), and what
// synchronous data parallelism makes of them: each step waits for its slowest worker. The result is
// one StepResult whose step time is the mean over the steps, with the spread (mean, p95, min, max)
// and every breakdown averaged over the steps (its parts still add up to the mean step exactly).
//   StepResult r = simulate_steps(setup);   // setup.variability.steps = 20
//   r.spread.p95;  r.step_time == r.spread.mean
#pragma once
#include <optional>
#include <vector>

#include "analysis/step/step_estimate.h"
#include "analysis/step/step_runner.h"

namespace hybridsim::analysis {

// Every step of setup.variability.steps (one when it is 1); when they are alike (steps_alike), step 1
// alone, repeated (repeat_step): the same result as simulating each, in one step's time. `first`, when given,
// is step 0 already simulated (e.g. with a trace: simulate_step with setup.step_index = 0); the others start
// at 1. `estimated` (null: made here, estimate_program, and checked against setup.limits): the step's
// estimate, already checked (a sweep point's), which every attempt's progress lines count against.
StepResult simulate_steps(const StepSetup& setup, std::optional<StepResult> first = std::nullopt,
                          SimulationProgress* progress = nullptr, const StepEstimate* estimated = nullptr);

// Whether the setup's several steps are provably the same step: more than one, nothing drawn (no
// kernel jitter, fixed lengths: workloads::Variability::varies), so each is step 1's program again.
bool steps_alike(const StepSetup& setup);

// How many steps the run simulates: 1 where they are alike (steps_alike), else every one.
int simulated_steps(const StepSetup& setup);
// A run's estimate from its step's (`step`: estimate_step(setup), analysis/step/step_estimate.h): its
// events times the steps it simulates (simulated_steps), what a sweep counts and tells before the run;
// its state and messages in flight are one step's (the steps run one after the other).
StepEstimate estimate_of_steps(StepEstimate step, const StepSetup& setup);

// `step` standing for `n` alike steps: what combine_steps makes of n copies of it, byte for byte (its
// means and spread are its own; events, messages, folded and embedded collectives n times its).
StepResult repeat_step(const StepResult& step, int n, const workloads::Profile& profile);
// The same with step `at` (0-based) simulated otherwise, as `other` (a traced step, which may take
// another path and count other events): combine_steps of the n in their order, byte for byte.
StepResult repeat_step_with(const StepResult& step, int n, const StepResult& other, int at,
                            const workloads::Profile& profile);

// The steps of one setup combined: means (rounded down to the ps), the spread, the GPU most often
// critical; per-GPU idle and the critical path's compute take what rounding leaves, so the parts
// add up to the mean step exactly. Events and messages are totals over the steps.
StepResult combine_steps(const std::vector<StepResult>& steps, const workloads::Profile& profile);

}  // namespace hybridsim::analysis

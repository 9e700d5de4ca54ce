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

#include "analysis/step/step_runner.h"

namespace hybridsim::analysis {

// Every step of setup.variability.steps (one when it is 1). `first`, when given, is step 0 already
// simulated (e.g. with a trace: simulate_step with setup.step_index = 0); the others start at 1.
StepResult simulate_steps(const StepSetup& setup, std::optional<StepResult> first = std::nullopt,
                          SimulationProgress* progress = nullptr);

// The steps of one setup combined: means (rounded down to the ps), the spread, the GPU most often
// critical; per-GPU idle and the critical path's compute take what rounding leaves, so the parts
// add up to the mean step exactly. Events and messages are totals over the steps.
StepResult combine_steps(const std::vector<StepResult>& steps, const workloads::Profile& profile);

}  // namespace hybridsim::analysis

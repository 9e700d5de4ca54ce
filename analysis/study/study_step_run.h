// The step cache's second phase (StepCache::simulate, study_steps.h): every resolved step
// (study_step_resolve.h) estimated against its caps before any is simulated, then simulated on threads,
// each holding its memory against the budget they share (analysis/step/memory_gate.h).
//   MemoryGate gate(shared_memory_budget(todo, options), heap_in_use());
//   const auto estimates = estimate_todo(todo, options, gate, failures);  // refused ones left out
//   Ran ran = run_todo(todo, estimates, options, gate, whole);
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/step/budget_error.h"
#include "analysis/step/memory_gate.h"
#include "analysis/step/step_estimate.h"
#include "analysis/study/step_run_progress.h"
#include "analysis/study/study_step_resolve.h"
#include "analysis/study/study_steps.h"
#include "sim/error.h"

namespace hybridsim::analysis::steps_detail {

// What `e` was refused for where it is a refusal for the simulation budget; none for any other error.
std::optional<BudgetRefused> budget_refused(const InputError& e);

// Every step's estimate before any is simulated, checked against its caps. Whatever one step's
// estimate throws is kept by position and, without keep_going, the first in `todo`'s order is
// rethrown (the same step whatever the threads); with it, the step is recorded in `failures` and
// left out of `todo`.
std::vector<StepEstimate> estimate_todo(std::vector<Resolved>& todo, const StepRunOptions& options,
                                        MemoryGate& gate, std::map<StepId, StepFailure>& failures);

// The whole run's estimate, before any step is simulated.
void print_run_estimate(const std::vector<Resolved>& todo, const std::vector<StepEstimate>& estimates,
                        const StepRunOptions& options);

// The budget the steps running at once share (MemoryGate): the caller's (StepRunOptions::memory_budget),
// else the least memory cap of the steps (simulation.max_memory, --max-sim-memory; 0: none). Each step's
// estimate is checked against its cap alone: `plan -m gnmt --gpus 16384` simulated and estimated two
// candidates at once on 2 threads, each within the 4 GiB default, and reached 5.2 GB (issue 31, plan16k).
std::int64_t shared_memory_budget(const std::vector<Resolved>& todo, const StepRunOptions& options);

// The steps simulated in parallel, each holding its memory estimate against the shared budget
// while it runs; by position, its point or (with keep_going) why it failed.
struct Ran {
  std::vector<StepPoint> results;
  std::vector<std::optional<std::string>> failed_why;
  // What a BudgetRefusal in its run was refused for (its estimate had passed the caps); none for any
  // other failure.
  std::vector<std::optional<BudgetRefused>> over_budget;
};

Ran run_todo(const std::vector<Resolved>& todo, const std::vector<StepEstimate>& estimates,
             const StepRunOptions& options, MemoryGate& gate, StepRunProgress& whole);

}  // namespace hybridsim::analysis::steps_detail

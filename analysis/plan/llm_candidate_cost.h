// What one transformer-planner candidate costs to build and simulate, judged before anything of it
// is built: its program's tasks counted on its generated profile, the time building them takes (in
// events' time, against the plan's --max-events) and the memory its program and simulation hold
// (against the plan's --max-sim-memory, which the candidates built at once on the threads share:
// analysis/step/memory_gate.h). A candidate past either is not built and is ranked by its closed
// form, saying why and which option would raise the limit.
//   const LlmCandidateCost cost = llm_candidate_cost(profile, layout, r.gpus);
//   if (std::string why = llm_candidate_refusal(r, cost); !why.empty()) ...;   // estimated only
#pragma once
#include <cstdint>
#include <string>

#include "analysis/plan/llm_closed_forms.h"
#include "workloads/profile/profile.h"

namespace hybridsim::analysis {

struct LlmPlanRequest;

// Bytes a candidate's run holds per task of its program counted as llm_candidate_cost counts them
// (a lower bound of its tasks), its program, collectives, fold and simulation together: measured,
// llm_candidate_cost.cpp.
inline constexpr std::int64_t kBytesPerProgramTask = 450;
// Events' time one counted task costs to build and set up (program, collectives, fold plan) at
// sim/budget.h's kEventsPerSecond: measured, llm_candidate_cost.cpp.
inline constexpr std::uint64_t kBuildEventsPerTask = 12;

struct LlmCandidateCost {
  double program_tasks = 0;  // over all GPUs
  std::int64_t memory = 0;   // bytes: program_tasks × kBytesPerProgramTask
};

// Tasks one GPU's streams run in the step, counted on the candidate's generated profile (as the
// generator makes them, workloads/generators/profile_gen_transformer.cpp): every kernel of every
// op forward and backward, on the stage's 1/pp of the ops, for each of the m micro-batches; the
// TP collectives and ZeRO's gathers are left out. Times the GPUs.
LlmCandidateCost llm_candidate_cost(const workloads::Profile& profile, const LlmLayout& layout, int gpus);

// Tasks a candidate's program may hold over all its GPUs: events_budget_count / kBuildEventsPerTask
// (building takes at most about the time of simulating the budget's events), at least 1; 0 (no
// limit) only for a budget of 0.
std::uint64_t llm_plan_program_tasks(const LlmPlanRequest& r);

// Why the candidate is not built (its program's tasks past llm_plan_program_tasks, or its memory
// past the plan's shared memory budget), naming the option that raises the limit; empty: built.
std::string llm_candidate_refusal(const LlmPlanRequest& r, const LlmCandidateCost& cost);

}  // namespace hybridsim::analysis

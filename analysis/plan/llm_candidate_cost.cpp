#include "analysis/plan/llm_candidate_cost.h"

#include <algorithm>

#include "analysis/plan/llm_planner.h"
#include "sim/budget.h"
#include "sim/limits.h"
#include "sim/units.h"
#include "workloads/memory/memory_model.h"

namespace hybridsim::analysis {

// The figures behind kBytesPerProgramTask and kBuildEventsPerTask (llm_candidate_cost.h), measured
// 2026-12-03 on this build with `/usr/bin/time hybridsim run` of single GPT-3 175B candidates at the
// planner's overlay (a loaded 2-core machine, load average 10 to 17: user CPU times):
//   64 A100, dp 4 tp 8 pp 2 sp mb 4 ZeRO-3 (7.1e6 tasks counted): with no events limit 131 M events,
//     25.5 s user, 2.70 GB peak (380 B a task); at the plan's 2e7 events, stopped mid-run, 20.7 s
//     and 2.61 GB: 16.7 s of it building and setting up before 2e7 events (about 4 s), 2.35 us a
//     task, 11.8 events' time at 5e6 events/s;
//   the same at a batch of 384 (1.8e6 tasks): 45 M events, 5.2 s, 709 MB (395 B a task);
//   1,024 A100, dp 256 tp 4 mb 2 ZeRO-3 (7.1e6 tasks): at 2e7 events refused by its estimate in
//     2.5 s and 486 MB (replicas share their programs); at 2e8 events, run with every GPU simulated
//     until 1.6e8 events, 37.1 s and 3.15 GB (444 B a task).
// The largest of each, rounded up, bounds a candidate whatever folds: 450 B and 12 events a task.
LlmCandidateCost llm_candidate_cost(const workloads::Profile& p, const LlmLayout& l, int gpus) {
  double kernels = 0;
  for (const workloads::Op& op : p.ops)
    kernels += static_cast<double>(op.forward.size() + op.backward.size());
  LlmCandidateCost c;
  c.program_tasks = kernels / l.pp * static_cast<double>(l.micro_batches()) * gpus;
  const double bytes = c.program_tasks * static_cast<double>(kBytesPerProgramTask);
  c.memory = bytes < 9e18 ? static_cast<std::int64_t>(bytes) : std::int64_t{9'000'000'000'000'000'000};
  return c;
}

std::uint64_t llm_plan_program_tasks(const LlmPlanRequest& r) {
  // Under 12 events the quotient is 0, read as no limit: --max-events 1 built every candidate at
  // 65,536 GPUs for 4 minutes before the step's own estimate refused it. At least one task.
  if (r.events_budget_count == 0) return 0;
  return std::max<std::uint64_t>(1, r.events_budget_count / kBuildEventsPerTask);
}

std::string llm_candidate_refusal(const LlmPlanRequest& r, const LlmCandidateCost& cost) {
  const std::uint64_t cap = llm_plan_program_tasks(r);
  const auto tasks = static_cast<std::uint64_t>(cost.program_tasks);
  if (cap > 0 && cost.program_tasks > static_cast<double>(cap))
    return "the step's program would hold about " + sim::BudgetExceeded::count_text(tasks) +
           " tasks over all GPUs, over the plan's " + sim::BudgetExceeded::count_text(cap) + " (" +
           r.names.max_events + " / " + std::to_string(kBuildEventsPerTask) + ") before the fold is known";
  // The need in the decimal units a run's budget refusal gives it in, the cap as the user wrote it:
  // "--max-sim-memory 10 MB" was said "over the plan's 0.01 GiB", "1 MB" "977 KiB" (hunt4).
  if (r.memory_budget_bytes > 0 && cost.memory > r.memory_budget_bytes)
    return "building and simulating it would hold about " + sim::human_bytes(sim::Bytes::of(cost.memory)) +
           " (" + sim::BudgetExceeded::count_text(tasks) + " tasks over all GPUs at about " +
           std::to_string(kBytesPerProgramTask) + " B each), over the plan's " +
           (r.memory_budget_given.empty() && r.memory_budget_bytes == sim::kDefaultMaxMemory
                ? std::string(sim::limits::kSimMemory.shown)
            : r.memory_budget_given.empty() ? sim::human_bytes(sim::Bytes::of(r.memory_budget_bytes))
                                            : r.memory_budget_given) +
           " (" + r.names.max_sim_memory + ", shared by the candidates built at once)";
  return {};
}

}  // namespace hybridsim::analysis

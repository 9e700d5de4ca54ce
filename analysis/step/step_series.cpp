#include "analysis/step/step_series.h"

#include <algorithm>
#include <map>

#include "analysis/step/step_attempt.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "sim/work_progress.h"

namespace hybridsim::analysis {

namespace {

sim::Time mean_of(const std::vector<sim::Time>& v) {
  std::int64_t s = 0;
  for (const sim::Time t : v) s += t.ps();
  return sim::Time::ps(s / static_cast<std::int64_t>(v.size()));
}

// The same GPU (or the mean, or the critical GPU) over the steps; idle takes the rest of `step`.
GpuStepMetrics mean_metrics(const std::vector<const GpuStepMetrics*>& m, sim::Time step) {
  GpuStepMetrics out = *m.front();
  auto mean = [&](sim::Time GpuStepMetrics::*field) {
    std::int64_t s = 0;
    for (const GpuStepMetrics* x : m) s += (x->*field).ps();
    return sim::Time::ps(s / static_cast<std::int64_t>(m.size()));
  };
  out.finish = mean(&GpuStepMetrics::finish);
  out.compute = mean(&GpuStepMetrics::compute);
  out.compute_slowed = mean(&GpuStepMetrics::compute_slowed);
  out.gradient_copies = mean(&GpuStepMetrics::gradient_copies);
  out.communication = mean(&GpuStepMetrics::communication);
  out.exposed_communication = mean(&GpuStepMetrics::exposed_communication);
  for (const auto part :
       {&GpuStepMetrics::optimizer, &GpuStepMetrics::tp_communication, &GpuStepMetrics::ep_communication,
        &GpuStepMetrics::pipeline_bubble, &GpuStepMetrics::dp_communication})
    out.*part = mean(part);
  out.idle = step - out.compute - out.exposed_communication;
  return out;
}

CriticalPath mean_path(const std::vector<StepResult>& steps, sim::Time step) {
  auto mean = [&](sim::Time CriticalPath::*field) {
    std::int64_t s = 0;
    for (const StepResult& r : steps) s += (r.critical_path.*field).ps();
    return sim::Time::ps(s / static_cast<std::int64_t>(steps.size()));
  };
  CriticalPath p = steps.front().critical_path;
  p.compute_slowed = mean(&CriticalPath::compute_slowed);
  p.gradient_copies = mean(&CriticalPath::gradient_copies);
  p.optimizer = mean(&CriticalPath::optimizer);
  p.gradient_communication = mean(&CriticalPath::gradient_communication);
  p.model_parallel_transfers = mean(&CriticalPath::model_parallel_transfers);
  p.tensor_parallel_communication = mean(&CriticalPath::tensor_parallel_communication);
  p.expert_parallel_communication = mean(&CriticalPath::expert_parallel_communication);
  p.launch_gaps = mean(&CriticalPath::launch_gaps);
  p.compute = step - p.gradient_communication - p.model_parallel_transfers - p.launch_gaps -
              p.tensor_parallel_communication - p.expert_parallel_communication;
  for (const StepResult& r : steps) {
    p.gpus_visited = std::max(p.gpus_visited, r.critical_path.gpus_visited);
    p.gpu_changes = std::max(p.gpu_changes, r.critical_path.gpu_changes);
  }
  return p;
}

// After the first step of several: the whole run's events (step 1's times the steps) held to the
// events limit (sim/limits.h, "events"), and its estimate told to a person waiting on it.
void check_whole_run(const StepSetup& setup, const StepResult& first, int n, SimulationProgress* progress) {
  const std::uint64_t each = std::max<std::uint64_t>(first.events, 1);
  const std::uint64_t limit = setup.limits.max_events;
  const auto steps = static_cast<std::uint64_t>(n);
  const std::uint64_t total = each > UINT64_MAX / steps ? UINT64_MAX : each * steps;
  if (limit > 0 && total > limit)
    throw sim::BudgetExceeded(sim::BudgetExceeded::Kind::Events, total, limit, 0,
                              "its " + std::to_string(n) + " variability steps run at about " +
                                  sim::BudgetExceeded::count_text(each) + " events each (as step 1 did)");
  if (progress != nullptr) progress->run_estimate(n, total);
}

}  // namespace

StepResult combine_steps(const std::vector<StepResult>& steps, const workloads::Profile& profile) {
  if (steps.empty()) throw InternalError("combine_steps: no steps");
  if (steps.size() == 1) return steps.front();
  std::vector<sim::Time> times;
  for (const StepResult& r : steps) times.push_back(r.step_time);
  StepResult out = steps.front();
  out.step_time = mean_of(times);
  std::sort(times.begin(), times.end());
  // p95 by nearest rank: the ceil(0.95 n)-th smallest.
  const std::size_t rank = (95 * times.size() + 99) / 100;
  out.spread = {static_cast<int>(steps.size()), out.step_time, times[rank - 1], times.front(), times.back()};
  const double seconds = out.step_time.to_seconds();
  out.samples_per_second = seconds > 0 ? static_cast<double>(out.global_batch) / seconds : 0;
  out.units_per_second =
      seconds > 0 ? static_cast<double>(profile.meta.units_per_step) * out.dp * out.accumulation / seconds
                  : 0;

  std::vector<const GpuStepMetrics*> of;
  for (std::size_t g = 0; g < out.per_gpu.size(); ++g) {
    of.clear();
    for (const StepResult& r : steps) of.push_back(&r.per_gpu[g]);
    out.per_gpu[g] = mean_metrics(of, out.step_time);
  }
  of.clear();
  for (const StepResult& r : steps) of.push_back(&r.mean);
  out.mean = mean_metrics(of, out.step_time);
  out.mean.gpu = -1;
  // The critical GPU's metrics averaged over the steps, labelled with the GPU critical most often.
  std::map<int, int> critical_count;
  of.clear();
  for (const StepResult& r : steps) {
    of.push_back(&r.critical);
    ++critical_count[r.critical.gpu];
  }
  out.critical = mean_metrics(of, out.step_time);
  out.critical.gpu =
      std::max_element(critical_count.begin(), critical_count.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->first;
  out.critical_path = mean_path(steps, out.step_time);
  out.events = out.messages = 0;
  for (std::size_t k = 0; k < out.bytes_by_link_kind.size(); ++k) {
    std::int64_t b = 0;
    for (const StepResult& r : steps) b += r.bytes_by_link_kind[k].count();
    out.bytes_by_link_kind[k] = sim::Bytes::of(b / static_cast<std::int64_t>(steps.size()));
  }
  out.simulation = {};
  for (const StepResult& r : steps) {
    out.events += r.events;
    out.messages += r.messages;
    out.simulation.folded += r.simulation.folded;
    out.simulation.embedded += r.simulation.embedded;
    out.simulation.bound = max(out.simulation.bound, r.simulation.bound);
    out.simulation.rerun = out.simulation.rerun || r.simulation.rerun;
    if (out.simulation.full_reason.empty()) out.simulation.full_reason = r.simulation.full_reason;
    out.simulation.gpus_simulated = std::max(out.simulation.gpus_simulated, r.simulation.gpus_simulated);
    if (out.simulation.step_fold_reason.empty())
      out.simulation.step_fold_reason = r.simulation.step_fold_reason;
    if (out.simulation.strategy.empty()) {  // the first step's
      out.simulation.strategy = r.simulation.strategy;
      out.simulation.refused = r.simulation.refused;
      // Every step has the same collectives over the same GPUs: the first step's algorithms.
      out.simulation.hierarchical = r.simulation.hierarchical;
      out.simulation.hierarchical_as_ring = r.simulation.hierarchical_as_ring;
      out.simulation.hierarchical_unfit = r.simulation.hierarchical_unfit;
    }
  }
  return out;
}

StepResult simulate_steps(const StepSetup& setup, std::optional<StepResult> first,
                          SimulationProgress* progress) {
  const int n = std::max(1, setup.variability.steps);
  std::vector<StepResult> steps;
  if (first) steps.push_back(std::move(*first));
  StepSetup one = setup;
  workloads::StepProgram program = build_program(setup, progress);
  if (n > 1 && !steps.empty()) check_whole_run(setup, steps.front(), n, progress);
  for (int i = static_cast<int>(steps.size()); i < n; ++i) {
    one.step_index = i;
    apply_step_variability(one, program);
    steps.push_back(simulate_program(one, program, {.progress = progress}));
    if (n > 1 && i == 0) check_whole_run(setup, steps.front(), n, progress);
    if (progress != nullptr) progress->step_done(i + 1, n, steps.back().step_time);
  }
  StepResult out = combine_steps(steps, *setup.profile);
  // Freeing a 65,536-GPU program takes seconds (its tasks and collectives' members: gdb found the
  // 65,536-GPU DGX-1 run's last 5 s there at load 6, without a line): told GPU by GPU.
  ProgramBuildTicks ticks(progress, progress ? attempt_label(setup, "done") : "");
  sim::WorkProgress* told = progress ? &ticks : nullptr;
  sim::ticked_loop(told, "freeing its GPUs' programs", program.gpus.size(), "GPUs",
                   [&](std::size_t g) { program.gpus[g] = {}; });
  sim::ticked_loop(told, "freeing its collectives", program.collectives.size(), "collectives",
                   [&](std::size_t c) { program.collectives[c] = {}; });
  return out;
}

}  // namespace hybridsim::analysis

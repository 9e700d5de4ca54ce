#include "analysis/step/step_series.h"

#include <algorithm>
#include <map>

#include "analysis/step/step_attempt.h"
#include "analysis/step/step_estimate.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "sim/work_progress.h"

namespace hybridsim::analysis {

namespace {

// Steps with how many times each counts: a run of n steps is n steps of weight 1, or alike steps
// (steps_alike) one step of weight n; every figure is what n results one by one would give.
struct Weighted {
  const StepResult* step;
  std::int64_t times;
};

std::int64_t total_weight(const std::vector<Weighted>& steps) {
  std::int64_t n = 0;
  for (const Weighted& w : steps) n += w.times;
  return n;
}

// The same GPU (or the mean, or the critical GPU) over the steps; idle takes the rest of `step`.
GpuStepMetrics mean_metrics(const std::vector<const GpuStepMetrics*>& m, const std::vector<Weighted>& steps,
                            sim::Time step) {
  GpuStepMetrics out = *m.front();
  const std::int64_t n = total_weight(steps);
  auto mean = [&](sim::Time GpuStepMetrics::*field) {
    std::int64_t s = 0;
    for (std::size_t i = 0; i < m.size(); ++i) s += (m[i]->*field).ps() * steps[i].times;
    return sim::Time::ps(s / n);
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

CriticalPath mean_path(const std::vector<Weighted>& steps, sim::Time step) {
  const std::int64_t n = total_weight(steps);
  auto mean = [&](sim::Time CriticalPath::*field) {
    std::int64_t s = 0;
    for (const Weighted& w : steps) s += (w.step->critical_path.*field).ps() * w.times;
    return sim::Time::ps(s / n);
  };
  CriticalPath p = steps.front().step->critical_path;
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
  for (const Weighted& w : steps) {
    p.gpus_visited = std::max(p.gpus_visited, w.step->critical_path.gpus_visited);
    p.gpu_changes = std::max(p.gpu_changes, w.step->critical_path.gpu_changes);
  }
  return p;
}

std::uint64_t times_saturating(std::uint64_t x, std::int64_t k) {
  const auto m = static_cast<std::uint64_t>(k);
  return m != 0 && x > UINT64_MAX / m ? UINT64_MAX : x * m;
}

// Events, messages and collectives summed over the steps; how they were simulated as the first
// step's, or the most any step needed. The collectives were step 1's alone: "779 collectives and
// transfers, 25776 messages, 59016 events over 3 steps" and "folded 33 of 779 collectives" (hunt4).
void add_totals(StepResult& out, const std::vector<Weighted>& steps) {
  out.events = out.messages = 0;
  out.collectives = 0;
  out.simulation = {};
  for (const Weighted& w : steps) {
    const StepResult& r = *w.step;
    out.events += times_saturating(r.events, w.times);
    out.messages += times_saturating(r.messages, w.times);
    out.collectives += r.collectives * static_cast<std::size_t>(w.times);
    out.simulation.folded += r.simulation.folded * static_cast<std::size_t>(w.times);
    out.simulation.embedded += r.simulation.embedded * static_cast<std::size_t>(w.times);
    out.simulation.bound = max(out.simulation.bound, r.simulation.bound);
    out.simulation.rerun = out.simulation.rerun || r.simulation.rerun;
    // Every step's attempts thrown away, as its events: a variability run's later steps tried a fold
    // their estimate foresees given up, unseen while only one step's count was kept.
    out.simulation.given_up_events += times_saturating(r.simulation.given_up_events, w.times);
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
}

StepResult combine_weighted(const std::vector<Weighted>& steps, const workloads::Profile& profile) {
  if (steps.empty()) throw InternalError("combine_steps: no steps");
  const std::int64_t n = total_weight(steps);
  if (n == 1) return *steps.front().step;
  std::vector<std::pair<sim::Time, std::int64_t>> times;
  std::int64_t sum = 0;
  for (const Weighted& w : steps) {
    times.emplace_back(w.step->step_time, w.times);
    sum += w.step->step_time.ps() * w.times;
  }
  StepResult out = *steps.front().step;
  out.step_time = sim::Time::ps(sum / n);
  std::sort(times.begin(), times.end());
  // p95 by nearest rank: the ceil(0.95 n)-th smallest.
  const std::int64_t rank = (95 * n + 99) / 100;
  sim::Time p95 = times.back().first;
  std::int64_t seen = 0;
  for (const auto& [t, k] : times)
    if ((seen += k) >= rank) {
      p95 = t;
      break;
    }
  out.spread = {static_cast<int>(n), out.step_time, p95, times.front().first, times.back().first};
  const double seconds = out.step_time.to_seconds();
  out.samples_per_second = seconds > 0 ? static_cast<double>(out.global_batch) / seconds : 0;
  out.units_per_second =
      seconds > 0 ? static_cast<double>(profile.meta.units_per_step) * out.dp * out.accumulation / seconds
                  : 0;

  std::vector<const GpuStepMetrics*> of;
  for (std::size_t g = 0; g < out.per_gpu.size(); ++g) {
    of.clear();
    for (const Weighted& w : steps) of.push_back(&w.step->per_gpu[g]);
    out.per_gpu[g] = mean_metrics(of, steps, out.step_time);
  }
  of.clear();
  for (const Weighted& w : steps) of.push_back(&w.step->mean);
  out.mean = mean_metrics(of, steps, out.step_time);
  out.mean.gpu = -1;
  // The GPU that finished last most often (the lowest rank of a tie), with its own metrics averaged
  // over the steps: the mean of each step's critical GPU was labelled with one GPU but mixed several
  // GPUs' figures (issue 31), a breakdown no GPU had.
  std::map<int, std::int64_t> critical_count;
  for (const Weighted& w : steps) critical_count[w.step->critical.gpu] += w.times;
  const auto most = std::max_element(critical_count.begin(), critical_count.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  const auto own = std::find_if(out.per_gpu.begin(), out.per_gpu.end(),
                                [&](const GpuStepMetrics& m) { return m.gpu == most->first; });
  if (own == out.per_gpu.end()) throw InternalError("combine_steps: the critical GPU has no metrics");
  out.critical = *own;
  out.spread.critical_steps = static_cast<int>(most->second);
  out.critical_path = mean_path(steps, out.step_time);
  for (std::size_t k = 0; k < out.bytes_by_link_kind.size(); ++k) {
    std::int64_t b = 0;
    for (const Weighted& w : steps) b += w.step->bytes_by_link_kind[k].count() * w.times;
    out.bytes_by_link_kind[k] = sim::Bytes::of(b / n);
  }
  add_totals(out, steps);
  return out;
}

// After the first step of several: the whole run's events (step 1's times the steps) held to the
// events limit (sim/limits.h, "events"), and its estimate told to a person waiting on it.
void check_whole_run(const StepSetup& setup, const StepResult& first, int n, SimulationProgress* progress) {
  const std::uint64_t each = std::max<std::uint64_t>(first.events, 1);
  const std::uint64_t limit = setup.limits.max_events;
  const std::uint64_t total = times_saturating(each, n);
  if (limit > 0 && total > limit) {
    sim::BudgetExceeded over(sim::BudgetExceeded::Kind::Events, total, limit, 0,
                             "its " + std::to_string(n) + " variability steps run at about " +
                                 sim::BudgetExceeded::count_text(each) + " events each (as step 1 did)");
    // The cap that passes this check (step 1 is the same at any cap), quoted as a step's refusals
    // quote theirs: "raise it" alone left the user to guess from the rounded "about 1.2e6".
    over.upper = total;
    throw over;
  }
  if (progress != nullptr) progress->run_estimate(n, total);
}

}  // namespace

bool steps_alike(const StepSetup& setup) {
  return setup.variability.steps > 1 && !setup.variability.varies();
}

int simulated_steps(const StepSetup& setup) {
  return steps_alike(setup) ? 1 : std::max(1, setup.variability.steps);
}

StepEstimate estimate_of_steps(StepEstimate step, const StepSetup& setup) {
  // Every event of a step is counted again in each step simulated, its collectives' as its tasks':
  // counted for the tasks and the collectives that cannot fold alone, a sweep point of 20 drawn steps
  // of GNMT dp 32 was estimated at its tasks' 20 times and its folded all-reduces' once; counted for
  // every step, a point of 20 alike steps was estimated at 20 steps where one is simulated.
  const std::int64_t n = simulated_steps(setup);
  const auto times = [n](std::uint64_t& events) { events = times_saturating(events, n); };
  times(step.task_events);
  times(step.collective_events.queue);
  times(step.collective_events.models);
  times(step.sure.events);
  times(step.sure.messages);
  times(step.full_events);
  return step;
}

StepResult repeat_step(const StepResult& step, int n, const workloads::Profile& profile) {
  return combine_weighted({{&step, std::max(1, n)}}, profile);
}

StepResult repeat_step_with(const StepResult& step, int n, const StepResult& other, int at,
                            const workloads::Profile& profile) {
  std::vector<Weighted> in_order;  // step 1 first: the figures that are not means are its
  if (at > 0) in_order.push_back({&step, at});
  in_order.push_back({&other, 1});
  if (n - 1 - at > 0) in_order.push_back({&step, n - 1 - at});
  return combine_weighted(in_order, profile);
}

StepResult combine_steps(const std::vector<StepResult>& steps, const workloads::Profile& profile) {
  std::vector<Weighted> each;
  for (const StepResult& r : steps) each.push_back({&r, 1});
  return combine_weighted(each, profile);
}

StepResult simulate_steps(const StepSetup& setup, std::optional<StepResult> first,
                          SimulationProgress* progress, const StepEstimate* estimated) {
  const int n = std::max(1, setup.variability.steps);
  // Nothing drawn: every step is step 1 again (same program, same inputs), so step 1 is simulated
  // alone and stands for all n; its events are the whole run's work, so no estimate of n is made.
  const bool alike = steps_alike(setup);
  const int simulated = simulated_steps(setup);
  std::vector<StepResult> steps;
  if (first) steps.push_back(std::move(*first));
  StepSetup one = setup;
  workloads::StepProgram program = build_program(setup, progress);
  if (simulated > 1 && !steps.empty()) check_whole_run(setup, steps.front(), n, progress);
  // The step's estimate, the one sweep, study and plan check before they start (estimate_program):
  // held to the caps before the first attempt, in the words a sweep's point is refused in, and the
  // total every attempt's progress lines count against. Each attempt charged its own before (a
  // folded first attempt's 293,424 events for Mixtral 8x7B ep 8 with trees, where the step ran
  // 1,081,008 every GPU simulated and a one-point sweep said 1.1e6).
  // Its first try, as the estimate set it up, is the one step 1 runs (not set up again).
  StepEstimate estimate = estimated != nullptr ? *estimated : StepEstimate{};
  FirstAttempt staged;
  const bool from_zero = steps.empty() && setup.step_index == 0;
  if (static_cast<int>(steps.size()) < simulated && estimated == nullptr) {
    estimate = estimate_program(setup, program, progress, from_zero ? &staged : nullptr);
    estimate.check(setup.limits);
  }
  // Its first fold, where the estimate (its own, or a sweep point's made before) foresaw it given up,
  // is not tried by step 1 (whose program the estimate counted).
  if (from_zero) staged.fold_given_up = estimate.fold_given_up;
  // Each step's record entries, cleared and taken by the next (StepObservers::record_storage).
  sim::ExecutionRecord::Storage record_storage;
  const StepObservers observers{.progress = progress,
                                .expected_events = estimate.events(),
                                .expected_way = estimate.way,
                                .record_storage = simulated > 1 ? &record_storage : nullptr};
  for (int i = static_cast<int>(steps.size()); i < simulated; ++i) {
    one.step_index = i;
    apply_step_variability(one, program);
    // A later step's own program (its draws) foreseen as step 1's is, by the same rule
    // (estimate_program): its first fold, where foreseen given up, not tried, and its first try's
    // set-up run rather than made again. Only step 1's was: GNMT dp 64 under auto with WMT16 lengths
    // in bins threw away 648,990 events of steps 2 and 3 (tests/bench/MEASUREMENTS.md, plan16k3).
    if (i > 0 || !from_zero) {
      staged = {};
      staged.fold_given_up = estimate_program(one, program, progress, &staged).fold_given_up;
    }
    steps.push_back(simulate_program(one, program, observers, &staged));
    if (simulated > 1 && i == 0) check_whole_run(setup, steps.front(), n, progress);
    if (progress != nullptr && !alike) progress->step_done(i + 1, n, steps.back().step_time);
  }
  record_storage = {};  // the last step's: no step follows
  StepResult out =
      alike ? repeat_step(steps.front(), n, *setup.profile) : combine_steps(steps, *setup.profile);
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

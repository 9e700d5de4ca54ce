// The step cache's second phase (study_step_run.h): every resolved step estimated against its
// caps before any is simulated, then simulated on threads, each holding its memory against the budget
// they share. A file of its own: the threads, the memory gate and the refusals for the budget are one
// concern, apart from resolving the requests (study_step_resolve.cpp).
#include "analysis/study/study_step_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <ostream>
#include <thread>
#include <utility>

#include "analysis/step/step_progress.h"
#include "analysis/step/step_runner.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "workloads/memory/memory_model.h"

namespace hybridsim::analysis::steps_detail {
namespace {

StepSetup setup_of(const Resolved& r) {
  StepSetup setup;
  static_cast<workloads::StepConfig&>(setup) = r.config;
  setup.profile = r.profile;
  setup.topology = r.topology;
  return setup;
}

// A step over its caps, named by its configuration, with the option to raise them.
BudgetRefusal refusal(const Resolved& r, const StepSetup& setup, const sim::BudgetExceeded& e,
                      const BudgetKnobs& knobs) {
  return budget_refusal(describe(r.label), e, "the step", knobs,
                        setup.collective.fast_path == sim::FastPath::Off);
}

// `estimate`: the step's, made before any step ran (estimate_todo), which its attempts' lines count
// against and name the way of, as a run's do (each attempt counted against its own before). `held`
// (null: none): its hold on the budget shared with the steps run at once, which its later ways grow.
StepPoint simulate_resolved(const Resolved& r, SimulationProgress* progress, bool parallel,
                            const BudgetKnobs& knobs, const StepEstimate& estimate, MemoryGate::Hold* held) {
  const auto start = std::chrono::steady_clock::now();
  StepSetup setup = setup_of(r);
  // Steps on several threads already use the cores: a step's tree models run on its own.
  if (parallel) setup.limits.model_threads = 1;
  StepResult result;
  try {
    // With the estimate's foresight: a fold it foresaw given up is not tried (as `run`'s).
    result = simulate_step(setup,
                           {.progress = progress,
                            .expected_events = estimate.events(),
                            .expected_way = estimate.way,
                            .shared = held},
                           &estimate);
  } catch (const sim::BudgetExceeded& e) {  // named by its configuration, with the option to raise
    throw refusal(r, setup, e, knobs);
  }
  StepPoint p;
  p.id = r.id;
  p.label = r.label;
  p.global_batch = result.global_batch;
  p.step_time = result.step_time;
  p.samples_per_second = result.samples_per_second;
  p.units_per_second = result.units_per_second;
  p.critical = result.critical;
  p.mean = result.mean;
  p.mp_cut_bytes = setup.placement.cut_bytes(*r.profile);
  p.memory_peaks = workloads::model_step_memory(*r.profile, setup, *setup.topology).peaks();
  p.events = result.events;
  p.given_up_events = result.simulation.given_up_events;
  if (result.simulation.hierarchical > 0 &&
      result.simulation.hierarchical_as_ring == result.simulation.hierarchical)
    p.hierarchical_as_ring = result.simulation.hierarchical_unfit;
  p.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return p;
}

// The threads run_parallel uses for `count` pieces of work.
unsigned parallel_threads(std::size_t count, int threads_wanted) {
  const unsigned threads = threads_wanted > 0 ? static_cast<unsigned>(threads_wanted)
                                              : std::max(1u, std::thread::hardware_concurrency());
  return std::min<unsigned>(threads, static_cast<unsigned>(count));
}

// Runs `work(i)` for i in [0, count) on `threads` threads; the first exception (other than an
// InputError that `on_input_error` keeps) stops the others and is rethrown.
template <class Work, class OnInputError>
void run_parallel(std::size_t count, int threads_wanted, Work work, OnInputError on_input_error) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex lock;
  std::exception_ptr error;
  auto loop = [&] {
    while (!failed) {
      const std::size_t i = next++;
      if (i >= count) return;
      try {
        work(i, lock);
      } catch (const InputError& e) {
        std::lock_guard guard(lock);
        if (on_input_error(i, e)) continue;
        if (!error) error = std::current_exception();
        failed = true;
      } catch (...) {
        std::lock_guard guard(lock);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  const unsigned threads = parallel_threads(count, threads_wanted);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(loop);
  loop();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// The simulation after the estimating, told to its lines so that they give the command's end (issue
// 31: `plan -m gnmt --gpus 16384` estimated for minutes, its lines giving only the estimating's end):
// the events of the steps estimated so far and within their caps (`events`, over `gpus_done` of
// `gpus` GPUs' steps), extrapolated over the rest by their GPUs, at sim::kEventsPerSecond as the
// run's estimate counts them.
void tell_simulation_after(ProgressEstimate& estimating, std::uint64_t events, double gpus_done, double gpus,
                           std::size_t steps_done, std::size_t steps) {
  if (!(gpus_done > 0)) return;
  const double all = static_cast<double>(events) * std::max(1.0, gpus / gpus_done);
  auto [seconds, how] = simulation_after(all, steps_done, steps, "steps estimated");
  estimating.set_after(seconds, std::move(how));
}

// What a step holds while it is simulated, against the budget the steps on the threads share: its
// estimate's state (what its run checks against its own cap), or what the caller reserved for it
// (StepRunOptions::memory) where that is more.
std::int64_t simulation_memory(const Resolved& r, const StepEstimate& estimate) {
  return std::max(r.memory, estimate.memory());
}

}  // namespace

std::optional<BudgetRefused> budget_refused(const InputError& e) {
  const auto* refusal = dynamic_cast<const BudgetRefusal*>(&e);
  return refusal != nullptr ? std::optional<BudgetRefused>(refusal->refused()) : std::nullopt;
}

std::vector<StepEstimate> estimate_todo(std::vector<Resolved>& todo, const StepRunOptions& options,
                                        MemoryGate& gate, std::map<StepId, StepFailure>& failures) {
  std::vector<StepEstimate> estimates(todo.size());
  std::vector<std::exception_ptr> refused(todo.size());
  // Estimating builds every step's program, whose cost grows with its GPUs: seconds for a large grid,
  // told like any long work, the GPUs of the steps estimated counting (the largest come first).
  double gpus = 0;
  for (const Resolved& r : todo) gpus += r.label.gpus;
  ProgressEstimate estimating(
      options.progress, options.label, gpus, "GPUs' steps estimated", options.clock,
      {.since = options.started, .until = "every step is estimated, their simulation not yet counted"});
  // Before any step is estimated, their simulation after is known only from below (each simulates at
  // least its worker's kernels, analysis::event_floor): counted so, the lines give the command's end
  // from the first, revised once a step is estimated. Before, a plan's first step of 16,384 GPUs took
  // seconds (20 s at load 7) with lines that gave only the estimating's end (issue 31, plan16k).
  std::uint64_t floor = 0;
  for (const Resolved& r : todo) floor += r.profile ? event_floor(*r.profile) : 0;
  estimating.set_after(static_cast<double>(floor) / sim::kEventsPerSecond,
                       "its simulation after: at least " + sim::BudgetExceeded::count_text(floor) +
                           " events, its steps' kernels, none of the " + std::to_string(todo.size()) +
                           " steps estimated yet");
  std::atomic<std::int64_t> estimated{0};
  std::atomic<std::uint64_t> events_estimated{0};
  std::atomic<std::size_t> steps_estimated{0};
  run_parallel(
      todo.size(), options.threads,
      [&](std::size_t i, std::mutex&) {
        const StepSetup setup = setup_of(todo[i]);
        estimates[i] = [&] {  // its program built (and freed) within the shared budget
          MemoryGate::Hold hold(&gate, todo[i].memory);
          // Its building told as a share of its GPUs: the largest step's takes seconds.
          PartShare share(
              estimating, [&] { return static_cast<double>(estimated.load()); }, todo[i].label.gpus,
              "before any step is simulated");
          // Its later set-ups held against the budget: each apart where the caller reserved nothing
          // for it, else the caller's reservation grown to their counts (estimate_step).
          return estimate_step(setup, options.progress ? &share : nullptr, &gate,
                               todo[i].memory > 0 ? &hold : nullptr);
        }();
        // A step refused by its caps is not simulated: its events count for nothing after.
        const auto told = [&](std::uint64_t events) {
          tell_simulation_after(estimating, events_estimated += events,
                                static_cast<double>(estimated + todo[i].label.gpus), gpus, ++steps_estimated,
                                todo.size());
          estimating.advance(static_cast<double>(estimated += todo[i].label.gpus),
                             "before any step is simulated");
        };
        try {
          estimates[i].check(setup.limits);
        } catch (const sim::BudgetExceeded& e) {
          told(0);
          throw refusal(todo[i], setup, e, options.budget_knobs);
        }
        told(estimates[i].events());
      },
      [&](std::size_t i, const InputError&) {
        refused[i] = std::current_exception();
        return true;
      });
  std::vector<Resolved> kept;
  std::vector<StepEstimate> kept_estimates;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (!refused[i]) {
      kept.push_back(std::move(todo[i]));
      kept_estimates.push_back(estimates[i]);
      continue;
    }
    if (!options.keep_going) std::rethrow_exception(refused[i]);
    try {
      std::rethrow_exception(refused[i]);
    } catch (const InputError& e) {
      // Refused by its up-front estimate for its budget: over_budget, as a refusal in the run is.
      failures.emplace(todo[i].id, StepFailure{e.what(), {}, budget_refused(e)});
    }
  }
  todo = std::move(kept);
  return kept_estimates;
}

void print_run_estimate(const std::vector<Resolved>& todo, const std::vector<StepEstimate>& estimates,
                        const StepRunOptions& options) {
  if (options.progress == nullptr || todo.empty()) return;
  std::uint64_t events = 0;
  std::size_t largest = 0;
  for (std::size_t i = 0; i < estimates.size(); ++i) {
    events += estimates[i].events();
    if (estimates[i].events() > estimates[largest].events()) largest = i;
  }
  *options.progress << run_estimate_line(options.label, todo.size(), events, describe(todo[largest].label),
                                         estimates[largest].events(), estimates[largest].memory())
                    << "\n"
                    << std::flush;
}

std::int64_t shared_memory_budget(const std::vector<Resolved>& todo, const StepRunOptions& options) {
  if (options.memory_budget > 0) return options.memory_budget;
  std::int64_t least = 0;
  for (const Resolved& r : todo) {
    const std::int64_t cap = r.config.limits.max_memory;
    if (cap > 0 && (least == 0 || cap < least)) least = cap;
  }
  return least;
}

Ran run_todo(const std::vector<Resolved>& todo, const std::vector<StepEstimate>& estimates,
             const StepRunOptions& options, MemoryGate& gate, StepRunProgress& whole) {
  Ran ran{.results = std::vector<StepPoint>(todo.size()),
          .failed_why = std::vector<std::optional<std::string>>(todo.size()),
          .over_budget = std::vector<std::optional<BudgetRefused>>(todo.size())};
  std::size_t done = 0;
  const bool parallel = parallel_threads(todo.size(), options.threads) > 1;
  gate.hold_beside(heap_in_use());  // the routes the estimates cached too
  run_parallel(
      todo.size(), options.threads,
      [&](std::size_t i, std::mutex& lock) {
        StepRunProgress::Share share(whole, i);
        {
          MemoryGate::Hold hold(&gate, simulation_memory(todo[i], estimates[i]));
          ran.results[i] = simulate_resolved(todo[i], options.progress ? &share : nullptr, parallel,
                                             options.budget_knobs, estimates[i], &hold);
        }
        whole.step_done(i, describe(todo[i].label));
        std::lock_guard guard(lock);
        ++done;
        if (options.on_progress) options.on_progress({done, todo.size(), &ran.results[i]});
      },
      [&](std::size_t i, const InputError& e) {
        std::optional<BudgetRefused> budget = budget_refused(e);
        if (!options.keep_going && !(options.keep_going_past_run_refusals && budget)) return false;
        ran.failed_why[i] = e.what();
        whole.step_done(i, {});
        ran.over_budget[i] = std::move(budget);
        ++done;
        return true;
      });
  return ran;
}

}  // namespace hybridsim::analysis::steps_detail

#include "analysis/sweep/sweep_point_runner.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <thread>

#include "analysis/output/csv.h"
#include "analysis/run/scenario_run.h"
#include "analysis/step/budget_error.h"
#include "analysis/sweep/sweep_point_traces.h"
#include "analysis/sweep/sweep_table.h"
#include "scenarios/loader/resolve.h"
#include "sim/budget.h"
#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

// The points' estimates in `todo`'s order (analysis/sweep/sweep_plan.h), for the progress lines.
std::vector<std::uint64_t> todo_events(const SweepPlan& plan) {
  std::vector<std::uint64_t> out;
  for (const scenarios::SweepPoint* p : plan.todo) {
    const auto it = plan.estimates.find(p->index);
    out.push_back(it == plan.estimates.end() ? 0 : it->second.events());
  }
  return out;
}

}  // namespace

PointRunner::PointRunner(const SweepOptions& options, SweepPlan& plan, const std::filesystem::path& directory,
                         std::ofstream& partial, CreatedFolders& made)
    : options_(options),
      plan_(plan),
      directory_(directory),
      partial_(partial),
      made_(made),
      progress_(options.progress && leader() ? &std::cerr : nullptr, "sweep", todo_events(plan), "points") {}

void PointRunner::run(int jobs, SweepOutcome& outcome) {
  by_rank_.assign(options_.team ? static_cast<std::size_t>(options_.team->size()) : 1, 0);
  parallel_ = jobs > 1;
  // Another rank's first ask gets the point kept for it (position rank - 1): with the points handed
  // out first come first served, a rank that started late (loading its scenario, MPI's start) found
  // them all taken when points are quick, and ran none (tests/mpi/mpi_sweep_test.sh failed so under
  // load). The leader's workers and every later ask take the rest in order.
  reserved_ = std::min(by_rank_.size() - 1, plan_.todo.size());
  first_asked_.assign(by_rank_.size(), false);
  next_ = reserved_;
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j) threads.emplace_back([this] { leader() ? lead() : follow(); });
  std::exception_ptr serve_failure;
  if (options_.team && leader()) {
    try {
      options_.team->serve([this](int rank) { return take(rank); },
                           [this](int rank, const SweepTeam::Finished& f) { record(rank, f); });
    } catch (...) {
      serve_failure = std::current_exception();
      std::lock_guard<std::mutex> lock(mutex_);
      if (error_.empty()) error_ = "the MPI exchange failed";  // stops this rank's workers
    }
  }
  for (auto& t : threads) t.join();
  if (serve_failure) std::rethrow_exception(serve_failure);
  outcome.points_by_rank = by_rank_;
  outcome.points_run = leader() ? done_ : follower_done_;
}

std::optional<std::size_t> PointRunner::take(int rank) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_.empty()) return std::nullopt;
    const auto r = static_cast<std::size_t>(rank);
    if (r > 0 && r < first_asked_.size() && !first_asked_[r]) {
      first_asked_[r] = true;
      if (r - 1 < reserved_) return r - 1;
    }
  }
  const std::size_t i = next_++;
  return i < plan_.todo.size() ? std::optional<std::size_t>(i) : std::nullopt;
}

SweepTeam::Finished PointRunner::run_point(std::size_t i) {
  const scenarios::SweepPoint& point = *plan_.todo[i];
  try {
    scenarios::Scenario s = plan_.point_scenario(point, options_);
    // Points on several threads already use the cores: a step's tree models run on its own.
    if (parallel_) s.simulation.model_threads = 1;
    const scenarios::ResolvedScenario resolved = scenarios::resolve(s);
    ScenarioRunOptions how = point_trace_options(s, point, directory_, made_);
    how.spelling = options_.spelling;
    // Estimated and checked before any point ran (sweep_plan.h): not again.
    if (const auto e = plan_.step_estimates.find(point.index); e != plan_.step_estimates.end())
      how.step_estimate = e->second;
    StepRunProgress::Share share(progress_, i);  // the point's own ticks, for the sweep's lines
    if (options_.progress && leader()) how.progress = &share;
    return {i, false, sweep_row(point, run_scenario(resolved, how))};
  } catch (const sim::BudgetExceeded& e) {
    return failure(point, i, e);  // its caps are the sweep's: raising them is the answer for every point
  } catch (const BudgetRefusal& e) {
    return failure(point, i, e);
  } catch (const InputError& e) {
    // Its own value, found wrong only once it ran (a trace window past its step): a row that says
    // so, as the loader's refusals are, and the other points run.
    return {i, false, failed_sweep_row(point, plan_.head, e.what())};
  } catch (const std::exception& e) {
    return failure(point, i, e);
  }
}

SweepTeam::Finished PointRunner::failure(const scenarios::SweepPoint& point, std::size_t i,
                                         const std::exception& e) {
  return {i, true, "sweep point " + std::to_string(point.index) + " (" + point.label + "): " + e.what()};
}

void PointRunner::record(int rank, const SweepTeam::Finished& f) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (f.position >= plan_.todo.size()) {
    if (error_.empty()) error_ = "rank " + std::to_string(rank) + " reported an unknown point";
    return;
  }
  if (f.failed) {
    if (error_.empty()) error_ = f.text;
    return;
  }
  const scenarios::SweepPoint& point = *plan_.todo[f.position];
  plan_.rows[point.index] = f.text;
  partial_ << f.text << "\n" << std::flush;
  if (!partial_ && error_.empty()) error_ = "cannot write points.partial.csv (is the disk full?)";
  if (is_failed_row(f.text)) {
    failures_[point.index] = csv_split(f.text).back().substr(kFailedPrefix.size());
  } else {
    ++done_;
    ++by_rank_[static_cast<std::size_t>(rank)];
  }
  progress_.step_done(f.position, "point " + std::to_string(plan_.todo[f.position]->index));
}

void PointRunner::lead() {
  while (const auto i = take(0)) record(0, run_point(*i));
}

void PointRunner::follow() {
  std::optional<SweepTeam::Finished> previous;
  for (;;) {
    std::optional<std::size_t> i;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (previous && !previous->failed && !is_failed_row(previous->text)) ++follower_done_;
      i = options_.team->next(previous);
    }
    if (!i) return;
    previous = run_point(*i);
  }
}

}  // namespace hybridsim::analysis

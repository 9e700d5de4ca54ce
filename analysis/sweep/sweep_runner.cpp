#include "analysis/sweep/sweep_runner.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <system_error>
#include <thread>

#include "analysis/output/created_folders.h"
#include "analysis/output/csv.h"
#include "analysis/output/plot_gnuplot.h"
#include "analysis/run/scenario_run.h"
#include "analysis/study/step_run_progress.h"
#include "analysis/sweep/sweep_integrity.h"
#include "analysis/sweep/sweep_plan.h"
#include "analysis/sweep/sweep_plot.h"
#include "analysis/sweep/sweep_point_runner.h"
#include "analysis/sweep/sweep_point_traces.h"
#include "analysis/sweep/sweep_table.h"
#include "analysis/sweep/sweep_team.h"
#include "scenarios/loader/sweep.h"
#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

// Before any point runs, on stderr: the sweep's events in all and its largest point's.
void print_sweep_estimate(const SweepPlan& plan) {
  const scenarios::SweepPoint* largest = nullptr;
  std::uint64_t events = 0;
  StepEstimate most;
  for (const scenarios::SweepPoint* p : plan.todo) {
    const auto it = plan.estimates.find(p->index);
    if (it == plan.estimates.end()) continue;
    events += it->second.events();
    if (largest == nullptr || it->second.events() > most.events()) {
      largest = p;
      most = it->second;
    }
  }
  if (largest == nullptr) return;
  std::cerr << run_estimate_line("sweep", plan.todo.size(), events,
                                 "point " + std::to_string(largest->index) + " (" + largest->label + ")",
                                 most.events(), most.memory(), "points")
            << std::endl;
}

// The leader starts the partial file afresh with what is known (its first line says which sweep it
// belongs to), then appends as points finish.
std::ofstream open_partial(const std::filesystem::path& path, const SweepPlan& plan, CreatedFolders& made) {
  made.create(path.parent_path());
  {
    std::ofstream fresh(path, std::ios::trunc);
    fresh << partial_preamble(plan.identity.fingerprint, plan.points.size()) << "\n" << plan.head << "\n";
    for (const auto& [i, line] : plan.rows) fresh << line << "\n";
    fresh.flush();
    if (!fresh)
      throw InputError("cannot write " + path.string() + " (is the disk full, or the folder read-only?)");
  }
  return std::ofstream(path, std::ios::app);
}

// The points that failed once run: each one's note, and their count. Where no point of a whole
// sweep was simulated (this time or before), the first one's failure stops it as it did before
// such points became rows: the sweep's partial file holds nothing to resume, and goes.
void settle_failures(const SweepPlan& plan, const std::map<std::size_t, std::string>& failures,
                     const SweepOptions& options, const std::filesystem::path& partial_path,
                     SweepOutcome& outcome) {
  if (failures.empty()) return;
  const auto simulated = [](const auto& row) { return csv_split(row.second).back().empty(); };
  const auto named = [&](std::size_t index) {
    return "sweep point " + std::to_string(index) + " (" + plan.points[index].label + "): ";
  };
  if (options.shard.second == 1 && std::none_of(plan.rows.begin(), plan.rows.end(), simulated)) {
    std::error_code ignored;
    std::filesystem::remove(partial_path, ignored);
    throw InputError(named(failures.begin()->first) + failures.begin()->second);
  }
  for (const auto& [index, why] : failures)
    outcome.notes.push_back(named(index) + "failed once run (not_simulated in results.csv): " + why);
  outcome.points_failed = failures.size();
}

}  // namespace

SweepOutcome run_sweep(const std::string& scenario_path, const SweepOptions& options) {
  return run_sweep(scenarios::read_scenario_source(scenario_path), options);
}

SweepOutcome run_sweep(scenarios::ScenarioSource source, const SweepOptions& options) {
  SweepTeam* const team = options.team;
  const bool leader = !team || team->rank() == 0;
  SweepPlan plan = plan_sweep(std::move(source), options, leader);
  SweepOutcome outcome;
  outcome.directory = plan.directory;
  outcome.points_total = plan.points.size();
  outcome.points_in_shard = plan.todo.size();
  outcome.points_not_simulated = plan.not_simulated;
  outcome.points_refused = static_cast<std::size_t>(std::count_if(
      plan.rows.begin(), plan.rows.end(), [](const auto& row) { return is_refused_row(row.second); }));
  if (const auto trace = scenario_trace_options(plan.base, outcome.directory).trace)
    outcome.traces = sweep_point_trace_file(*trace, plan.points.front().index);

  std::set<std::size_t> finished;
  for (const auto& [i, line] : plan.rows) finished.insert(i);
  if (team) {
    const auto shared = team->share_finished({finished.begin(), finished.end()});
    finished = {shared.begin(), shared.end()};
  }
  std::erase_if(plan.todo, [&](const scenarios::SweepPoint* p) { return finished.count(p->index) > 0; });

  const std::filesystem::path partial_path = outcome.directory / "points.partial.csv";
  std::ofstream partial;
  CreatedFolders made;  // removed again if the sweep is refused before any point finished
  if (leader) partial = open_partial(partial_path, plan, made);
  outcome.notes = plan.notes;
  int jobs =
      options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::min<int>(jobs, static_cast<int>(std::max<std::size_t>(1, plan.todo.size())));
  if (options.progress && leader) {
    // Said before the others run, so that a mistyped value need not wait for the whole sweep.
    for (const std::string& refusal : plan.refusals) std::cerr << "note: " << refusal << std::endl;
    print_sweep_estimate(plan);
  }
  PointRunner runner(options, plan, outcome.directory, partial, made);
  runner.run(jobs, outcome);
  if (!leader) {
    made.keep();  // the leader's folder: its to keep or remove
    team->done();
    return outcome;  // the leader writes the results
  }
  partial.close();
  if (!runner.error().empty()) {
    // With no finished point (this time or before) the partial file holds nothing to resume: it
    // goes, with the folders made for it, and the refusal leaves nothing behind.
    if (plan.rows.empty()) {
      std::error_code ignored;
      std::filesystem::remove(partial_path, ignored);
      throw InputError(runner.error());
    }
    throw InputError(runner.error() + "\n(finished points are kept in " + partial_path.string() +
                     "; rerun with " + (options.spelling.is_python() ? "resume=True" : "--resume") + ")");
  }
  settle_failures(plan, runner.failures(), options, partial_path, outcome);
  made.keep();
  outcome.csv = write_sweep_results(outcome.directory, plan.base.source, plan.identity, plan.head, plan.rows);
  if (auto note = whole_model_note(plan.head, plan.rows)) outcome.notes.push_back(std::move(*note));
  std::filesystem::remove(partial_path);
  remove_stale_point_traces(plan, outcome.directory, options.shard);
  if (plan.rows.empty()) {
    outcome.plot_note = "no plot: this shard has no points";
    remove_stale_plot(outcome.directory / (options.plot_metric + ".png"), /*script_too=*/true);
  } else {
    SweepPlot picture = plot_sweep(outcome.directory, plan.paths, plan.head, plan.rows, options.plot_metric);
    outcome.plot = picture.file;
    outcome.plot_note = picture.note;
  }
  return outcome;
}

}  // namespace hybridsim::analysis

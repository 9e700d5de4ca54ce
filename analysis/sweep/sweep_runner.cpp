#include "analysis/sweep/sweep_runner.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "analysis/output/created_folders.h"
#include "analysis/output/csv.h"
#include "analysis/output/plot_gnuplot.h"
#include "analysis/run/scenario_run.h"
#include "analysis/step/budget_error.h"
#include "analysis/study/step_run_progress.h"
#include "analysis/sweep/sweep_integrity.h"
#include "analysis/sweep/sweep_plan.h"
#include "analysis/sweep/sweep_plot.h"
#include "analysis/sweep/sweep_table.h"
#include "analysis/sweep/sweep_team.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/sweep.h"
#include "sim/budget.h"
#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

// The point's outputs.trace, if it asks for one: written by whichever thread or MPI rank runs the
// point, straight into the sweep's output directory (atomically, like every output), named by the
// point's index so no two points or shards collide. Recorded in the trace: which point it is.
ScenarioRunOptions point_trace_options(const scenarios::Scenario& point_scenario,
                                       const scenarios::SweepPoint& point,
                                       const std::filesystem::path& directory, CreatedFolders& made) {
  ScenarioRunOptions options = scenario_trace_options(point_scenario, directory);
  if (!options.trace) return options;
  options.trace = sweep_point_trace_file(*options.trace, point.index);
  options.trace_options.other_data = {{"sweep_point", std::to_string(point.index)},
                                      {"sweep_label", point.label}};
  // Threads may race to create it (harmless); a folder that cannot be made is reported by the
  // trace writer, naming the file. A sweep refused before any point finished removes it again.
  if (options.trace->has_parent_path()) {
    try {
      made.create(options.trace->parent_path());
    } catch (const std::filesystem::filesystem_error&) {
    }
  }
  return options;
}

// Point traces an earlier sweep wrote into this folder that this one does not write: a point past
// this sweep's last, a point of this shard not simulated (no trace; its row says why), and a point
// of this shard under the other name (gzip changed: t-0.json.gz beside the t-0.json written now).
// Read as this sweep's, they were another's. Another shard's points may share the folder (MPI
// ranks, --shard K/N with one --out): theirs stay. Regular files only, as remove_stale_plot.
void remove_stale_point_traces(const SweepPlan& plan, const std::filesystem::path& directory,
                               std::pair<int, int> shard) {
  const auto trace = scenario_trace_options(plan.base, directory).trace;
  if (!trace) return;  // no name to know an earlier sweep's traces by
  const std::string name = trace->filename().string();
  const std::filesystem::path renamed =
      trace->parent_path() / (name.ends_with(".gz") ? name.substr(0, name.size() - 3) : name + ".gz");
  const auto ours = [&](std::size_t i) {
    return static_cast<int>(i % static_cast<std::size_t>(shard.second)) == shard.first - 1;
  };
  const auto traced = [&](std::size_t i) {
    const auto row = plan.rows.find(i);
    return row != plan.rows.end() && csv_split(row->second).back().empty();  // not_simulated empty
  };
  std::vector<std::filesystem::path> stale;
  std::error_code ec;
  const std::filesystem::path folder = trace->has_parent_path() ? trace->parent_path() : ".";
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    const std::string file = entry.path().filename().string();
    const auto as_named = sweep_point_trace_index(*trace, file);
    const auto as_renamed = sweep_point_trace_index(renamed, file);
    if ((as_named && (*as_named >= plan.points.size() || (ours(*as_named) && !traced(*as_named)))) ||
        (as_renamed && (*as_renamed >= plan.points.size() || ours(*as_renamed))))
      stale.push_back(entry.path());
  }
  for (const auto& file : stale) std::filesystem::remove(file, ec);
}

// The points' estimates in `todo`'s order (analysis/sweep/sweep_plan.h), for the progress lines.
std::vector<std::uint64_t> todo_events(const SweepPlan& plan) {
  std::vector<std::uint64_t> out;
  for (const scenarios::SweepPoint* p : plan.todo) {
    const auto it = plan.estimates.find(p->index);
    out.push_back(it == plan.estimates.end() ? 0 : it->second.events());
  }
  return out;
}

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

// Runs the points of a plan on threads of this process, and with a team, shares them with the other
// processes: the leader hands out positions in `todo` and records every finished row (appending it
// to points.partial.csv at once); the other processes run what they are handed.
class PointRunner {
 public:
  PointRunner(const SweepOptions& options, SweepPlan& plan, const std::filesystem::path& directory,
              std::ofstream& partial, CreatedFolders& made)
      : options_(options),
        plan_(plan),
        directory_(directory),
        partial_(partial),
        made_(made),
        progress_(options.progress && leader() ? &std::cerr : nullptr, "sweep", todo_events(plan), "points") {
  }

  bool leader() const { return !options_.team || options_.team->rank() == 0; }

  // Runs everything on `jobs` threads; returns the points this process (leader: all ranks) finished,
  // counted per rank, or the first error.
  void run(int jobs, SweepOutcome& outcome) {
    by_rank_.assign(options_.team ? static_cast<std::size_t>(options_.team->size()) : 1, 0);
    parallel_ = jobs > 1;
    std::vector<std::thread> threads;
    for (int j = 0; j < jobs; ++j) threads.emplace_back([this] { leader() ? lead() : follow(); });
    std::exception_ptr serve_failure;
    if (options_.team && leader()) {
      try {
        options_.team->serve([this] { return take(); },
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
  const std::string& error() const { return error_; }
  // The points that failed once run (failed_sweep_row): why, by point index (in point order,
  // whichever thread or rank finished first).
  const std::map<std::size_t, std::string>& failures() const { return failures_; }

 private:
  // A position in `todo` not yet handed out, or nullopt when all are (or a point failed).
  std::optional<std::size_t> take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_.empty()) return std::nullopt;
    }
    const std::size_t i = next_++;
    return i < plan_.todo.size() ? std::optional<std::size_t>(i) : std::nullopt;
  }

  SweepTeam::Finished run_point(std::size_t i) {
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
  static SweepTeam::Finished failure(const scenarios::SweepPoint& point, std::size_t i,
                                     const std::exception& e) {
    return {i, true, "sweep point " + std::to_string(point.index) + " (" + point.label + "): " + e.what()};
  }

  // The leader keeps a finished point: in the rows, in the partial file at once, in the progress.
  void record(int rank, const SweepTeam::Finished& f) {
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

  void lead() {
    while (const auto i = take()) record(0, run_point(*i));
  }
  // Another rank's worker: each request to the leader carries the previous result.
  void follow() {
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

  const SweepOptions& options_;
  SweepPlan& plan_;
  const std::filesystem::path& directory_;
  std::ofstream& partial_;
  CreatedFolders& made_;
  StepRunProgress progress_;
  std::mutex mutex_;
  std::atomic<std::size_t> next_{0};
  std::size_t done_ = 0, follower_done_ = 0;
  std::vector<std::size_t> by_rank_;
  std::string error_;
  std::map<std::size_t, std::string> failures_;
  bool parallel_ = false;  // points on several threads (set before they start)
};

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

SweepOutcome merge_sweep_outputs(const std::vector<std::filesystem::path>& shard_dirs,
                                 const std::filesystem::path& out, const MergeOptions& options) {
  if (shard_dirs.empty()) throw InputError("merge needs at least one shard folder");
  std::vector<ShardResults> shards;
  for (const auto& dir : shard_dirs) shards.push_back(read_shard_results(dir));
  const ShardResults& first = shards.front();
  SweepRows rows;
  for (const ShardResults& s : shards) {
    if (s.fingerprint != first.fingerprint || s.sweep_points != first.sweep_points)
      throw InputError(s.directory.string() + " holds another sweep than " + first.directory.string() +
                       " (fingerprint " + s.fingerprint + " against " + first.fingerprint +
                       "): only shards of one sweep, with the same --set overrides, can be merged");
    if (s.header != first.header)
      throw InputError(s.directory.string() + ": its columns differ from " + first.directory.string() + "'s");
    for (const auto& [i, line] : s.rows)
      if (!rows.emplace(i, line).second)
        throw InputError("point " + std::to_string(i) + " appears in two shards (" + s.directory.string() +
                         ")");
  }
  const std::string missing = missing_points(rows, first.sweep_points);
  if (!missing.empty() && !options.allow_incomplete)
    throw InputError("merge: " + missing + " of the sweep's " + std::to_string(first.sweep_points) +
                     " points are in none of the shards (a shard not given, not run, or not finished); "
                     "--allow-incomplete merges what is there");
  std::filesystem::create_directories(out);
  SweepOutcome outcome;
  outcome.directory = out;
  outcome.points_total = rows.size();
  if (!missing.empty()) outcome.notes.push_back("incomplete: " + missing + " points missing");
  const SweepIdentity identity{.fingerprint = first.fingerprint, .sweep_points = first.sweep_points,
                               .shard = missing.empty() ? "1/1" : "incomplete"};
  outcome.csv = write_sweep_results(out, "merged from " + std::to_string(shard_dirs.size()) + " shards",
                                    identity, first.header, rows);
  if (auto note = whole_model_note(first.header, rows)) outcome.notes.push_back(std::move(*note));
  return outcome;
}

}  // namespace hybridsim::analysis

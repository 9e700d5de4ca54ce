#include "analysis/sweep/sweep_runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include "analysis/output/atomic_file.h"
#include "analysis/output/format_fixed.h"
#include "analysis/output/json_text.h"
#include "analysis/output/plot_gnuplot.h"
#include "analysis/run/scenario_run.h"
#include "analysis/sweep/sweep_team.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/sweep.h"
#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Splits one CSV line (fields may be quoted, with "" for a quote).
std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

const char* kMetricColumns =
    "gpus,dp,mp,global_batch,step_time_ms,samples_per_second,units_per_second,unit,compute_ms,"
    "exposed_comm_ms,idle_ms,exposed_comm_share,epochs,time_to_train_hours,extrapolated,"
    "nvlink_bytes,pcie_bytes,infiniband_bytes,steps,p95_step_time_ms";

std::string header(const std::vector<std::string>& paths) {
  std::string h = "index,label";
  for (const auto& p : paths) h += "," + csv_field(p);
  return h + "," + kMetricColumns;
}

std::string row(const scenarios::SweepPoint& point, const ScenarioRun& run) {
  const StepResult& r = run.step;
  std::string s = std::to_string(point.index) + "," + csv_field(point.label);
  for (const auto& [path, value] : point.assignments) s += "," + csv_field(value);
  const double step = r.step_time.to_ms();
  s += "," + std::to_string(r.gpus) + "," + std::to_string(r.dp) + "," + std::to_string(r.mp) + "," +
       std::to_string(r.global_batch) + "," + format_fixed(step, 6) + "," + format_fixed(r.samples_per_second, 3) +
       "," + format_fixed(r.units_per_second, 3) + "," + csv_field(r.unit) + "," + format_fixed(r.mean.compute.to_ms(), 6) +
       "," + format_fixed(r.mean.exposed_communication.to_ms(), 6) + "," + format_fixed(r.mean.idle.to_ms(), 6) + "," +
       format_fixed(step > 0 ? r.mean.exposed_communication.to_ms() / step : 0, 6) + ",";
  if (run.time_to_train) {
    s += format_fixed(run.time_to_train->epochs, 4) + "," + format_fixed(run.time_to_train->seconds / 3600.0, 6) + "," +
         (run.time_to_train->extrapolated ? "yes" : "no");
  } else {
    s += ",,";
  }
  auto bytes = [&](sim::LinkKind k) {
    return std::to_string(r.bytes_by_link_kind[static_cast<std::size_t>(k)].count());
  };
  s += "," + bytes(sim::LinkKind::NVLink) + "," + bytes(sim::LinkKind::PCIe) + "," + bytes(sim::LinkKind::InfiniBand);
  s += "," + std::to_string(r.spread.steps) + "," + format_fixed(r.spread.p95.to_ms(), 6);  // variability.steps
  return s;
}

// The point's outputs.trace, if it asks for one: written by whichever thread or MPI rank runs the
// point, straight into the sweep's output directory (atomically, like every output), named by the
// point's index so no two points or shards collide. Recorded in the trace: which point it is.
ScenarioRunOptions point_trace_options(const scenarios::Scenario& point_scenario, const scenarios::SweepPoint& point,
                                       const std::filesystem::path& directory) {
  ScenarioRunOptions options = scenario_trace_options(point_scenario, directory);
  if (!options.trace) return options;
  options.trace = sweep_point_trace_file(*options.trace, point.index);
  options.trace_options.other_data = {{"sweep_point", std::to_string(point.index)}, {"sweep_label", point.label}};
  // Threads may race to create it (harmless); a folder that cannot be made is reported by the
  // trace writer, naming the file.
  std::error_code ignored;
  if (options.trace->has_parent_path()) std::filesystem::create_directories(options.trace->parent_path(), ignored);
  return options;
}

// Rows of a CSV file keyed by point index (header checked against `expected` when given).
std::map<std::size_t, std::string> read_rows(const std::filesystem::path& file, const std::string* expected,
                                             std::string* header_out = nullptr) {
  std::map<std::size_t, std::string> rows;
  std::ifstream in(file);
  if (!in) return rows;
  std::string line;
  if (!std::getline(in, line)) return rows;
  if (expected && line != *expected)
    throw InputError(file.string() + ": its columns differ from this sweep's (was the scenario changed?)");
  if (header_out) *header_out = line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto fields = csv_split(line);
    try {
      rows[std::stoul(fields[0])] = line;
    } catch (const std::exception&) {
      throw InputError(file.string() + ": a row without a point index: \"" + line + "\"");
    }
  }
  return rows;
}

std::string summary_json(const std::string& scenario, const std::string& head,
                         const std::map<std::size_t, std::string>& rows) {
  const auto columns = csv_split(head);
  const auto step_col = std::find(columns.begin(), columns.end(), "step_time_ms") - columns.begin();
  std::string out = "{\n  \"scenario\": ";
  append_json_string(out, scenario);
  out += ",\n  \"points\": " + std::to_string(rows.size()) + ",\n  \"columns\": [";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    out += i ? ", " : "";
    append_json_string(out, columns[i]);
  }
  out += "]";
  double best = -1;
  std::string best_label;
  for (const auto& [index, line] : rows) {
    const auto f = csv_split(line);
    if (static_cast<std::size_t>(step_col) >= f.size()) continue;
    const double v = std::stod(f[static_cast<std::size_t>(step_col)]);
    if (best < 0 || v < best) {
      best = v;
      best_label = f[1];
    }
  }
  out += ",\n  \"fastest_step\": {\"label\": ";
  append_json_string(out, best_label);
  out += ", \"step_time_ms\": " + format_fixed(best, 6) + "}\n}\n";
  return out;
}

void write_results(const std::filesystem::path& dir, const std::string& scenario, const std::string& head,
                   const std::map<std::size_t, std::string>& rows, SweepOutcome& outcome) {
  std::string csv = head + "\n";
  for (const auto& [index, line] : rows) csv += line + "\n";
  AtomicFile results(dir / "results.csv");
  results.write(csv);
  results.commit();
  AtomicFile summary(dir / "summary.json");
  summary.write(summary_json(scenario, head, rows));
  summary.commit();
  outcome.csv = csv;
}

// One- or two-parameter sweeps: the metric against the last parameter, one line per value of the
// first. Values are drawn in sweep order (categories), since they may carry units.
void plot(const std::filesystem::path& dir, const std::vector<std::string>& paths, const std::string& head,
          const std::map<std::size_t, std::string>& rows, const std::string& metric, SweepOutcome& outcome) {
  if (paths.empty() || paths.size() > 2) {
    outcome.plot_note = "plots are drawn for one- and two-parameter sweeps";
    return;
  }
  const GnuplotStatus g = find_gnuplot();
  if (!g.available) {
    outcome.plot_note = "no plot: " + g.why_not + " (the CSV is complete)";
    return;
  }
  const auto columns = csv_split(head);
  const auto mcol = static_cast<std::size_t>(std::find(columns.begin(), columns.end(), metric) - columns.begin());
  if (mcol >= columns.size()) {
    outcome.plot_note = "no plot: unknown metric column \"" + metric + "\"";
    return;
  }
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> series;  // first value → (x, y)
  std::vector<std::string> series_order, x_order;
  for (const auto& [index, line] : rows) {
    const auto f = csv_split(line);
    const std::string key = paths.size() == 2 ? f[2] : metric;
    const std::string x = f[paths.size() == 2 ? 3 : 2];
    if (!series.count(key)) series_order.push_back(key);
    if (std::find(x_order.begin(), x_order.end(), x) == x_order.end()) x_order.push_back(x);
    series[key].push_back({x, f[mcol]});
  }
  std::string body = "set title " + gnuplot_quote(metric + " against " + paths.back()) +
                     " noenhanced\nset xlabel " + gnuplot_quote(paths.back()) + " noenhanced\nset ylabel " +
                     gnuplot_quote(metric) + " noenhanced\nset grid\nset key outside noenhanced\nset xtics (";
  for (std::size_t i = 0; i < x_order.size(); ++i)
    body += (i ? ", " : "") + gnuplot_quote(x_order[i]) + " " + std::to_string(i);
  body += ")\n";
  std::string plots;
  for (std::size_t s = 0; s < series_order.size(); ++s) {
    body += "$d" + std::to_string(s) + " << EOD\n";
    for (const auto& [x, y] : series[series_order[s]])
      body += std::to_string(std::find(x_order.begin(), x_order.end(), x) - x_order.begin()) + " " + y + "\n";
    body += "EOD\n";
    plots += (s ? ", " : "plot ") + std::string("$d") + std::to_string(s) + " using 1:2 with linespoints title " +
             gnuplot_quote(paths.size() == 2 ? paths.front() + " = " + series_order[s] : metric);
  }
  body += plots + "\n";
  const std::filesystem::path target = dir / (metric + ".png");
  const PlotOutcome o = render_plot(g, {.body = body, .target = target});
  if (o.ok) outcome.plot = target;
  else outcome.plot_note = "no plot: gnuplot failed: " + o.error;
}

}  // namespace

SweepOutcome run_sweep(const std::string& scenario_path, const SweepOptions& options) {
  const scenarios::Scenario base = scenarios::load_scenario(scenario_path, options.overrides);
  const auto points = scenarios::expand_sweep(base);
  if (points.empty()) throw InputError(scenario_path + ": the scenario has no sweep: block (or it is empty)");
  const auto [k, n] = options.shard;
  if (n < 1 || k < 1 || k > n)
    throw InputError("--shard K/N needs 1 <= K <= N (got " + std::to_string(k) + "/" + std::to_string(n) + ")");
  SweepTeam* const team = options.team;
  const bool leader = !team || team->rank() == 0;
  SweepOutcome outcome;
  outcome.directory = options.out.value_or(base.outputs.directory);
  outcome.points_total = points.size();
  std::vector<std::string> paths;
  for (const auto& [path, value] : points.front().assignments) paths.push_back(path);
  const std::string head = header(paths);

  std::vector<const scenarios::SweepPoint*> todo;
  for (const auto& p : points)
    if (static_cast<int>(p.index % static_cast<std::size_t>(n)) == k - 1) todo.push_back(&p);
  outcome.points_in_shard = todo.size();
  if (const auto first = scenario_trace_options(base, outcome.directory).trace)
    outcome.traces = sweep_point_trace_file(*first, points.front().index);
  const std::filesystem::path partial_path = outcome.directory / "points.partial.csv";
  std::map<std::size_t, std::string> rows;
  if (options.resume && leader) {
    rows = read_rows(outcome.directory / "results.csv", &head);
    for (auto& [i, line] : read_rows(partial_path, &head)) rows[i] = line;
  }
  std::set<std::size_t> finished;
  for (const auto& [i, line] : rows) finished.insert(i);
  if (team) {
    const auto shared = team->share_finished({finished.begin(), finished.end()});
    finished = {shared.begin(), shared.end()};
  }
  std::erase_if(todo, [&](const scenarios::SweepPoint* p) { return finished.count(p->index) > 0; });

  std::ofstream partial;
  if (leader) {
    // Start the partial file afresh with what is known, then append as points finish.
    std::filesystem::create_directories(outcome.directory);
    {
      std::ofstream fresh(partial_path, std::ios::trunc);
      fresh << head << "\n";
      for (const auto& [i, line] : rows) fresh << line << "\n";
    }
    partial.open(partial_path, std::ios::app);
  }
  std::mutex mutex;
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::string error;
  outcome.points_by_rank.assign(team ? static_cast<std::size_t>(team->size()) : 1, 0);
  const auto started = std::chrono::steady_clock::now();
  const bool tty = options.progress && leader && isatty(2);

  // A position in `todo` not yet handed out, or nullopt when all are (or a point failed).
  auto take = [&]() -> std::optional<std::size_t> {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error.empty()) return std::nullopt;
    }
    const std::size_t i = next++;
    return i < todo.size() ? std::optional<std::size_t>(i) : std::nullopt;
  };
  auto run_point = [&](std::size_t i) -> SweepTeam::Finished {
    try {
      const scenarios::Scenario s = scenarios::load_sweep_point(scenario_path, *todo[i], options.overrides);
      const scenarios::ResolvedScenario resolved = scenarios::resolve(s);
      const ScenarioRunOptions run_options = point_trace_options(s, *todo[i], outcome.directory);
      return {i, false, row(*todo[i], run_scenario(resolved, run_options))};
    } catch (const std::exception& e) {
      return {i, true, "sweep point " + std::to_string(todo[i]->index) + " (" + todo[i]->label + "): " + e.what()};
    }
  };
  // The leader keeps a finished point: in the rows, in the partial file at once, in the progress.
  auto record = [&](int rank, const SweepTeam::Finished& f) {
    std::lock_guard<std::mutex> lock(mutex);
    if (f.position >= todo.size()) {
      if (error.empty()) error = "rank " + std::to_string(rank) + " reported an unknown point";
      return;
    }
    if (f.failed) {
      if (error.empty()) error = f.text;
      return;
    }
    rows[todo[f.position]->index] = f.text;
    partial << f.text << "\n" << std::flush;
    ++done;
    ++outcome.points_by_rank[static_cast<std::size_t>(rank)];
    if (!options.progress) return;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
    const double left = rate > 0 ? static_cast<double>(todo.size() - done) / rate : 0;
    const std::string msg = "sweep: " + std::to_string(done) + "/" + std::to_string(todo.size()) + " points, " +
                            format_fixed(rate, 2) + " points/s, ~" + format_fixed(left, 0) + " s left";
    if (tty) std::cerr << "\r" << msg << "   " << std::flush;
    else if (done == todo.size() || done % std::max<std::size_t>(1, todo.size() / 10) == 0) std::cerr << msg << "\n";
  };
  auto leader_worker = [&] {
    while (const auto i = take()) record(0, run_point(*i));
  };
  // Another rank's worker: each request to the leader carries the previous result.
  std::size_t follower_done = 0;
  auto follower_worker = [&] {
    std::optional<SweepTeam::Finished> previous;
    for (;;) {
      std::optional<std::size_t> i;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (previous && !previous->failed) ++follower_done;
        i = team->next(previous);
      }
      if (!i) return;
      previous = run_point(*i);
    }
  };

  int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::min<int>(jobs, static_cast<int>(std::max<std::size_t>(1, todo.size())));
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j) {
    if (leader) threads.emplace_back(leader_worker);
    else threads.emplace_back(follower_worker);
  }
  std::exception_ptr serve_failure;
  if (team && leader) {
    try {
      team->serve(take, record);
    } catch (...) {
      serve_failure = std::current_exception();
      std::lock_guard<std::mutex> lock(mutex);
      if (error.empty()) error = "the MPI exchange failed";  // stops this rank's workers
    }
  }
  for (auto& t : threads) t.join();
  if (serve_failure) std::rethrow_exception(serve_failure);
  if (!leader) {
    team->done();
    outcome.points_run = follower_done;
    return outcome;  // the leader writes the results
  }
  if (tty) std::cerr << "\n";
  partial.close();
  if (!error.empty())
    throw InputError(error + "\n(finished points are kept in " + partial_path.string() + "; rerun with --resume)");
  outcome.points_run = done;
  write_results(outcome.directory, base.source, head, rows, outcome);
  std::filesystem::remove(partial_path);
  plot(outcome.directory, paths, head, rows, options.plot_metric, outcome);
  return outcome;
}

SweepOutcome merge_sweep_outputs(const std::vector<std::filesystem::path>& shard_dirs,
                                 const std::filesystem::path& out) {
  if (shard_dirs.empty()) throw InputError("merge needs at least one shard folder");
  std::string head;
  std::map<std::size_t, std::string> rows;
  for (const auto& dir : shard_dirs) {
    const std::filesystem::path file = dir / "results.csv";
    if (!std::filesystem::exists(file)) throw InputError(file.string() + ": no such file (did that shard finish?)");
    std::string this_head;
    const auto part = read_rows(file, head.empty() ? nullptr : &head, &this_head);
    if (head.empty()) head = this_head;
    for (const auto& [i, line] : part)
      if (!rows.emplace(i, line).second)
        throw InputError("point " + std::to_string(i) + " appears in two shards (" + file.string() + ")");
  }
  std::filesystem::create_directories(out);
  SweepOutcome outcome;
  outcome.directory = out;
  outcome.points_total = rows.size();
  write_results(out, "merged from " + std::to_string(shard_dirs.size()) + " shards", head, rows, outcome);
  return outcome;
}

}  // namespace hybridsim::analysis

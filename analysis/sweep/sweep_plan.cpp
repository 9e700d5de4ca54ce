#include "analysis/sweep/sweep_plan.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "analysis/output/csv.h"
#include "analysis/output/output_folder.h"
#include "analysis/run/scenario_run.h"
#include "analysis/run/training_at_step.h"
#include "analysis/step/budget_error.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_series.h"
#include "analysis/sweep/sweep_integrity.h"
#include "scenarios/loader/ignored_keys.h"
#include "scenarios/loader/pipeline_notes.h"
#include "scenarios/loader/resolve.h"
#include "sim/error.h"
#include "sim/yaml/input_file.h"

namespace hybridsim::analysis {
namespace {

// A point's step's estimate as its run checks it before it starts, refused past its caps in the
// words `hybridsim run` uses (analysis/run/scenario_run.cpp).
StepEstimate estimate_point(const scenarios::ResolvedScenario& resolved, const StepSetup& setup,
                            const OptionSpelling& spelling) {
  StepEstimate e = estimate_step(setup);
  try {
    e.check(setup.limits);
  } catch (const sim::BudgetExceeded& over) {
    throw budget_refusal(resolved.scenario.source, over, "the step", scenario_budget_knobs(spelling),
                         resolved.collective.fast_path == sim::FastPath::Off);
  }
  return e;
}

void check_options(const SweepOptions& options, const std::string& head) {
  const auto [k, n] = options.shard;
  if (n < 1 || k < 1 || k > n)
    throw InputError("--shard K/N needs 1 <= K <= N (got " + std::to_string(k) + "/" + std::to_string(n) +
                     ")");
  if (options.jobs < 0)
    throw InputError(options.spelling.said_number("jobs", std::to_string(options.jobs)) +
                     ": expected 0 (all cores) or positive");
  // The metric columns that hold numbers, from gpus on: the only ones a plot can draw. Any column was
  // taken (index, label, a swept path, unit, fits_memory, ...), and a column of words gave gnuplot's
  // "x range is invalid", no picture, and exit 0.
  const auto columns = csv_split(head);
  std::vector<std::string> numeric;
  const auto first = std::find(columns.rbegin(), columns.rend(), "gpus");
  for (auto c = first == columns.rend() ? columns.end() : std::prev(first.base()); c != columns.end(); ++c)
    if (*c != "unit" && *c != "extrapolated" && *c != "fits_memory" && *c != "whole_model_fits" &&
        *c != "not_simulated")
      numeric.push_back(*c);
  if (std::find(numeric.begin(), numeric.end(), options.plot_metric) == numeric.end()) {
    std::string list;
    for (const std::string& c : numeric) list += (list.empty() ? "" : ", ") + c;
    const bool words = std::find(columns.begin(), columns.end(), options.plot_metric) != columns.end();
    throw InputError("--plot-metric \"" + options.plot_metric + "\" is " +
                     (words ? "a results.csv column of no numbers to plot" : "not a results.csv column") +
                     "; expected one of " + list);
  }
}

// A point that stops the sweep before any runs, named.
[[noreturn]] void refuse_point(const scenarios::SweepPoint& p, const InputError& e) {
  const std::string why = "sweep point " + std::to_string(p.index) + " (" + p.label + "): " + e.what() +
                          "\n(no point was run)";
  if (const auto* budget = dynamic_cast<const BudgetRefusal*>(&e))
    throw BudgetRefusal(why, budget->refused());
  throw InputError(why);
}

// The points resolved as transformers their GPUs cannot hold: `hybridsim run` refuses each by design
// (it is not simulated), and a sweep lists it as a row saying so (a 2017 network's point is simulated
// and marked fits_memory "no"); where the sweep would then simulate nothing (no point to run fits,
// no row finished before was simulated), the first one's refusal stops it, as a run's would. A shard
// of several (--shard K/N, N > 1) is not refused: the other shards' points may fit, and merge joins
// its rows.
// The points the loader refuses (a value, or a combination of values, that `hybridsim run` refuses:
// dp 16 on 8 GPUs, last-micro-batch at a batch of one micro-batch) are listed alike, as rows saying
// "refused: " and why (refused_sweep_row): in a product sweep such a cell would otherwise refuse every
// other point. The sweep then ends with a non-zero exit (SweepOutcome::points_refused). Where it would
// simulate nothing, the first refusal stops it before any point runs, as before.
struct UnfitPoints {
  SweepRows rows;
  std::vector<std::pair<const scenarios::SweepPoint*, std::string>> why;
  std::vector<std::pair<const scenarios::SweepPoint*, InputError>> refused;
};
void list_unfit_points(SweepPlan& plan, UnfitPoints unfit, const SweepOptions& options) {
  if (unfit.why.empty() && unfit.refused.empty()) return;
  std::stable_sort(unfit.refused.begin(), unfit.refused.end(),
                   [](const auto& a, const auto& b) { return a.first->index < b.first->index; });
  const auto simulated = [](const auto& row) { return csv_split(row.second).back().empty(); };
  if (options.shard.second == 1 && plan.estimates.empty() &&
      std::none_of(plan.rows.begin(), plan.rows.end(), simulated)) {
    if (!unfit.refused.empty()) refuse_point(*unfit.refused.front().first, unfit.refused.front().second);
    throw InputError("sweep point " + std::to_string(unfit.why.front().first->index) + " (" +
                     unfit.why.front().first->label + "): " + unfit.why.front().second +
                     "\n(no point of the sweep fits its GPUs' memory: no point was run)");
  }
  for (const auto& [p, why] : unfit.why)
    plan.notes.push_back("sweep point " + std::to_string(p->index) + " (" + p->label +
                         "): not simulated (fits_memory no in results.csv): " + why);
  for (const auto& [p, e] : unfit.refused) {
    unfit.rows[p->index] = refused_sweep_row(*p, plan.head, e.what());
    plan.refusals.push_back("sweep point " + std::to_string(p->index) + " (" + p->label +
                            "): refused (not_simulated in results.csv): " + e.what());
    plan.notes.push_back(plan.refusals.back());
  }
  plan.not_simulated = unfit.why.size();
  plan.refused = unfit.refused.size();
  plan.rows.merge(unfit.rows);
}

// Every point still to run is built, resolved and estimated now: a bad one, or one over its caps,
// stops the sweep before any runs. First each point's floor of events, before any cluster is built
// (as run's, analysis/run/scenario_run.h): 65,536 GPUs take seconds to build.
void check_points(SweepPlan& plan, const SweepOptions& options) {
  // Two points written differently that load as one scenario ("25 GB/s" and "200 Gb/s", {dp: 8} and
  // {dp: 8, mp: 1}) would be simulated twice, two rows that differ in their label only: the values'
  // texts are compared as the sweep is read (refuse_repeated_value), their meaning here.
  std::map<std::string, const scenarios::SweepPoint*> seen;  // canonical YAML → its first point
  UnfitPoints unfit;
  const auto refused = [&](const scenarios::SweepPoint* p) {
    return std::any_of(unfit.refused.begin(), unfit.refused.end(),
                       [&](const auto& r) { return r.first == p; });
  };
  for (const scenarios::SweepPoint* p : plan.todo) {
    if (plan.rows.contains(p->index)) continue;
    std::optional<scenarios::Scenario> read;
    try {
      read = plan.point_scenario(*p, options);
    } catch (const InputError& e) {
      unfit.refused.emplace_back(p, e);
      continue;
    }
    try {
      const scenarios::Scenario& point = *read;
      if (const auto [at, added] = seen.emplace(scenarios::scenario_to_yaml(point), p); !added)
        throw InputError("the same scenario as sweep point " + std::to_string(at->second->index) + " (" +
                         at->second->label +
                         "), written another way: the sweep would simulate it twice; expected each "
                         "point once");
      check_scenario_event_floor(point, options.spelling);
    } catch (const InputError& e) {
      refuse_point(*p, e);
    }
  }
  std::map<std::string, std::string> point_notes;  // note (fabric) → the points it holds for
  for (const scenarios::SweepPoint* p : plan.todo) {
    if (plan.rows.contains(p->index) || refused(p)) continue;
    try {
      const scenarios::Scenario point = plan.point_scenario(*p, options);
      scenarios::refuse_trace_step_without_trace(point, false, "");  // a sweep has no --trace
      const auto note_point = [&](const std::string& note) {
        point_notes[note] += (point_notes[note].empty() ? "" : ", ") + std::to_string(p->index);
      };
      // The keys that change nothing here, and a pipeline of fewer micro-batches than stages.
      for (auto& note : {scenarios::unused_fabric_note(point), scenarios::unused_placement_note(point),
                         scenarios::unused_bucket_size_note(point), scenarios::unused_recompute_note(point),
                         scenarios::few_micro_batches_note(point)})
        if (note) note_point(*note);
      const scenarios::ResolvedScenario resolved =
          scenarios::resolve(point, nullptr, scenarios::MemoryFit::Report);
      // A cluster.topology file's links machines rarely have, from the load that built the point's
      // topology (not a second read of the file).
      for (const std::string& note : resolved.topology_notes) note_point(note);
      training_model_at_step(resolved);  // refused now, not after other points ran
      if (!resolved.does_not_fit.empty()) {
        unfit.rows[p->index] = unfit_sweep_row(*p, resolved);
        unfit.why.emplace_back(p, resolved.does_not_fit);
        continue;
      }
      // One set-up (its cluster built: seconds at 65,536 GPUs) for the step's estimate and its count.
      const StepSetup setup = step_setup(resolved);
      const StepEstimate step = plan.step_estimates[p->index] =
          estimate_point(resolved, setup, options.spelling);
      // A variability run counts the steps it simulates.
      plan.estimates[p->index] = estimate_of_steps(step, setup);
    } catch (const BudgetRefusal& e) {
      refuse_point(*p, e);  // its caps are the sweep's: raising them is the answer for every point
    } catch (const InputError& e) {
      unfit.refused.emplace_back(p, e);
    }
  }
  list_unfit_points(plan, std::move(unfit), options);
  // Said once per sweep, not per point: a sweep over cluster.nodes that includes 1 runs as asked; a
  // pipeline point's ZeRO or EP left out of its step (scenarios/loader/ignored_keys.h) alike.
  for (const auto& [note, points] : point_notes) plan.notes.push_back("sweep points " + points + ": " + note);
}

// The contents of the files the sweep's points read (scenarios::input_files: a profile, a topology
// file), for the fingerprint: a profile edited between a sweep and its --resume kept the
// old profile's rows beside the new one's. A point that sets a workload or cluster key may name
// another file; the others read the base scenario's. A file that cannot be read is left out (its
// point is refused, located, when it runs).
std::vector<std::string> sweep_input_texts(const SweepPlan& plan, const SweepOptions& options) {
  std::set<std::filesystem::path> files;
  const auto add = [&](const scenarios::Scenario& s) {
    for (auto& f : scenarios::input_files(s)) files.insert(std::move(f));
  };
  add(plan.base);
  for (const auto& p : plan.points)
    if (std::ranges::any_of(p.assignments, [](const auto& a) {
          return a.first.starts_with("workload") || a.first.starts_with("cluster");
        })) {
      try {
        add(plan.point_scenario(p, options));
      } catch (const InputError&) {
        // refused, located, with the sweep's other bad points
      }
    }
  // By contents alone, in their own order: a path depends on the folder the sweep was started from,
  // and the fingerprint must not (shards run elsewhere are merged; goldens are byte for byte).
  std::set<std::string> texts;
  for (const auto& file : files) {
    std::error_code ec;
    // A regular file only: a pipe read here would be empty when the point reads it.
    if (!std::filesystem::is_regular_file(file, ec)) continue;
    try {
      texts.insert(yaml::read_input_file(file.string(), "input file"));
    } catch (const InputError&) {
      // too large or unreadable: the point's own read refuses it
    }
  }
  return {texts.begin(), texts.end()};
}

}  // namespace

scenarios::Scenario SweepPlan::point_scenario(const scenarios::SweepPoint& point,
                                              const SweepOptions& options) const {
  return scenarios::parse_sweep_point(source.text, source.path, point, options.overrides, source.base_dir,
                                      options.override_origin);
}

SweepPlan plan_sweep(scenarios::ScenarioSource source, const SweepOptions& options, bool leader) {
  SweepPlan plan;
  plan.source = std::move(source);
  const std::string& scenario_path = plan.source.path;
  scenarios::check_overrides_once(options.overrides, options.override_origin);
  plan.base = scenarios::parse_scenario(plan.source.text, scenario_path, options.overrides,
                                        plan.source.base_dir, options.override_origin);
  scenarios::check_overrides_outside_sweep(options.overrides, plan.base, options.override_origin);
  plan.directory = options.out.value_or(plan.base.outputs.directory);
  check_output_folder(plan.directory,
                      options.out ? options.spelling.said("out", plan.directory.string())
                                  : scenarios::location_of(plan.base, "outputs.directory") +
                                        ": outputs.directory " + plan.directory.string());
  plan.points = scenarios::expand_sweep(plan.base);
  if (plan.points.empty())
    throw InputError(scenario_path + ": the scenario has no sweep: block (or it is empty)");
  for (const auto& [path, value] : plan.points.front().assignments) plan.paths.push_back(path);
  plan.head = sweep_header(plan.paths);
  check_options(options, plan.head);
  const auto [k, n] = options.shard;
  plan.identity = {.fingerprint = sweep_fingerprint(plan.source.text, options.overrides, plan.points,
                                                    sweep_input_texts(plan, options)),
                   .sweep_points = plan.points.size(),
                   .shard = std::to_string(k) + "/" + std::to_string(n)};
  for (const auto& p : plan.points)
    if (static_cast<int>(p.index % static_cast<std::size_t>(n)) == k - 1) plan.todo.push_back(&p);
  if (options.resume && leader) {
    const SweepRowCheck check{.fingerprint = plan.identity.fingerprint, .points = plan.points,
                              .header = plan.head, .shard = options.shard, .spelling = options.spelling};
    plan.rows = read_finished_rows(plan.directory, check);
    for (auto& [i, line] : read_partial_rows(plan.directory / "points.partial.csv", check, plan.notes))
      plan.rows[i] = line;
    // A point that failed once run is not finished: what failed may have been mended (a folder made
    // writable), and a value wrong as written fails again, as a row again.
    std::string again;
    for (const auto& [i, line] : plan.rows)
      if (is_failed_row(line)) again += (again.empty() ? "" : ", ") + std::to_string(i);
    std::erase_if(plan.rows, [](const auto& row) { return is_failed_row(row.second); });
    if (!again.empty())
      plan.notes.push_back(options.spelling.switched_on("resume") + ": point" +
                           (again.find(',') == std::string::npos ? " " : "s ") + again +
                           " failed once run before: run again");
    // A resume that finds nothing ran every point without a word (a mistyped folder looked resumed).
    std::error_code ec;
    if (!std::filesystem::exists(plan.directory / "results.csv", ec) &&
        !std::filesystem::exists(plan.directory / "points.partial.csv", ec))
      plan.notes.push_back(options.spelling.switched_on("resume") + ": nothing to resume in " +
                           plan.directory.string() +
                           " (no results.csv or points.partial.csv there): every point runs");
  }
  check_points(plan, options);
  return plan;
}

}  // namespace hybridsim::analysis

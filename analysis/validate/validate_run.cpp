#include "analysis/validate/validate_run.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "analysis/collective/collective_sweep.h"
#include "analysis/output/format_fixed.h"
#include "analysis/output/progress_estimate.h"
#include "analysis/output/text_table.h"
#include "analysis/platform/platform.h"
#include "analysis/run/scenario_run.h"
#include "analysis/step/step_progress.h"
#include "analysis/validate/iteration_rate.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/error.h"
#include "topology/gpu_list.h"

namespace hybridsim::analysis {
namespace {

// The case's GPUs: its list, or every GPU of the platform.
std::vector<int> case_gpus(const CollectiveCase& c, const topology::Topology& t) {
  const int gpu_count = static_cast<int>(t.gpus().size());
  const std::vector<int> gpus =
      topology::parse_gpu_list(c.gpus.empty() ? "0-" + std::to_string(gpu_count - 1) : c.gpus);
  topology::check_gpus_exist(gpus, gpu_count);
  // A listed single GPU is refused as the file is read (validate_cases.cpp); here a topology of one.
  if (const std::string why = too_few_gpus(gpus.size(), false, {}); c.gpus.empty() && !why.empty())
    throw InputError(c.path + ".topology: " + c.topology + " has " + why);
  topology::check_gpus_span_machines(t, gpus, c.nodes,
                                     {.gpus = "collective.gpus", .nodes = "collective.nodes"});
  return gpus;
}

// A case's own work, told to the cases' lines as it runs, as a share of the case (its events are
// counted against its step's estimate, a collective's against its events in full). One case ran 44 s
// without a line (an all-reduce of 1 GiB over 8,192 DGX-1; issue 31, done-when 3), the lines counting
// finished cases only. Every poll reports; the cases' lines print when due.
class CaseShare final : public SimulationProgress {
 public:
  CaseShare(ProgressEstimate& lines, double before, std::string what, ProgressClock clock)
      : SimulationProgress(std::chrono::seconds(0), std::chrono::seconds(0), std::move(clock)),
        lines_(lines),
        before_(before),
        what_(std::move(what)) {}

 protected:
  void report(const SimulationProgressReport& r) override {
    // The case's own time left as its lines would say it (its step's events of their estimate, its
    // set-up part's rate before the first event, its steps done; SimulationProgressReport::eta_seconds):
    // the share whose rate over the case's time so far leaves that. Unknown: its events of their
    // estimate, else nothing yet.
    double share = 0;
    if (r.eta_seconds >= 0 && r.wall_seconds + r.eta_seconds > 0)
      share = r.wall_seconds / (r.wall_seconds + r.eta_seconds);
    else if (r.estimated_events > 0)
      share = static_cast<double>(r.events) / static_cast<double>(r.estimated_events);
    // Never the whole case until it returns: a run past its estimate is not done.
    lines_.advance(before_ + std::clamp(share, 0.0, 0.99), what_);
  }

 private:
  ProgressEstimate& lines_;
  double before_;
  std::string what_;
};

double run_collective_case(const CollectiveCase& c, const sim::SimulationLimits& limits, std::string& what,
                           SimulationProgress* ticks) {
  const topology::Topology t = load_platform(c.topology, {.preset = c.topology, .nodes = c.nodes});
  CollectiveSweepOptions o;
  o.op = c.op;
  o.gpus = case_gpus(c, t);
  o.comm.algorithm = workloads::parse_algorithm(c.algorithm);
  o.comm.protocol = workloads::parse_protocol_option(c.protocol);
  o.limits = limits;
  o.collective.reduction_bandwidth = platform_reduction_bandwidth(c.topology);
  // A refusal names the case file's keys, where they were written: validate has no --algorithm.
  o.names = {.algorithm = c.path + ".algorithm",
             .protocol = c.path + ".protocol",
             .op = c.path + ".op",
             .gpus = c.path + ".gpus",
             .nodes = c.path + ".nodes",
             .algorithm_at = c.algorithm_where.empty() ? "" : c.algorithm_where + ": ",
             .protocol_at = c.protocol_where.empty() ? "" : c.protocol_where + ": ",
             .separator = ": "};
  const CollectiveSweepRow row = run_one_collective(t, o, c.size, ticks);
  what = std::string(workloads::algorithm_name(row.algorithm)) + "/" +
         std::string(sim::protocol_name(row.protocol)) + ", " + std::to_string(row.channels) + " ch";
  return row.busbw_gb_per_s;
}

// The case's scenario with its --set overrides and the command's caps.
scenarios::Scenario case_scenario(const ValidateCase& c, const ValidateBudget& budget) {
  std::vector<std::string> sets = c.sets;
  sets.insert(sets.end(), budget.sets.begin(), budget.sets.end());
  return scenarios::load_scenario(c.scenario->string(), sets);
}

// A refusal while loading or running a case, prefixed with the case ("cases.yaml:3:5: case \"x\": ...").
template <typename F>
auto within_case(const ValidateCase& c, F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    throw InputError(c.where + ": case \"" + c.name + "\": " + e.what());
  }
}

// A rate's unit is the profile's: "images/s" on GNMT's tokens passed as if it were right. Checked for
// every case before the first runs (it was checked as each case was reached, after the cases before
// it had run): each rate case's profile is loaded, which builds no cluster and simulates nothing.
void check_rate_units(const std::vector<ValidateCase>& cases, const ValidateBudget& budget) {
  for (const ValidateCase& c : cases) {
    if (!c.scenario || c.metric == CaseMetric::StepTime || c.unit.empty()) continue;
    const workloads::ProfileMetadata meta =
        within_case(c, [&] { return scenarios::load_workload_profile(case_scenario(c, budget)).meta; });
    const std::string rate_unit = meta.throughput_unit + "/s";
    if (c.unit != rate_unit)
      throw InputError(c.unit_where + ": " + c.unit_field + ": got \"" + c.unit + "\", but the " +
                       std::string(case_metric_name(c.metric)) + " of " + meta.network + " counts " +
                       meta.throughput_unit + "; expected " + rate_unit + ", or the unit left out");
  }
}

// One case, its unit already checked (check_rate_units); `ticks` (null: none) hears of its work.
ValidateResult run_validate_case(const ValidateCase& reference, const ValidateBudget& budget,
                                 SimulationProgress* ticks) {
  ValidateResult r;
  r.reference = reference;
  within_case(reference, [&] {
    if (reference.collective) {
      const double busbw = run_collective_case(*reference.collective, budget.collective, r.what, ticks);
      if (reference.metric == CaseMetric::BusBandwidth) {
        r.simulated = busbw;
      } else {
        // time = size / algbw, algbw = busbw / bus factor; in µs.
        const CollectiveCase& c = *reference.collective;
        const topology::Topology t = load_platform(c.topology, {.preset = c.topology, .nodes = c.nodes});
        const int n = static_cast<int>(case_gpus(c, t).size());
        const double algbw = busbw / sim::bus_factor(c.op, n);
        r.simulated = static_cast<double>(c.size.count()) / (algbw * 1e3);
      }
    } else {
      const scenarios::ResolvedScenario resolved = scenarios::resolve(case_scenario(reference, budget));
      ScenarioRunOptions run_options;
      run_options.budget_knobs = budget.knobs();
      run_options.progress = ticks;
      const ScenarioRun run = run_scenario(resolved, run_options);
      r.simulated = reference.metric == CaseMetric::StepTime ? run.step.step_time.to_ms()
                                                             : run.step.units_per_second;
      if (reference.metric == CaseMetric::IterationRate)
        r.simulated *= iteration_rate_factor(resolved.profile, run.step.step_time, run.step.accumulation,
                                             resolved.step.compute_scale);
      r.what = "dp " + std::to_string(run.step.dp) + " × mp " + std::to_string(run.step.mp);
      if (run.step.accumulation > 1)
        r.what += ", " + std::to_string(run.step.accumulation) + " micro-batches";
    }
  });
  r.error = (r.simulated - reference.published) / reference.published;
  r.within = std::abs(r.error) <= reference.tolerance + 1e-12;
  return r;
}

}  // namespace

std::vector<ValidateResult> run_validate_cases(const std::vector<ValidateCase>& cases,
                                               const ValidateBudget& budget, std::ostream* progress,
                                               const ProgressClock& clock) {
  check_rate_units(cases, budget);
  std::vector<ValidateResult> out;
  ProgressEstimate lines(progress, "validate", static_cast<double>(cases.size()), "cases", clock,
                         {.whole_items = true});
  for (const auto& c : cases) {
    CaseShare share(lines, static_cast<double>(out.size()),
                    "case " + std::to_string(out.size() + 1) + " of " + std::to_string(cases.size()) + " (" +
                        c.name + ") running",
                    clock);
    out.push_back(run_validate_case(c, budget, progress != nullptr ? &share : nullptr));
    lines.advance(static_cast<double>(out.size()), "the last " + c.name);
  }
  return out;
}

bool all_within(const std::vector<ValidateResult>& results) {
  for (const auto& r : results)
    if (!r.within) return false;
  return true;
}

std::string validate_table(const std::vector<ValidateResult>& results) {
  // Each column as wide as its widest cell and a space, at least its usual width: a fixed 9 for the
  // error glued "+99847.8%" to the tolerance ("+99847.8%5%"), and a case name past 46 pushed its row.
  constexpr std::size_t kColumns = 8;  // then "ran", unpadded
  std::vector<std::array<std::string, kColumns>> rows;
  rows.push_back({"case", "kind", "metric", "published", "simulated", "error", "tolerance", ""});
  std::array<std::size_t, kColumns> width{46, 12, 15, 12, 12, 9, 10, 5};
  for (const auto& r : results) {
    const ValidateCase& c = r.reference;
    rows.push_back({c.name, std::string(case_kind_name(c.kind)), std::string(case_metric_name(c.metric)),
                    format_fixed(c.published, 3), format_fixed(r.simulated, 3),
                    (r.error >= 0 ? "+" : "") + format_fixed(r.error * 100, 1) + "%",
                    format_fixed(c.tolerance * 100, 0) + "%", r.within ? "ok" : "FAIL"});
  }
  for (const auto& row : rows)
    for (std::size_t k = 0; k < kColumns; ++k) width[k] = std::max(width[k], display_columns(row[k]) + 1);
  const auto padded = [&](const std::array<std::string, kColumns>& row) {
    std::string line;
    for (std::size_t k = 0; k < kColumns; ++k) line += pad_columns(row[k], width[k]);
    return line;
  };
  std::string out = "# hybridsim validate: simulated vs published\n#\n";
  out += "# " + padded(rows.front()) + "ran\n";
  std::map<CaseKind, std::pair<int, int>> by_kind;  // within, all
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ValidateResult& r = results[i];
    out += "  " + padded(rows[i + 1]) + r.what + "\n";
    auto& [within, all] = by_kind[r.reference.kind];
    within += r.within ? 1 : 0;
    ++all;
  }
  out += "#\n";
  for (const auto& [kind, counts] : by_kind)
    out += "# " + std::string(case_kind_name(kind)) + ": " + std::to_string(counts.first) + " of " +
           std::to_string(counts.second) + " within tolerance\n";
  out += "# sources:\n";
  for (const auto& r : results) out += "#   " + r.reference.name + ": " + r.reference.source + "\n";
  return out;
}

std::string validate_csv(const std::vector<ValidateResult>& results) {
  std::string out = "case,kind,metric,unit,published,simulated,error,tolerance,within,ran\n";
  auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  for (const auto& r : results) {
    const ValidateCase& c = r.reference;
    out += quoted(c.name) + "," + std::string(case_kind_name(c.kind)) + "," +
           std::string(case_metric_name(c.metric)) + "," + quoted(c.unit) + "," +
           format_fixed(c.published, 6) + "," + format_fixed(r.simulated, 6) + "," +
           format_fixed(r.error, 6) + "," + format_fixed(c.tolerance, 6) + "," +
           (r.within ? "true" : "false") + "," + quoted(r.what) + "\n";
  }
  return out;
}

}  // namespace hybridsim::analysis

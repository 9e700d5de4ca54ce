// Runs the reference cases of `hybridsim validate` (analysis/validate/validate_cases.h): simulates
// each, compares with the published figure and says whether it is inside its tolerance.
//   auto results = run_validate_cases(load_validate_cases("scenarios/validate"));
//   std::cout << validate_table(results);   // all_within(results) decides the exit code
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "analysis/output/progress_estimate.h"
#include "analysis/step/budget_error.h"
#include "analysis/validate/validate_cases.h"
#include "sim/budget.h"

namespace hybridsim::analysis {

struct ValidateResult {
  ValidateCase reference;
  double simulated = 0;  // in the metric's unit (ms, units/s, GB/s, µs)
  double error = 0;      // (simulated − published) / published
  bool within = false;   // |error| <= tolerance
  std::string what;      // what ran, e.g. "ring/Simple, 4 channels" for a collective
};

// validate --max-events / --max-sim-memory: a scenario case's overlay (limit_overlay(),
// analysis/study/study_steps.h) and a collective case's caps (sim/limits.h, "events", "sim-memory").
struct ValidateBudget {
  std::vector<std::string> sets;
  sim::SimulationLimits collective;
  // How a scenario case's refusal names its caps: validate's options where they were given (they
  // override the case's scenario; its simulation.max_events was named where --max-events was typed),
  // else the scenario's keys.
  std::optional<BudgetKnobs> knobs() const {
    if (sets.empty()) return std::nullopt;
    BudgetKnobs k = study_budget_knobs();
    k.fast_path_on = scenario_budget_knobs().fast_path_on;  // the case's scenario's key
    return k;
  }
};

// Every case's unit is checked against its scenario's profile before the first case runs (a wrong
// unit is an InputError at the unit's key). `progress` (null: none): lines with an estimated end
// (analysis/output/progress_estimate.h), each case counted alike, a running case by its share done
// (its steps, or its events of its estimate); `clock`: theirs (a test's hand clock).
std::vector<ValidateResult> run_validate_cases(const std::vector<ValidateCase>& cases,
                                               const ValidateBudget& budget = {},
                                               std::ostream* progress = nullptr,
                                               const ProgressClock& clock = steady_progress_clock());
bool all_within(const std::vector<ValidateResult>& results);

// A table (one row per case, then a count of cases within tolerance, by kind) and CSV.
std::string validate_table(const std::vector<ValidateResult>& results);
std::string validate_csv(const std::vector<ValidateResult>& results);

}  // namespace hybridsim::analysis

// Text forms of one simulated step (analysis/step/step_runner.h): a readable summary for the terminal and
// a JSON document for scripts. Both are deterministic (no wall-clock numbers inside).
//   std::cout << step_summary_table(result, "GNMT, dp 8 × mp 1 on dgx1-v100");
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "analysis/step/step_runner.h"

namespace hybridsim::analysis {

// Where the values of the table's "  key  value" lines start (display columns).
inline constexpr std::size_t kSummaryKeyColumns = 34;

// The run's strategy, as its settings' parallelism line says it (workloads/program/strategy_label.h):
// "tp 8 × pp 4 = 32 GPUs", "dp 8 × mp 1 = 8 GPUs"; the table's strategy line and a trace's otherData.
std::string strategy_text(const StepResult& r);
// `context` lines (key, value) are printed first: scenario, cluster, strategy...
std::string step_summary_table(const StepResult& r,
                               const std::vector<std::pair<std::string, std::string>>& context);
// The step's figures at the top of summary.json, under its names and in its order: what it holds
// (dp ... global_batch), its times and rates (step_time_us ... unit) and what was simulated
// (events, messages, collectives). summary.json writes them (a text one quoted), summary.csv lists
// them as rows, so the two files hold the same numbers.
struct StepFigure {
  std::string key;
  std::string value;  // as JSON writes a number or null; the text itself where `text`
  bool text = false;
};
struct StepFigures {
  std::vector<StepFigure> shape, times, counts;
};
StepFigures step_summary_figures(const StepResult& r);
// `members`: more members of the object, each a key and its JSON text (the run's "memory").
std::string step_summary_json(const StepResult& r,
                              const std::vector<std::pair<std::string, std::string>>& context,
                              const std::vector<std::pair<std::string, std::string>>& members = {});

}  // namespace hybridsim::analysis

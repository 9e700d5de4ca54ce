// hybridsim's front door: the handful of functions a program calls to use the simulator as the
// `hybridsim` tool does (each subcommand parses its options and calls one of these), and as the
// Python module does (analysis/python/). A scenario is always given in the vocabulary of the YAML
// files (scenarios/README.md): a file, or YAML text, plus "path=value" overlays as `--set` takes
// them, resolved by the one path every command shares (scenarios/loader/resolve.h). Behind these,
// analysis/'s other rooms are the step driver's observers and the reports made of its results.
//   api::RunReport r = api::run({.path = "scenarios/dgx1/gnmt-dp8.yaml", .set = {"cluster.nodes=2"}});
//   std::cout << r.summary.table;  // what `hybridsim run` prints
//   api::SweepOutcome s = api::sweep({.path = "scenarios/examples/dgx1-nvlink-sweep.yaml"}, {.jobs = 2});
#pragma once
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/api/collective_request.h"
#include "analysis/output/option_spelling.h"
#include "analysis/plan/planner.h"
#include "analysis/run/run_outputs.h"
#include "analysis/run/scenario_run.h"
#include "analysis/study/study_command.h"
#include "analysis/sweep/sweep_merge.h"
#include "analysis/sweep/sweep_runner.h"
#include "scenarios/loader/scenario.h"

namespace hybridsim::api {

using analysis::SweepOptions;
using analysis::SweepOutcome;

// A scenario as a user gives it.
struct ScenarioInput {
  std::string path{};                    // a YAML file; with `text`, the name its messages give
  std::optional<std::string> text{};     // YAML text to read instead of a file
  std::vector<std::string> set{};        // overlays, as --set: "cluster.nodes=4", "parallelism={dp: 4}"
  scenarios::OverrideOrigin set_origin{};  // how each was written (Python's set={...}); none: --set
  std::filesystem::path base_dir = ".";  // with `text`: where its relative paths start
};
// Its text, read once (a file's relative paths start in the file's folder).
scenarios::ScenarioSource read_source(const ScenarioInput& input);
// Read and validated, the overlays applied: errors name the file (or --set text), line, column, field.
scenarios::Scenario load(const ScenarioInput& input);

struct RunRequest {
  std::optional<std::filesystem::path> out{};    // where outputs go (default: outputs.directory)
  bool write_outputs = true;  // outputs.formats and outputs.trace there; summary.txt when `out` is given
  std::optional<std::filesystem::path> trace{};  // a trace here instead of the outputs.trace block
  analysis::StepTraceOptions trace_options{};    // of that trace, but for its step:
  std::optional<int> trace_step{};  // which step it shows; none: the scenario's variability.trace_step
  analysis::SimulationProgress* progress = nullptr;  // lines for a person waiting; may stop the step
  analysis::OptionSpelling spelling{};  // how refusals name options: the command line's or Python's
  // Told each of RunReport::notes as soon as it is known, before the step is simulated (they are in
  // `notes` as well); none: the caller reads them from the report.
  std::function<void(const std::string&)> on_note{};
};
struct RunReport {
  scenarios::Scenario scenario{};
  analysis::ScenarioRun run{};                   // the step, its memory, time to train, trace
  analysis::RunSummary summary{};                // the table `hybridsim run` prints; summary.json's text
  std::optional<std::filesystem::path> written{};  // the folder outputs went to, when any were written
  std::vector<std::string> notes{};  // what the run left out of the scenario, said once (stderr)
};
// One training step of the scenario and its time to train: `hybridsim run`.
RunReport run(const ScenarioInput& input, const RunRequest& request = {});

// Every point of the scenario's sweep: block: `hybridsim sweep` (its results.csv text in `csv`).
SweepOutcome sweep(const ScenarioInput& input, SweepOptions options = {});

// The hybrid-vs-DP study of a study file: `hybridsim study`. Writes the report folder, which it
// returns, and prints the headline table to `out`; progress lines go to `progress`, if any.
std::filesystem::path study(const analysis::StudyCommandOptions& options, std::ostream& out,
                            std::ostream* progress = nullptr);

// The fastest configurations of a model on a GPU count: `hybridsim plan` (analysis::print_plan
// prints them); a line per simulated step goes to `progress`, if any.
analysis::PlanResult plan(const analysis::PlanCommandOptions& options, std::ostream* progress = nullptr);

// Devices, links, per-GPU bandwidth, and on request a route, the rings and a Graphviz file, of a
// platform: `hybridsim topology`. Returns the report it prints, and the notes it says.
// Options that shape only what another asks for are refused without it, naming both in the spelling
// given (`--pcie-only needs --rings`, `pcie_only needs rings`): a fabric or oversubscription on one
// machine, PCIe-only rings without rings.
struct TopologyRequest {
  std::string topology{};  // a preset name or a topology YAML file
  int nodes = 1;
  int gpus_per_node = 0;                        // 0: the preset's
  std::optional<std::string> fabric{};          // none: fat-tree
  std::optional<double> oversubscription{};     // none: 1 (a full-bisection fabric)
  std::optional<std::pair<int, int>> route{};  // GPU ranks
  bool rings = false;
  bool pcie_only = false;
  std::optional<std::filesystem::path> dot{};  // write the graph here
  analysis::OptionSpelling spelling{};
  // Told each of a topology file's notes (load_request_platform) before the report is made.
  std::function<void(const std::string&)> on_note{};
};
struct TopologyReport {
  std::string text{};                // what `hybridsim topology` prints
  std::vector<std::string> notes{};  // a topology file's links machines rarely have (stderr), as run's
};
TopologyReport topology(const TopologyRequest& request);

}  // namespace hybridsim::api

// Runs a scenario's sweep: every point (scenarios/loader/sweep.h) is loaded, resolved and simulated, in
// parallel threads; each finished point is appended at once to `points.partial.csv` (so an
// interrupted sweep can `resume`), and at the end the rows are written in point order to
// `results.csv` with a `summary.json` (deterministic: the same sweep gives the same bytes, whatever
// the thread count or shard split), plus a plot for one- and two-parameter sweeps. `shard = {K, N}`
// runs only points with index % N == K − 1; `merge_sweep_outputs` (analysis/sweep/sweep_merge.h)
// joins shard folders. With a `team` (analysis/sweep/sweep_team.h) the processes of an MPI job share
// the points and rank 0 writes.
//   SweepOutcome o = run_sweep("scenarios/examples/dgx1-nvlink-sweep.yaml", {.jobs = 2});
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/output/option_spelling.h"
#include "scenarios/loader/scenario.h"

namespace hybridsim::analysis {

class SweepTeam;

struct SweepOptions {
  std::vector<std::string> overrides;       // --set texts applied to every point
  scenarios::OverrideOrigin override_origin{};  // how each was written, for its refusals
  std::optional<std::filesystem::path> out;  // default: the scenario's outputs.directory
  int jobs = 0;                              // 0: all cores
  bool resume = false;                       // skip points already in points.partial.csv
  std::pair<int, int> shard = {1, 1};        // K of N
  bool progress = true;                      // a progress line on stderr while running
  std::string plot_metric = "step_time_ms";  // column drawn against the swept parameter(s)
  SweepTeam* team = nullptr;                 // share the points with other processes (MPI)
  OptionSpelling spelling{};                 // how refusals name the caps' options (Python's set=)
};

struct SweepOutcome {
  std::filesystem::path directory;
  std::size_t points_total = 0;    // in the whole sweep
  std::size_t points_in_shard = 0;
  std::size_t points_run = 0;      // this time (resume skips the rest), by all ranks of a team
  // This time, listed as rows without being simulated: transformers their GPUs cannot hold (each
  // with a note saying why).
  std::size_t points_not_simulated = 0;
  // Of this shard, listed as rows the loader refused (a value or combination `hybridsim run`
  // refuses; resumed ones too), each with a note: the sweep's other points ran, but it is not whole.
  std::size_t points_refused = 0;
  // This time, listed as rows that failed once run (a trace window past the step), each with a note:
  // as a refused point, the others ran but the sweep is not whole. --resume runs them again.
  std::size_t points_failed = 0;
  std::vector<std::size_t> points_by_rank;  // the leader's count of points each rank ran
  std::string csv;                 // results.csv contents
  std::optional<std::filesystem::path> plot;
  std::string plot_note;           // why there is no plot, when there is none
  std::optional<std::filesystem::path> traces;  // when points write traces: the first point's file
  std::vector<std::string> notes;  // what --resume dropped or merge found missing, for the user
};

// Reads the scenario once and builds every point from that text; checks the options and every
// point of the shard before running any; with `resume`, keeps only rows of this very sweep
// (analysis/sweep/sweep_integrity.h).
SweepOutcome run_sweep(const std::string& scenario_path, const SweepOptions& options);
// The same from a scenario's text already read (YAML text given by a caller: the Python module).
SweepOutcome run_sweep(scenarios::ScenarioSource source, const SweepOptions& options);

}  // namespace hybridsim::analysis

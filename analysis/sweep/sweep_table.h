// The table a sweep writes: its CSV header (the swept paths, then the metrics of a run: step time,
// throughput, breakdown, time to train, the bytes each link kind carried, peak memory, whether
// it fits, a layer-slice's whole model, and why a point was not simulated), one row per point,
// reading such files back (points.partial.csv, results.csv, shards), and the final results.csv +
// summary.json. Rows are keyed by point index, so the files come out in point order.
//   std::string head = sweep_header({"cluster.links.nvlink.bandwidth"});
//   rows[point.index] = sweep_row(point, run);  write_sweep_results(dir, "s.yaml", head, rows);
#pragma once
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "scenarios/loader/sweep.h"

namespace hybridsim::analysis {

using SweepRows = std::map<std::size_t, std::string>;  // point index → its CSV line

// A layer-slice's whole-model columns (empty for a run of every layer), after fits_memory.
inline constexpr const char* kWholeModelColumns =
    "layers_simulated,layers,whole_model_peak_bytes,whole_model_fits";

std::string sweep_header(const std::vector<std::string>& paths);
std::string sweep_row(const scenarios::SweepPoint& point, const ScenarioRun& run);
// The row of a point not simulated: a transformer its GPUs cannot hold (resolved with
// scenarios::MemoryFit::Report, `does_not_fit` set), which `hybridsim run` refuses. Its size (GPUs,
// dp, mp, global batch) and memory (the model's peak, the capacity, fits_memory "no") are filled
// in, the step's figures left empty, and not_simulated holds the run's refusal.
std::string unfit_sweep_row(const scenarios::SweepPoint& point, const scenarios::ResolvedScenario& resolved);
// The row of a point the loader refuses (a value or a combination of values `hybridsim run` refuses:
// dp 16 on 8 GPUs, last-micro-batch without accumulation): its swept values, every figure empty, and
// not_simulated kRefusedPrefix and the refusal, on one line. is_refused_row tells it from the others.
inline constexpr std::string_view kRefusedPrefix = "refused: ";
std::string refused_sweep_row(const scenarios::SweepPoint& point, const std::string& head,
                              const std::string& why);
bool is_refused_row(const std::string& row);
// The row of a point the loader took that failed once it ran (a trace window past its step, a trace
// that cannot be written): as a refused one, not_simulated kFailedPrefix and why. Not a run's caps
// (sim::BudgetExceeded): they are the sweep's, and stop it whole. --resume runs such a point again.
inline constexpr std::string_view kFailedPrefix = "failed once run: ";
std::string failed_sweep_row(const scenarios::SweepPoint& point, const std::string& head,
                             const std::string& why);
bool is_failed_row(const std::string& row);

// Which sweep the rows come from (analysis/sweep/sweep_integrity.h): its fingerprint, how many
// points the whole sweep has, and which shard of it these rows are ("1/1": all of it).
struct SweepIdentity {
  std::string fingerprint;
  std::size_t sweep_points = 0;
  std::string shard = "1/1";
};

// summary.json: the scenario, the point count, the sweep's identity, the columns and the fastest
// point among those simulated (none for an empty shard); where that point does not fit in memory, it
// says so ("fits_memory": false; a layer-slice whose whole model does not fit: "whole_model_fits":
// false) and the fastest that fits, slice and whole model, follows ("fastest_step_that_fits"; null
// where no point fits); then the points not simulated, each with its reason ("not_simulated").
std::string sweep_summary_json(const std::string& scenario, const SweepIdentity& identity,
                               const std::string& head, const SweepRows& rows);
// What a sweep of layer-slices must say beside its rows (nullopt where no row is one): which points
// simulate how many of the model's layers, that their step figures and fits_memory are the slice's,
// and at which points the whole model fits or does not (results.csv's whole_model_fits).
std::optional<std::string> whole_model_note(const std::string& head, const SweepRows& rows);
// Writes results.csv and summary.json into `dir` (each atomically); returns the CSV text.
std::string write_sweep_results(const std::filesystem::path& dir, const std::string& scenario,
                                const SweepIdentity& identity, const std::string& head,
                                const SweepRows& rows);

}  // namespace hybridsim::analysis

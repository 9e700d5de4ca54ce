// What `hybridsim run` prints and writes for one scenario run: the summary as a table (the step's
// breakdown, then the run's metrics: time to train, the trace) and as JSON, and the summary files
// the scenario's outputs.formats ask for (summary.txt, summary.json, summary.csv), each written
// whole or not at all.
//   RunSummary s = run_summary(run, scenario);   std::cout << s.table;
//   write_run_outputs(s, scenario.outputs.formats, "out/gnmt", {.table = true});
#pragma once
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/output/created_folders.h"
#include "analysis/run/scenario_run.h"
#include "scenarios/loader/scenario.h"

namespace hybridsim::analysis {

struct RunSummary {
  std::string table;  // aligned "key  value" lines
  std::string json;   // the step and every setting and metric
  std::vector<std::pair<std::string, std::string>> settings;  // what summary.csv holds
};

RunSummary run_summary(const ScenarioRun& run, const scenarios::Scenario& scenario);

struct RunOutputOptions {
  bool table = true;  // also write summary.txt (the CLI leaves it out when it only prints)
  // Where the folder made and each file written are recorded, to be removed again if a later file
  // (or anything after) fails: the run's outputs all or none. Null: nothing is recorded.
  CreatedFolders* made = nullptr;
};
// The files write_run_outputs writes, in `formats`' order: dir/summary.json, ... (for checks before
// the run, such as a trace that would be overwritten by one of them).
std::vector<std::filesystem::path> run_output_files(std::span<const scenarios::OutputFormat> formats,
                                                    const std::filesystem::path& dir,
                                                    const RunOutputOptions& options = {});
// Writes one file per format into `dir` (created when needed); returns whether it wrote any. A
// failure leaves the files written before it in place unless `options.made` records them.
bool write_run_outputs(const RunSummary& summary, std::span<const scenarios::OutputFormat> formats,
                       const std::filesystem::path& dir, const RunOutputOptions& options = {});

}  // namespace hybridsim::analysis

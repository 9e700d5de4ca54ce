// The reference cases `hybridsim validate` checks: every *.yaml file of a folder (scenarios/validate/
// by default) holds a list `cases:`, each naming what to simulate (a scenario with optional --set
// overrides, or one collective), the metric, the published figure, where it comes from, a
// tolerance, and whether it is a calibration (fitted on one GPU), NCCL's own model, or a
// prediction (not fitted). Format: scenarios/README.md ("Validation cases").
//   auto cases = load_validate_cases("scenarios/validate");   // files in name order
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/collective.h"
#include "sim/units.h"

namespace hybridsim::analysis {

enum class CaseKind : std::uint8_t { Calibration, Model, Prediction };
std::string_view case_kind_name(CaseKind k);  // "calibration", "model", "prediction"

// step_time: ms of one training step; throughput: the profile's units per second (images/s,
// tokens/s); busbw: GB/s of nccl-tests' bus bandwidth; time: µs of one collective.
// iteration_rate: the profile's units per second as NVIDIA's GNMT meter reports them, the mean of
// per-iteration rates (analysis/validate/iteration_rate.h).
enum class CaseMetric : std::uint8_t { StepTime, Throughput, BusBandwidth, Time, IterationRate };
std::string_view case_metric_name(CaseMetric m);  // "step_time", "throughput", "busbw", "time"

struct CollectiveCase {
  std::string topology = "dgx1-v100";  // a preset name
  int nodes = 1;
  std::string gpus;  // "" = all, else a GPU list as --gpus ("0,3", "0-3")
  sim::CollectiveOp op = sim::CollectiveOp::AllReduce;
  sim::Bytes size;
  std::string algorithm = "auto";
  std::string protocol = "auto";
  // For refusals in the file's words: the section's key path ("cases[0].collective") and where its
  // algorithm and protocol were written (file:line:col; empty where left at auto).
  std::string path = "collective";
  std::string algorithm_where, protocol_where;
};

struct ValidateCase {
  std::string name;
  std::string where;  // file:line:col of the case
  CaseKind kind = CaseKind::Prediction;
  std::optional<std::filesystem::path> scenario;  // resolved against the case file's folder
  std::vector<std::string> sets;                  // "path=value", for a scenario
  std::optional<CollectiveCase> collective;
  CaseMetric metric = CaseMetric::Throughput;
  double published = 0;
  // The figure's unit as the file writes it (empty: not written), held to the metric's: ms for
  // step_time, GB/s for busbw, us (or µs) for time, the profile's units per second ("tokens/s")
  // for throughput and iteration_rate, checked before any case runs. unit_where: where it was written.
  std::string unit;
  std::string unit_where, unit_field;  // "cases.yaml:9:5", "cases[2].unit"
  std::string source;  // where the published figure comes from
  double tolerance = 0.1;  // relative: |simulated − published| / published
};

// One case file's text; scenario paths are taken relative to `folder`.
std::vector<ValidateCase> parse_validate_cases(std::string_view text, const std::string& source,
                                               const std::filesystem::path& folder);
// Reads every *.yaml file of `directory` (sorted by name), or `directory` itself when it is a file.
// Throws InputError naming file:line:col, the field and what was expected; or, naming --cases, when
// the path does not exist or the folder holds no case.
std::vector<ValidateCase> load_validate_cases(const std::filesystem::path& directory);

}  // namespace hybridsim::analysis

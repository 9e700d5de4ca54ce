// Runs one resolved scenario (scenarios/loader/resolve.h): the step simulation, optionally with a trace,
// and the time-to-train projection from the scenario's statistical-efficiency settings.
//   ScenarioRun r = run_scenario(scenarios::resolve(scenarios::load_scenario(path)), {});
//   r.step.step_time;  r.time_to_train->seconds;
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/output/option_spelling.h"
#include "analysis/step/budget_error.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_runner.h"
#include "analysis/trace/step_trace_options.h"
#include "analysis/training/time_to_train.h"
#include "scenarios/loader/resolve.h"
#include "workloads/memory/memory_model.h"

namespace hybridsim::analysis {

struct ScenarioRunOptions {
  std::optional<std::filesystem::path> trace;  // write a trace here
  StepTraceOptions trace_options;
  SimulationProgress* progress = nullptr;  // progress lines of long steps (analysis/step/step_progress.h)
  // The language a refusal for the step's caps names their options in: the command line's
  // (--max-events N) or Python's (set={'simulation.max_events': N}).
  OptionSpelling spelling{};
  // How a refusal for the caps names them where a command's own options set them over the scenario's
  // keys (validate --max-events); none: the scenario's keys in `spelling`'s language.
  std::optional<BudgetKnobs> budget_knobs;
  // The step's estimate, made and checked against its caps already (a sweep's, before any point
  // ran): the run counts against it rather than estimating the step again. None: the run makes it.
  std::optional<StepEstimate> step_estimate;
};

struct ScenarioRun {
  StepResult step;
  // Each GPU's memory over the step (workloads/memory/memory_model.h), the capacity it is checked against
  // (resolve's gpu_capacity) and the mapping that says which GPUs hold which MP rank.
  workloads::StepMemory memory;
  std::optional<workloads::MemoryCapacity> gpu_capacity;
  workloads::WorkerMapping mapping;
  std::optional<TimeToTrain> time_to_train;  // none when the network has no efficiency curve
  std::string efficiency;                    // which curve: "gnmt/default (MLPerf fit)"
  std::vector<std::pair<std::string, std::string>> context;  // key settings, for reports
  std::optional<std::filesystem::path> trace_path;
  std::int64_t trace_bytes = 0;
  std::int64_t trace_events = 0;
  std::string
      trace_shows;  // which GPUs the trace shows and how they were simulated (StepTraceSummary::shows)
  // Transformers: model TFLOP/s per GPU (Narayanan et al.'s count) and MFU against the GPU's dense
  // peak (model FLOPs without recomputation), from resolve's TransformerFacts.
  std::optional<double> model_tflops_per_gpu;
  std::optional<double> mfu;
  double mfu_peak_scale = 1;  // the GPUs' mean speed: the peak MFU is of is the GPU's times it
  bool transformer_estimate = false;
  std::string memory_rule;  // transformers: what the memory model divides (transformer_memory_rule)
  // A layer-slice's whole model (scenarios/loader/model_slice.h): the figures above are the slice's.
  std::optional<scenarios::ModelSlice> model_slice;
};

// What a scenario's outputs.trace block asks for, as run options: the trace at `directory` /
// outputs.trace.file with the block's detail, GPUs, window and gzip (the name and gzip made to agree
// by trace_file: gzip: true turns trace.json into trace.json.gz); no trace when the block is
// absent. `hybridsim run` and `hybridsim sweep` both start from this, so they read the block alike.
ScenarioRunOptions scenario_trace_options(const scenarios::Scenario& scenario,
                                          const std::filesystem::path& directory);
// Sweep point `index`'s trace: `file` with "-<index>" before its extension (a trailing .gz kept
// after it), so the points of a sweep, and of all its shards, never share a name:
// out/trace.json → out/trace-3.json, t.json.gz → t-3.json.gz, trace → trace-3.
std::filesystem::path sweep_point_trace_file(const std::filesystem::path& file, std::size_t index);
// The inverse: the index whose sweep_point_trace_file of `file` is named `name` (a file name, no
// folder), or nullopt where it is no point's (t-3.json → 3 for t.json; t-x.json, t-03.json → none).
std::optional<std::size_t> sweep_point_trace_index(const std::filesystem::path& file,
                                                   const std::string& name);

StepSetup step_setup(const scenarios::ResolvedScenario& resolved);
// Before its cluster is built (seconds at thousands of machines): a scenario whose worker's kernels
// alone pass its events cap (analysis::check_event_floor) is refused as run_scenario would refuse
// it, a BudgetRefusal naming the file, the floor and the option to raise. run and sweep's points.
void check_scenario_event_floor(const scenarios::Scenario& scenario, const OptionSpelling& spelling = {});
// A simulated time past 64-bit picoseconds is an InputError naming the fields, as written, that
// lengthen the step. A step over its simulation budget (StepConfig::limits, the scenario's
// simulation block) is an InputError saying the estimate, the limit and how to raise it.
ScenarioRun run_scenario(const scenarios::ResolvedScenario& resolved, const ScenarioRunOptions& options);
// The same, letting std::overflow_error through.
ScenarioRun run_scenario_unchecked(const scenarios::ResolvedScenario& resolved,
                                   const ScenarioRunOptions& options);

// The efficiency curve and dataset size a scenario asks for (built-in by network and variant, or
// its own parametric/table curve). Returns none when no curve is known for the network.
struct TrainingModel {
  StatisticalEfficiency efficiency;
  std::int64_t dataset_samples = 0;
  std::string label;
};
std::optional<TrainingModel> training_model(const scenarios::Scenario& scenario,
                                            const std::string& network);

// True unless the capacity is known and some GPU's peak exceeds it. A run that does not fit is
// still simulated (its time is a what-if: more memory, recomputation); its summary says so.
bool fits_in_memory(const ScenarioRun& run);
// "does not fit: GPU 0 needs ..." for a run that does not fit, else empty.
std::string does_not_fit(const ScenarioRun& run);

// Whether a layer-slice's whole model fits the GPU's capacity; none when the capacity is unknown.
std::optional<bool> whole_model_fits(const scenarios::ModelSlice& slice,
                                     const std::optional<workloads::MemoryCapacity>& capacity);
// A slice's "model slice" line: "2 of 96 layers simulated: step time, throughput and memory are the
// slice's; the whole gpt3-175b does not fit: 331 GiB of 80 GiB (251 GiB too much): weights ...".
std::string model_slice_text(const scenarios::ModelSlice& slice,
                             const std::optional<workloads::MemoryCapacity>& capacity);

// Key/value lines of a run for reports: peak memory, time to train, the trace.
std::vector<std::pair<std::string, std::string>> run_metrics(const ScenarioRun& run);

}  // namespace hybridsim::analysis

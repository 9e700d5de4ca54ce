// What a step trace holds and how large it gets: the detail level, a GPU filter, a time window,
// gzip and the utilization bin of the link counters. Times are sim::Time (picoseconds); GPUs are
// global ranks.
//   StepTraceOptions o{.detail = parse_trace_detail("steps"), .gpus = topology::parse_gpu_list("0-3,8")};
//   o.window = sim::parse_time_window("2 ms:5 ms");   // [2 ms, 5 ms)
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/trace/chrome_trace_writer.h"
#include "scenarios/loader/trace_settings.h"
#include "sim/time.h"

namespace hybridsim::analysis {

// The detail levels and their names are the scenario's (scenarios/loader/trace_settings.h); GPU
// lists and time windows have one grammar each (topology/gpu_list.h, sim/time_window.h).
using scenarios::find_trace_detail;
using scenarios::parse_trace_detail;
using scenarios::TraceDetail;
using scenarios::trace_detail_name;

// Where a trace goes and whether it is compressed, made to agree with each other: a name ending in
// ".gz" is gzipped; gzip asked for with any other name gets ".gz" appended (x.json → x.json.gz), so
// the name always says what the bytes are (chrome://tracing refuses gzip under a .json name).
struct TraceFile {
  std::filesystem::path path;
  bool gzip = false;
};
TraceFile trace_file(const std::filesystem::path& path, bool gzip);

// StepTraceOptions::step: "first" (1), "slowest" (kSlowestStep) or a step number from 1;
// InputError otherwise.
inline constexpr int kSlowestStep = scenarios::kSlowestTraceStep;
int parse_trace_step(std::string_view text);

struct StepTraceOptions {
  TraceDetail detail = TraceDetail::Kernels;
  // Only these GPUs (global ranks) get a process; the network process keeps only the links with an
  // end inside a machine that holds one of them. None: every GPU the strategy uses.
  // With neither a list nor `all_gpus`, a step at detail kernels that folds onto representative
  // GPUs (analysis/README.md, "Folded rings in a step") is traced as it runs untraced: one GPU per
  // class of alike GPUs, and the trace says which GPUs each stands for.
  std::optional<std::vector<int>> gpus = std::nullopt;
  bool all_gpus = false;  // every GPU, simulated in full (--trace-gpus all)
  // How the caller asks for every GPU, in the trace's hints ("… for every GPU"): the command line's
  // "--trace-gpus all", Python's "trace_gpus='all'", a scenario's "outputs.trace.gpus: all".
  std::string all_gpus_said = "--trace-gpus all";
  std::string gpus_option = "--trace-gpus";  // and the option itself: trace_gpus, outputs.trace.gpus
  // Link utilization counters and, at detail messages, messages (the "network" process). Off in the
  // trace of a folded step, whose folded rings send no messages.
  bool links = true;
  // Per GPU, how many GPUs its timeline stands for (a folded step's representative: its class); a
  // GPU standing for more than itself is named "GPU 0 · node 0 · for 128 GPUs". Empty: itself only.
  std::vector<int> stands_for = {};
  // Which step of a run of several (variability.steps) simulate_steps_with_trace traces: its number
  // (1: the first) or kSlowestStep (every step is simulated untraced first, then the slowest again).
  int step = 1;
  std::optional<TraceWindow> window = std::nullopt;  // none: the whole step
  // Where the window was given, for its refusal once the step is known ("--trace-window \"100 s:\"",
  // Python's "trace_window='100 s:'", "s.yaml:9:13: outputs.trace.window"); empty: "trace window".
  std::string window_given = {};
  // Where the GPU list was given, for its refusal once the step's program is known ("--trace-gpus
  // 6-7", Python's "trace_gpus='6-7'", "s.yaml:9:13: outputs.trace.gpus 6-7"); empty: "trace GPU
  // filter 6-7".
  std::string gpus_given = {};
  bool gzip = false;  // see trace_file: the written file's name ends in .gz exactly when it is gzipped
  // Link utilization counters: one sample per bin (the busy fraction of the bin, 0 to 1), written
  // only when it changes.
  sim::Time utilization_bin = sim::Time::us(100);
  // Added to the trace's top-level "otherData" (after, and overriding, what the tracer writes
  // itself: profile, topology, strategy, detail, step_time, …); e.g. {"scenario", "run.yaml"}.
  std::vector<std::pair<std::string, std::string>> other_data = {};
};

}  // namespace hybridsim::analysis

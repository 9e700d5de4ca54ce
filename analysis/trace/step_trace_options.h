// What a step trace holds and how large it gets: the detail level, a GPU filter, a time window,
// gzip, the utilization bin of the link counters, and the parsers for their command-line forms.
// Times are sim::Time (picoseconds); GPUs are global ranks.
//   StepTraceOptions o{.detail = parse_trace_detail("steps"), .gpus = parse_gpu_list("0-3,8")};
//   o.window = parse_trace_window("2 ms:5 ms");   // [2 ms, 5 ms)
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/trace/chrome_trace_writer.h"
#include "sim/time.h"

namespace hybridsim::analysis {

// Each level adds to the one before (sizes for Inception-V3 dp 8 × mp 2 on 2 DGX-1 in README.md).
enum class TraceDetail : std::uint8_t {
  Kernels,   // kernels, collectives and transfers per GPU stream; flows; link utilization counters
  Steps,     // + each ring step of every collective, nested inside its slice
  Messages,  // + every message on every link (one thread per directed link that carried traffic)
};
std::string_view trace_detail_name(TraceDetail detail);  // "kernels", "steps", "messages"
// Accepts the names above (case-insensitively); throws InputError listing them otherwise.
TraceDetail parse_trace_detail(std::string_view text);

// "START:END" with times as sim::parse_time reads them ("2 ms:5 ms", "1.5ms:2ms"); either side may
// be empty (":5 ms" starts at 0, "2 ms:" runs to the end). Throws InputError quoting the text and
// the accepted form, also when START is not before END.
TraceWindow parse_trace_window(std::string_view text);
// A list of GPU ranks and inclusive ranges, comma separated: "0-3,8,12-15" → {0,1,2,3,8,12,…,15},
// sorted, without duplicates. Throws InputError quoting the text and the accepted form.
std::vector<int> parse_gpu_list(std::string_view text);

// Where a trace goes and whether it is compressed, made to agree with each other: a name ending in
// ".gz" is gzipped; gzip asked for with any other name gets ".gz" appended (x.json → x.json.gz), so
// the name always says what the bytes are (chrome://tracing refuses gzip under a .json name).
struct TraceFile {
  std::filesystem::path path;
  bool gzip = false;
};
TraceFile trace_file(const std::filesystem::path& path, bool gzip);

struct StepTraceOptions {
  TraceDetail detail = TraceDetail::Kernels;
  // Only these GPUs (global ranks) get a process; the network process keeps only the links with an
  // end inside a machine that holds one of them. None: every GPU the strategy uses.
  std::optional<std::vector<int>> gpus = std::nullopt;
  std::optional<TraceWindow> window = std::nullopt;  // none: the whole step
  bool gzip = false;  // see trace_file: the written file's name ends in .gz exactly when it is gzipped
  // Link utilization counters: one sample per bin (the busy fraction of the bin, 0 to 1), written
  // only when it changes.
  sim::Time utilization_bin = sim::Time::us(100);
  // Added to the trace's top-level "otherData" (after, and overriding, what the tracer writes
  // itself: profile, topology, strategy, detail, step_time, …); e.g. {"scenario", "run.yaml"}.
  std::vector<std::pair<std::string, std::string>> other_data = {};
};

}  // namespace hybridsim::analysis

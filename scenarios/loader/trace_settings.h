// What a step trace holds, as a scenario's outputs.trace block (and `hybridsim run --trace-*`)
// says it: the file, the detail level, a GPU filter and a time window. analysis/trace/ writes the
// trace from these settings.
//   parse_trace_detail("steps") == TraceDetail::Steps
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/time_window.h"

namespace hybridsim::scenarios {

// Each level adds to the one before (sizes for Inception-V3 dp 8 × mp 2 on 2 DGX-1 in analysis/README.md).
enum class TraceDetail : std::uint8_t {
  Kernels,   // kernels, collectives and transfers per GPU stream; flows; link utilization counters
  Steps,     // + each ring step of every collective, nested inside its slice
  Messages,  // + every message on every link (one thread per directed link that carried traffic)
};
std::string_view trace_detail_name(TraceDetail detail);  // "kernels", "steps", "messages"
// Accepts the names above case-insensitively; nullopt, or InputError listing them, otherwise.
std::optional<TraceDetail> find_trace_detail(std::string_view text);
TraceDetail parse_trace_detail(std::string_view text);

// outputs.trace.gpus: which GPUs get a timeline, in the words of `hybridsim run --trace-gpus`.
// Neither `all` nor a list ("classes", the default): where the step folds onto one GPU per class of
// alike GPUs, those GPUs and the critical GPU; else every GPU.
struct TraceGpus {
  bool all = false;                         // every GPU, simulated in full ("all")
  std::optional<std::vector<int>> list;     // these global ranks, sorted and unique ("0-7")
  bool operator==(const TraceGpus&) const = default;
};

// variability.trace_step (and `hybridsim run --trace-step`): which step of a run of several a trace
// shows, a step number from 1 or this (every step simulated untraced first, then the slowest again).
inline constexpr int kSlowestTraceStep = 0;

struct TraceSettings {
  std::filesystem::path file = "trace.json";  // relative to OutputSettings::directory
  TraceDetail detail = TraceDetail::Kernels;
  TraceGpus gpus;
  std::optional<sim::TimeWindow> window;  // [start, end); nullopt: all
  bool gzip = false;
  bool operator==(const TraceSettings&) const = default;
};

}  // namespace hybridsim::scenarios

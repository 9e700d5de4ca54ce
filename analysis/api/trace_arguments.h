// A run's trace options as a user gives them, as text (the command line's --trace and --trace-*,
// Python's trace= and trace_*=), read by one rule for both: each option of the trace refused
// without the trace itself, naming both in the caller's words, and the rest parsed into a RunRequest.
//   api::TraceArguments a{.gzip = true};                           // --trace-gzip without --trace
//   api::apply_trace_arguments(a, api::kCliTraceNames, request);  // "--trace-gzip needs --trace FILE"
#pragma once
#include <optional>
#include <string>

namespace hybridsim::api {

struct RunRequest;

// Each as given; none: not given (a default the caller shows is not given either).
struct TraceArguments {
  std::optional<std::string> trace{};  // the file to write
  std::optional<std::string> detail{}, gpus{}, window{}, step{};
  bool gzip = false;
};

// How an interface names each option in its refusals.
struct TraceArgumentNames {
  const char* trace;  // with what it takes: "--trace FILE"
  const char* detail;
  const char* gpus;
  const char* window;
  const char* gzip;
  const char* step;
};
inline constexpr TraceArgumentNames kCliTraceNames{"--trace FILE",  "--trace-detail", "--trace-gpus",
                                                   "--trace-window", "--trace-gzip",  "--trace-step"};
inline constexpr TraceArgumentNames kPythonTraceNames{"trace=PATH",   "trace_detail", "trace_gpus",
                                                      "trace_window", "trace_gzip",   "trace_step"};

// Throws InputError "<option> needs <trace>" for the first option of the trace given without it (in
// the order of TraceArgumentNames); else, with a trace, sets request.trace, its options and its step
// (a step not given leaves the scenario's variability.trace_step). Bad values throw as their parsers do.
void apply_trace_arguments(const TraceArguments& arguments, const TraceArgumentNames& names,
                           RunRequest& request);

}  // namespace hybridsim::api

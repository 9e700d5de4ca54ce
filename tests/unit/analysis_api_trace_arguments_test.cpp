// The trace options' one rule (analysis/api/trace_arguments.h): each option of the trace refused
// without the trace, in the words of the interface that gave it (the command line's, Python's), and
// with a trace each parsed into the run's request.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "analysis/api/hybridsim.h"
#include "analysis/api/trace_arguments.h"
#include "sim/error.h"

using namespace hybridsim;

TEST_CASE("trace arguments: each without the trace is refused, naming both in the interface's words") {
  // Python's module and the command line each had a list of their own: a keyword added to one could
  // be ignored by the other without a word.
  const api::TraceArguments each[] = {{.detail = "kernels"}, {.gpus = "0-3"}, {.window = "2 ms:5 ms"},
                                      {.step = "slowest"}, {.gzip = true}};
  const char* cli[] = {"--trace-detail", "--trace-gpus", "--trace-window", "--trace-step", "--trace-gzip"};
  const char* python[] = {"trace_detail", "trace_gpus", "trace_window", "trace_step", "trace_gzip"};
  for (std::size_t i = 0; i < std::size(each); ++i) {
    api::RunRequest request;
    CHECK_THROWS_WITH_AS(api::apply_trace_arguments(each[i], api::kCliTraceNames, request),
                         (std::string(cli[i]) + " needs --trace FILE").c_str(), InputError);
    CHECK_THROWS_WITH_AS(api::apply_trace_arguments(each[i], api::kPythonTraceNames, request),
                         (std::string(python[i]) + " needs trace=PATH").c_str(), InputError);
  }
  // Nothing given: nothing asked, nothing refused.
  api::RunRequest none;
  api::apply_trace_arguments({}, api::kCliTraceNames, none);
  CHECK_FALSE(none.trace.has_value());
  CHECK_FALSE(none.trace_step.has_value());
}

TEST_CASE(
    "trace arguments: with the trace each is parsed into the request, the rest left at their defaults") {
  api::RunRequest r;
  api::apply_trace_arguments({.trace = "t.json", .detail = "steps", .gpus = "0-2,5", .window = "2 ms:5 ms",
                              .step = "3", .gzip = true},
                             api::kPythonTraceNames, r);
  REQUIRE(r.trace.has_value());
  CHECK(r.trace->string() == "t.json");
  CHECK(r.trace_options.detail == analysis::TraceDetail::Steps);
  CHECK(r.trace_options.gpus == std::vector<int>{0, 1, 2, 5});
  CHECK_FALSE(r.trace_options.all_gpus);
  REQUIRE(r.trace_options.window.has_value());
  CHECK(r.trace_options.window->start == sim::Time::ms(2));
  CHECK(r.trace_options.window->end == sim::Time::ms(5));
  CHECK(r.trace_options.gzip);
  CHECK(r.trace_step == 3);

  api::RunRequest plain;
  api::apply_trace_arguments({.trace = "t.json", .gpus = "all"}, api::kCliTraceNames, plain);
  CHECK(plain.trace_options.detail == analysis::TraceDetail::Kernels);
  CHECK(plain.trace_options.all_gpus);
  CHECK_FALSE(plain.trace_options.window.has_value());
  CHECK_FALSE(plain.trace_options.gzip);
  CHECK_FALSE(plain.trace_step.has_value());  // the scenario's variability.trace_step
  // A bad value is refused by its parser, as before.
  CHECK_THROWS_AS(api::apply_trace_arguments({.trace = "t.json", .detail = "everything"}, api::kCliTraceNames,
                                             plain),
                  InputError);
}

#include "analysis/api/trace_arguments.h"

#include <utility>

#include "analysis/api/hybridsim.h"
#include "analysis/trace/step_trace_options.h"
#include "sim/error.h"
#include "sim/time_window.h"
#include "topology/gpu_list.h"

namespace hybridsim::api {

void apply_trace_arguments(const TraceArguments& a, const TraceArgumentNames& names, RunRequest& request) {
  // Each was once ignored without a word where no trace was asked for (issue 31).
  const std::pair<const char*, bool> given[] = {{names.detail, a.detail.has_value()},
                                                {names.gpus, a.gpus.has_value()},
                                                {names.window, a.window.has_value()},
                                                {names.gzip, a.gzip},
                                                {names.step, a.step.has_value()}};
  if (!a.trace) {
    for (const auto& [name, is_given] : given)
      if (is_given) throw InputError(std::string(name) + " needs " + names.trace);
    return;
  }
  request.trace = *a.trace;
  // A value it cannot read is refused naming the option as the caller spells it ("trace_detail 'x':
  // trace detail \"x\": expected ...").
  const auto read = [](const char* name, const std::string& text, auto parse) {
    try {
      return parse(text);
    } catch (const InputError& e) {
      throw InputError(std::string(name) + ": " + e.what());
    }
  };
  if (a.detail)
    request.trace_options.detail =
        read(names.detail, *a.detail, [](const std::string& t) { return analysis::parse_trace_detail(t); });
  if (a.gpus == "all") request.trace_options.all_gpus = true;
  else if (a.gpus)
    request.trace_options.gpus =
        read(names.gpus, *a.gpus, [](const std::string& t) { return topology::parse_gpu_list(t); });
  if (a.window)
    request.trace_options.window =
        read(names.window, *a.window, [](const std::string& t) { return sim::parse_time_window(t); });
  request.trace_options.gzip = a.gzip;
  if (a.step)
    request.trace_step =
        read(names.step, *a.step, [](const std::string& t) { return analysis::parse_trace_step(t); });
}

}  // namespace hybridsim::api

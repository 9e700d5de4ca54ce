// simulate_step_with_trace: one run with a StepTraceObserver attached, written atomically. The
// writer lives on this stack frame (or the class trace's, step_trace_classes.cpp), so an exception
// from the run destroys it before finish() and its temporary file with it.
#include <string>

#include "analysis/step/step_report.h"
#include "analysis/trace/step_trace.h"
#include "analysis/trace/step_trace_classes.h"
#include "sim/error.h"
#include "sim/time_window.h"

namespace hybridsim::analysis {

std::string format_gpu_list(const std::vector<int>& gpus) {
  std::string out;
  for (std::size_t i = 0; i < gpus.size();) {
    std::size_t j = i;
    while (j + 1 < gpus.size() && gpus[j + 1] == gpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(gpus[i]);
    if (j > i) out += "-" + std::to_string(gpus[j]);
    i = j + 1;
  }
  return out;
}

void finish_step_trace(ChromeTraceWriter& writer, const StepSetup& setup, const StepResult& result,
                       const StepTraceOptions& options, StepTraceSummary* summary) {
  const topology::Topology& topology = *setup.topology;
  if (options.window && options.window->start >= result.step_time)
    throw InputError((options.window_given.empty()
                          ? "trace window " + sim::format_time_window(*options.window)
                          : options.window_given) +
                     " starts after the step, which ends at " + sim::format_time(result.step_time) +
                     ": nothing to show; expected a window that starts before " +
                     sim::format_time(result.step_time));
  writer.end_at(result.step_time);
  const workloads::Profile& profile = *setup.profile;
  // The run's own strategy line (workloads::strategy_label): "dp 1 × mp 4 (32 GPUs)" was a tp 8 ×
  // pp 4 pipeline's, and an ep or ZeRO run's lost its ep and stage.
  const std::string strategy = strategy_text(result);
  writer.other_data("scenario", profile.meta.network + " " + strategy + " on " + topology.name());
  writer.other_data("profile", profile.meta.network);
  writer.other_data("topology", topology.name());
  writer.other_data("strategy", strategy);
  if (!setup.mapping.description.empty()) writer.other_data("mapping", setup.mapping.description);
  writer.other_data("algorithm", workloads::algorithm_name(setup.comm.algorithm));
  writer.other_data("step_time", sim::format_time(result.step_time));
  writer.other_data("detail", trace_detail_name(options.detail));
  writer.other_data("utilization_bin", sim::format_time(options.utilization_bin));
  if (options.gpus && options.stands_for.empty())
    writer.other_data("gpu_filter", format_gpu_list(*options.gpus));
  if (options.window)
    writer.other_data("window", sim::format_time(options.window->start) + ":" +
                                    (options.window->end == sim::Time::max()
                                         ? std::string()
                                         : sim::format_time(options.window->end)));
  writer.other_data("simulation", result.simulation.strategy);
  writer.other_data("generator", "hybridsim");
  for (const auto& [key, value] : options.other_data) writer.other_data(key, value);
  writer.finish();
  if (summary != nullptr) {
    summary->path = writer.path();
    summary->bytes = writer.bytes_written();
    summary->events = writer.events_written();
  }
}

StepResult simulate_step_with_trace(const StepSetup& setup, const std::filesystem::path& path,
                                    const StepTraceOptions& options, StepTraceSummary* summary,
                                    SimulationProgress* progress) {
  if (setup.profile == nullptr || setup.topology == nullptr)
    throw InternalError("simulate_step_with_trace: the setup needs a profile and a topology");
  const topology::Topology& topology = *setup.topology;
  // Options are checked before the file is created, so bad ones leave nothing behind.
  const TraceFile file = trace_file(path, options.gzip);
  StepTraceOptions checked = options;
  checked.gzip = file.gzip;
  ChromeTraceOptions writer_options = StepTraceObserver::writer_options(checked, topology);
  const workloads::StepProgram program = build_program(setup, progress);

  std::string why_full;
  if (std::optional<StepResult> r =
          trace_by_class(setup, program, file.path, checked, summary, progress, why_full))
    return std::move(*r);
  ChromeTraceWriter writer(file.path, std::move(writer_options));
  StepTraceObserver tracer(writer, setup, program, checked);
  StepSetup traced = setup;
  if (sim::RingObserver* ring = tracer.ring_observer()) traced.collective.observer = ring;
  StepObservers observers = tracer.observers();
  observers.progress = progress;
  const StepResult result = simulate_program(traced, program, observers);
  tracer.finish(result.step_time);
  checked.other_data.insert(checked.other_data.begin(), {"gpus_shown", why_full});
  finish_step_trace(writer, setup, result, checked, summary);
  if (summary != nullptr) summary->shows = why_full;
  return result;
}

}  // namespace hybridsim::analysis

// `hybridsim run SCENARIO [--set path=value ...]`: runs the scenario (api::run: its step, time to
// train, trace and output files) and prints its summary (table or JSON).
#include <boost/program_options.hpp>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "analysis/api/hybridsim.h"
#include "analysis/api/trace_arguments.h"
#include "analysis/cli/commands.h"
#include "analysis/cli/parse_options.h"
#include "analysis/study/study_steps.h"
#include "analysis/output/format_fixed.h"
#include "sim/error.h"

namespace po = boost::program_options;

namespace hybridsim::cli {

namespace {

// A long step's progress on stderr, so that stdout keeps only the summary: the events so far of the
// step's estimate (sim/budget.h) and about how long is left of how long in all.
class ProgressLines final : public analysis::SimulationProgress {
 protected:
  void report(const analysis::SimulationProgressReport& r) override {
    const std::string estimate = analysis::estimate_text(r.wall_seconds, r.eta_seconds);
    if (r.events == 0 && r.estimated_events > 0) {  // its setup took a while; its event loop starts
      const double at_rate = static_cast<double>(r.estimated_events) / sim::kEventsPerSecond;
      std::cerr << "  simulating " << r.what << ": starting, about "
                << analysis::format_fixed(static_cast<double>(r.estimated_events) / 1e6, 1)
                << " M events estimated"
                << (r.estimate_way.empty() ? std::string()
                                           : " for the step, " + std::string(r.estimate_way) + ",")
                << " (about " << analysis::wall_text(at_rate) << " at "
                << analysis::format_fixed(sim::kEventsPerSecond / 1e6, 0) << " M events/s), "
                << analysis::wall_text(r.wall_seconds) << " so far" << std::endl;
      return;
    }
    if (r.events == 0) {  // between the steps of a variability run
      std::cerr << "  simulating: " << r.what << ", " << analysis::wall_text(r.wall_seconds) << estimate
                << std::endl;
      return;
    }
    std::string events = analysis::format_fixed(static_cast<double>(r.events) / 1e6, 1) + " M";
    // Which way the estimate counts, where it is the step's (StepEstimate::way), not this attempt's.
    const std::string way = r.estimate_way.empty() ? "" : ", " + std::string(r.estimate_way);
    if (r.estimated_events > r.events)
      events += " of about " + analysis::format_fixed(static_cast<double>(r.estimated_events) / 1e6, 1) +
                " M events estimated" + way + " (" + std::to_string(r.events * 100 / r.estimated_events) +
                "%)";
    else if (r.estimated_events > 0 && r.events > r.estimated_events)
      events += " events, past the estimate of about " +
                analysis::format_fixed(static_cast<double>(r.estimated_events) / 1e6, 1) + " M" + way +
                " (taken as twice what is done)";
    else
      events += " events";
    std::cerr << "  simulating " << r.what << ": "
              << analysis::format_fixed(r.simulated.to_seconds() * 1e3, 1) << " ms simulated, " << events
              << ", " << analysis::wall_text(r.wall_seconds)
              << (estimate.empty() ? ", time left not yet known" : estimate) << std::endl;
  }
};

}  // namespace

int run_command(int argc, const char* const* argv) {
  po::options_description options(
      "hybridsim run SCENARIO [options]\n\n"
      "Simulates one training step of the scenario and projects time to train. Scenario files are\n"
      "documented in scenarios/README.md; examples are in scenarios/examples/.\n\noptions");
  std::vector<std::string> sets;
  std::string memory, max_events, max_sim_memory, model_threads, out_dir,
      format = "table", trace, trace_detail = "kernels", trace_gpus, trace_window, trace_step;
  options.add_options()("help,h", "show this help")("scenario", po::value<std::string>(),
                                                    "scenario file (YAML)")(
      "set,s", po::value(&sets)->composing(), "override a field: --set cluster.nodes=4 (repeatable)")(
      "memory", po::value(&memory),
      "each GPU's memory, a what-if: --memory \"32 GiB\" (= --set cluster.gpu_memory=...)")(
      "max-events", po::value(&max_events),
      "cap on the events a step may simulate, 0 or unlimited = none (= --set simulation.max_events=...)")(
      "max-sim-memory", po::value(&max_sim_memory),
      "cap on the simulation's state, e.g. \"16 GiB\", 0 B or unlimited = none (= --set "
      "simulation.max_memory=...)")("model-threads", po::value(&model_threads),
                                    "threads for a folded step's tree model runs, 0 (the default) = min(2, "
                                    "hardware threads), 1 = none ahead (= --set "
                                    "simulation.model_threads=...)")(
      "out,o", po::value(&out_dir), "output directory (overrides outputs.directory)")(
      "format,f", po::value(&format)->default_value("table"), "what to print: table | json")(
      "trace,t", po::value(&trace), "write a Chrome/Perfetto trace of the step to this file")(
      "trace-detail", po::value(&trace_detail)->default_value("kernels"), "kernels | steps | messages")(
      "trace-gpus", po::value(&trace_gpus),
      "only these GPUs in the trace, e.g. 0-3,8, or all (default: one per class of alike GPUs where the "
      "step folds)")("trace-step", po::value(&trace_step),
                     "which step a run of several (variability.steps) traces: first | slowest | N "
                     "(default: variability.trace_step, else first)")(
      "trace-window", po::value(&trace_window), "only this time span, e.g. \"2 ms:5 ms\"")(
      "trace-gzip", "gzip the trace (.gz is added to a --trace name that lacks it)")(
      "quiet,q", "no progress lines (a long step prints one on stderr every few seconds)");
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv, options, positional, vm)) return 0;
  if (!vm.count("scenario"))
    throw InputError("give a scenario file, e.g. hybridsim run scenarios/examples/dgx1-gnmt-dp8.yaml");
  if (format != "table" && format != "json")
    throw InputError("--format must be table or json (got \"" + format + "\")");

  scenarios::OverrideOrigin origin;
  add_shorthand(sets, origin, "memory", "cluster.gpu_memory", memory);
  // Read as study, plan and collective read them, so that all refuse a bad cap in one text.
  analysis::limit_overlay(max_events, max_sim_memory);
  add_shorthand(sets, origin, "max-events", "simulation.max_events", max_events);
  add_shorthand(sets, origin, "max-sim-memory", "simulation.max_memory", max_sim_memory);
  add_shorthand(sets, origin, "model-threads", "simulation.model_threads", model_threads);
  api::RunRequest request;
  if (!out_dir.empty()) request.out = out_dir;
  // The rule Python's trace_* keywords follow too (analysis/api/trace_arguments.h).
  const auto text = [&](const char* option, const std::string& value) {
    return given(vm, option) ? std::optional<std::string>(value) : std::nullopt;
  };
  api::apply_trace_arguments({.trace = text("trace", trace),
                              .detail = text("trace-detail", trace_detail),
                              .gpus = text("trace-gpus", trace_gpus),
                              .window = text("trace-window", trace_window),
                              .step = text("trace-step", trace_step),
                              .gzip = given(vm, "trace-gzip")},
                             api::kCliTraceNames, request);
  ProgressLines progress;
  if (vm.count("quiet") == 0) request.progress = &progress;
  request.on_note = [](const std::string& note) { std::cerr << "hybridsim run: note: " << note << "\n"; };
  const api::RunReport report =
      api::run({.path = vm["scenario"].as<std::string>(), .set = sets, .set_origin = origin}, request);
  if (format == "json") {
    std::cout << report.summary.json;
  } else {
    std::cout << report.summary.table;
    if (report.written) std::cout << "  outputs in " << report.written->string() << "\n";
  }
  return 0;
}

}  // namespace hybridsim::cli

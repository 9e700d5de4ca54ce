#include "analysis/api/hybridsim.h"

#include "analysis/api/fabric_options.h"
#include "analysis/api/request_platform.h"

#include "analysis/step/step_progress.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "analysis/output/atomic_file.h"
#include "analysis/output/created_folders.h"
#include "analysis/output/output_folder.h"
#include "analysis/platform/platform.h"
#include "analysis/platform/topology_report.h"
#include "scenarios/loader/ignored_keys.h"
#include "scenarios/loader/pipeline_notes.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/sweep.h"
#include "sim/time_window.h"
#include "topology/cluster.h"
#include "topology/gpu_list.h"
#include "topology/graphviz.h"

namespace hybridsim::api {

scenarios::ScenarioSource read_source(const ScenarioInput& input) {
  if (!input.text) return scenarios::read_scenario_source(input.path);
  return {.text = *input.text, .path = input.path, .base_dir = input.base_dir};
}

scenarios::Scenario load(const ScenarioInput& input) {
  scenarios::check_overrides_once(input.set, input.set_origin);
  if (!input.text) return scenarios::load_scenario(input.path, input.set, input.set_origin);
  return scenarios::parse_scenario(*input.text, input.path, input.set, input.base_dir, input.set_origin);
}

namespace {

// A traced GPU the cluster lacks, named where the list was given (the caller's --trace-gpus or
// trace_gpus=, else the scenario's outputs.trace.gpus): "trace GPU filter: GPU 8 does not exist"
// named neither.
void check_traced_gpus(const std::vector<int>& gpus, const topology::Topology& t, const RunRequest& request,
                       const scenarios::Scenario& scenario) {
  const int count = static_cast<int>(t.gpus().size());
  for (const int g : gpus) {
    if (g >= 0 && g < count) continue;
    const std::string list = topology::format_gpu_list(gpus);
    const std::string where =
        request.trace ? request.spelling.said("trace-gpus", list)
                      : scenarios::location_of(scenario, "outputs.trace.gpus") + ": outputs.trace.gpus";
    throw InputError(where + ": GPU " + std::to_string(g) + " does not exist (the topology " + t.name() +
                     " has GPUs 0-" + std::to_string(count - 1) + ")");
  }
}

// Where a run writes, checked before it simulates (a study's or run's "Not a directory" came after
// all the work; a trace named summary.json was overwritten by the summary, exit 0): the outputs'
// folder and the trace's must be folders or new names, and the trace a file of its own.
void check_destinations(const RunRequest& request, const scenarios::Scenario& scenario,
                        const std::filesystem::path& dir) {
  const analysis::OptionSpelling& o = request.spelling;
  const auto key = [&](const std::string& path, const std::string& value) {
    return scenarios::location_of(scenario, path) + ": " + path + " " + value;
  };
  const std::string dir_given =
      request.out ? o.said("out", dir.string()) : key("outputs.directory", dir.string());
  if (request.write_outputs) {
    analysis::check_output_folder(dir, dir_given);
    // A summary's name taken by a folder failed after the step, leaving the files before it.
    for (const auto& file : analysis::run_output_files(scenario.outputs.formats, dir,
                                                       {.table = request.out.has_value()}))
      if (std::filesystem::is_directory(file))
        throw InputError(dir_given + ": " + file.string() + " is a folder, where the run writes its " +
                         file.filename().string() +
                         " (outputs.formats); expected another folder for the outputs, or that one moved");
  }
  std::optional<std::filesystem::path> trace = request.trace;
  std::string trace_given;
  if (request.trace) {
    trace_given = o.said("trace", request.trace->string());
  } else if (request.write_outputs && scenario.outputs.trace) {
    trace = analysis::scenario_trace_options(scenario, dir).trace;
    trace_given = key("outputs.trace.file", scenario.outputs.trace->file);
  }
  if (!trace) return;
  analysis::check_output_file(*trace, trace_given, "trace", "trace.json");
  if (!request.write_outputs) return;
  const auto same = [](const std::filesystem::path& a, const std::filesystem::path& b) {
    // Through links where the path exists, and "o/../o" as "o" where it does not yet.
    const auto normal = [](const std::filesystem::path& p) {
      std::error_code ec;
      const auto c = std::filesystem::weakly_canonical(std::filesystem::absolute(p), ec);
      return (ec ? std::filesystem::absolute(p) : c).lexically_normal();
    };
    return normal(a) == normal(b);
  };
  for (const auto& file : analysis::run_output_files(scenario.outputs.formats, dir,
                                                     {.table = request.out.has_value()}))
    if (same(*trace, file))
      throw InputError(trace_given + ": the run writes its " + file.filename().string() +
                       " there (outputs.formats), which would overwrite the trace; expected another name "
                       "for the trace");
}

// A trace given to the run replaces the scenario's outputs.trace block as a whole: its file is not
// written and its window, GPUs and detail do not apply. Said, as the run's other notes are: the
// scenario's "0 ms:50 ms" window silently became the whole step.
std::optional<std::string> replaced_trace_note(const RunRequest& request,
                                               const scenarios::Scenario& scenario) {
  if (!request.trace || !request.write_outputs || !scenario.outputs.trace) return std::nullopt;
  const scenarios::TraceSettings& t = *scenario.outputs.trace;
  std::vector<std::string> lost;
  if (t.window) lost.push_back("window \"" + sim::format_time_window(*t.window) + "\"");
  if (t.gpus.list) lost.push_back("GPUs " + topology::format_gpu_list(*t.gpus.list));
  if (t.gpus.all) lost.push_back("GPUs all");
  if (t.detail != scenarios::TraceDetail::Kernels)
    lost.push_back("detail " + std::string(scenarios::trace_detail_name(t.detail)));
  std::string what;
  for (std::size_t i = 0; i < lost.size(); ++i)
    what += (i == 0 ? "" : i + 1 == lost.size() ? " and " : ", ") + lost[i];
  const analysis::OptionSpelling& o = request.spelling;
  return scenarios::location_of(scenario, "outputs.trace") + ": outputs.trace: replaced as a whole by " +
         o.said("trace", request.trace->string()) + ": its " + t.file.string() + " is not written" +
         (what.empty() ? std::string()
                       : ", and its " + what + " do not apply (give them with " + o.name("trace-window") +
                             ", " + o.name("trace-gpus") + ", " + o.name("trace-detail") + ")");
}

// What the scenario writes that changes nothing (fabric keys on one machine, ...), and a pipeline of
// fewer micro-batches than stages; its cluster.topology file's notes come with the resolved scenario
// (ResolvedScenario::topology_notes).
void add_scenario_notes(const scenarios::Scenario& s, std::vector<std::string>& notes) {
  for (auto note : {scenarios::unused_fabric_note(s), scenarios::unused_placement_note(s),
                    scenarios::unused_bucket_size_note(s), scenarios::unused_recompute_note(s),
                    scenarios::identical_steps_note(s), scenarios::unused_model_threads_note(s),
                    scenarios::few_micro_batches_note(s)})
    if (note) notes.push_back(std::move(*note));
}

}  // namespace

RunReport run(const ScenarioInput& input, const RunRequest& request) {
  RunReport report{.scenario = load(input)};
  // A step past the run's, given here (the scenario's own variability.trace_step is checked where
  // it is written), is refused naming the option: "trace step 5: the run has 1 step" named neither.
  const int steps = std::max(1, report.scenario.variability.steps);
  if (request.trace && request.trace_step && *request.trace_step > steps)
    throw InputError(request.spelling.said_number("trace-step", std::to_string(*request.trace_step)) +
                     ": the run has " + std::to_string(steps) + (steps == 1 ? " step" : " steps") + " (" +
                     scenarios::location_of(report.scenario, "variability.steps") +
                     ": variability.steps); expected first, slowest or 1 to " + std::to_string(steps));
  scenarios::refuse_trace_step_without_trace(report.scenario, request.trace.has_value(),
                                             request.spelling.name("trace"));
  const std::filesystem::path dir = request.out.value_or(report.scenario.outputs.directory);
  check_destinations(request, report.scenario, dir);
  // A run simulates the scenario as written, once: the points of its sweep block are not run, and
  // the report says so (documented commands run a sweep file's base scenario with --set).
  if (!report.scenario.sweep.parameters.empty())
    report.notes.push_back(
        scenarios::location_of(report.scenario, "sweep") + ": sweep: the scenario's sweep block (" +
        std::to_string(scenarios::expand_sweep(report.scenario).size()) +
        " points) is not run: run simulates the scenario as written, once (hybridsim sweep runs its points)");
  if (auto note = replaced_trace_note(request, report.scenario)) report.notes.push_back(std::move(*note));
  add_scenario_notes(report.scenario, report.notes);
  // A step whose kernels alone pass the events cap is refused before its cluster is built (48 s
  // at 65,536 GPUs and --max-events 1).
  analysis::check_scenario_event_floor(report.scenario, request.spelling);
  // Building a cluster of thousands of machines takes seconds before the step's own lines.
  analysis::ProgramBuildTicks topology_ticks(request.progress, "the run, building the cluster's topology");
  const scenarios::ResolvedScenario resolved =
      scenarios::resolve(report.scenario, request.progress ? &topology_ticks : nullptr);
  // The cluster.topology file's links machines rarely have (an InfiniBand link inside a machine),
  // from the one load that built the topology: after the scenario's own notes, as they were said.
  report.notes.insert(report.notes.end(), resolved.topology_notes.begin(), resolved.topology_notes.end());
  // A trace given here replaces the scenario's outputs.trace block as a whole (none of its fields
  // carry over).
  analysis::ScenarioRunOptions options;
  if (request.trace) {
    options.trace = request.trace;
    options.trace_options = request.trace_options;
    options.trace_options.step = request.trace_step.value_or(report.scenario.trace_step);
    // The trace's hints in the caller's words: Python's trace_gpus='all', not --trace-gpus all.
    options.trace_options.all_gpus_said = request.spelling.said("trace-gpus", "all");
    options.trace_options.gpus_option = request.spelling.name("trace-gpus");
  } else if (request.write_outputs) {  // the scenario's trace is one of its outputs
    options = analysis::scenario_trace_options(report.scenario, dir);
  }
  if (options.trace && options.trace_options.gpus)
    check_traced_gpus(*options.trace_options.gpus, resolved.topology, request, report.scenario);
  // A window and a GPU list are checked against the step once it is known: named where they were
  // given (the scenario's are named at their keys by scenario_trace_options).
  if (request.trace && options.trace_options.window)
    options.trace_options.window_given =
        request.spelling.quoted("trace-window", sim::format_time_window(*options.trace_options.window));
  if (request.trace && options.trace_options.gpus)
    options.trace_options.gpus_given =
        request.spelling.said("trace-gpus", topology::format_gpu_list(*options.trace_options.gpus));
  // The trace is written as the step runs, so its folder is made now; a refusal after (a window
  // past the step, a GPU list that runs nothing, a cap), a failure writing the summaries after the
  // trace, or a signal removes what was made for it and the trace itself: all or nothing.
  analysis::CreatedFolders made;
  if (options.trace && options.trace->has_parent_path()) made.create(options.trace->parent_path());
  options.progress = request.progress;
  options.spelling = request.spelling;
  // Said before the step, not after it ("the steps are alike, step 1 is simulated once" read after a
  // long run explains nothing a person waited on), and after what refuses the scenario as written.
  if (request.on_note)
    for (const std::string& note : report.notes) request.on_note(note);
  report.run = analysis::run_scenario(resolved, options);
  if (report.run.trace_path) made.written(*report.run.trace_path);
  report.summary = analysis::run_summary(report.run, report.scenario);
  if (request.write_outputs &&
      analysis::write_run_outputs(report.summary, report.scenario.outputs.formats, dir,
                                  {.table = request.out.has_value(), .made = &made}))
    report.written = dir;
  made.keep();
  return report;
}

SweepOutcome sweep(const ScenarioInput& input, SweepOptions options) {
  // The input's overlays come first; their spellings (the Python module's) stay beside them.
  options.overrides.insert(options.overrides.begin(), input.set.begin(), input.set.end());
  std::vector<std::string> spelled = input.set_origin.spelled;
  spelled.resize(input.set.size());  // "": said as --set
  spelled.insert(spelled.end(), options.override_origin.spelled.begin(),
                 options.override_origin.spelled.end());
  options.override_origin.spelled = std::move(spelled);
  return analysis::run_sweep(read_source(input), options);
}

std::filesystem::path study(const analysis::StudyCommandOptions& options, std::ostream& out,
                            std::ostream* progress) {
  return analysis::run_study_command(options, out, progress);
}

analysis::PlanResult plan(const analysis::PlanCommandOptions& options, std::ostream* progress) {
  analysis::PlanRequest request = analysis::make_plan_request(options);
  request.progress = progress;
  return analysis::plan(request);
}

namespace {

// A route's two GPU ranks, named as given (`--route 0 99`, `route=(0, 99)`): "GPU rank 99 out of
// range" named neither the option nor the keyword.
void check_route(const topology::Topology& t, std::pair<int, int> route, const analysis::OptionSpelling& o) {
  const auto [a, b] = route;
  const std::string said = o.is_python()
                               ? "route=(" + std::to_string(a) + ", " + std::to_string(b) + ")"
                               : "--route " + std::to_string(a) + " " + std::to_string(b);
  const int n = static_cast<int>(t.gpus().size());
  const std::string ranks = "GPU ranks from 0 to " + std::to_string(n - 1);
  for (const int g : {a, b})
    if (g < 0 || g >= n)
      throw InputError(said + ": GPU " + std::to_string(g) + " does not exist: the topology has " +
                       std::to_string(n) + " GPUs; expected two " + ranks);
  // A GPU reaches itself without a link: "0 hops, bottleneck 0 B/s" would read as a broken route.
  if (a == b)
    throw InputError(
        said + ": both ends are the same GPU, which a route never leaves; expected two different " + ranks);
}

}  // namespace

TopologyReport topology(const TopologyRequest& request) {
  const analysis::OptionSpelling& o = request.spelling;
  if (request.pcie_only && !request.rings)
    throw InputError(o.name("pcie-only") + " needs " + o.name("rings"));
  // Where the Graphviz file goes, checked before the topology is built (a folder failed after, as
  // "cannot rename \"d.tmp\" to \"d\"", naming no option).
  if (request.dot)
    analysis::check_output_file(*request.dot, o.said("dot", request.dot->string()), "Graphviz file",
                                "topology.dot");
  topology::ClusterSpec spec;
  spec.nodes = request.nodes;
  if (request.gpus_per_node != 0) spec.gpus_per_node = request.gpus_per_node;
  apply_fabric_options(spec, fabric_options_of(request), o);
  // Python's topology() takes the preset or file as preset_or_file.
  TopologyReport out;
  const topology::Topology t =
      load_request_platform(request.topology, spec, o, "preset-or-file", request.on_note, out.notes);
  if (request.route) check_route(t, *request.route, o);
  analysis::TopologyReportOptions report;
  report.route = request.route;
  report.rings = request.rings;
  report.pcie_only = request.pcie_only;
  out.text = analysis::topology_report(t, report);
  if (request.dot) {
    // Whole or not at all, into folders made as a trace's are (and removed again on a failure).
    analysis::CreatedFolders made;
    if (request.dot->has_parent_path()) made.create(request.dot->parent_path());
    std::ostringstream dot;
    topology::write_dot(t, dot);
    analysis::AtomicFile file(*request.dot);
    file.write(dot.str());
    file.commit();
    made.keep();
    out.text += "\nwrote " + request.dot->string() + "\n";
  }
  return out;
}

}  // namespace hybridsim::api

// The Python module's native part, `hybridsim._hybridsim`: each function calls one function of the
// library's front door (analysis/api/hybridsim.h) with the GIL released, and returns plain Python
// values (dicts of numbers and strings); analysis/python/hybridsim/__init__.py makes the typed
// results and the exceptions users see. Nothing here decides anything the command line does not.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <iostream>
#include <sstream>
#include <thread>

#include "analysis/api/hybridsim.h"
#include "analysis/api/trace_arguments.h"
#include "analysis/collective/collective_report.h"
#include "analysis/python/module_parts.h"
#include "analysis/step/budget_error.h"
#include "analysis/step/worker_shape.h"
#include "analysis/trace/step_trace_options.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "sim/time_window.h"
#include "topology/gpu_list.h"
#include "workloads/generators/transformer_model.h"

namespace py = pybind11;

namespace hybridsim::python {

namespace {

// Progress of a long step: polls for Ctrl-C (KeyboardInterrupt stops the step) and hands each due
// report to a Python callable, if one was given. Called from the simulating thread without the GIL.
class PythonProgress final : public analysis::SimulationProgress {
 public:
  explicit PythonProgress(py::object callback) : callback_(std::move(callback)) {}

 protected:
  void poll() override {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
  void report(const analysis::SimulationProgressReport& r) override {
    py::gil_scoped_acquire gil;
    if (callback_.is_none()) return;
    py::dict line;
    line["what"] = std::string(r.what);
    line["simulated_ms"] = r.simulated.to_ms();
    line["events"] = r.events;
    line["wall_seconds"] = r.wall_seconds;
    line["seconds_left"] = r.eta_seconds;           // < 0: not yet known
    line["estimated_events"] = r.estimated_events;  // 0: none
    callback_(line);
  }

 private:
  py::object callback_;
};

// The thread that imported the module: Python's main thread, the one Ctrl-C reaches.
std::thread::id main_thread() {
  static const std::thread::id id = std::this_thread::get_id();
  return id;
}

// `set_spelled`: how the caller wrote each of `set` (`set={'cluster.nodes': 4}`), for its refusals.
api::ScenarioInput scenario_input(const std::string& path, const std::optional<std::string>& text,
                                  const std::vector<std::string>& set,
                                  const std::vector<std::string>& set_spelled, const std::string& base_dir) {
  return {
      .path = path, .text = text, .set = set, .set_origin = {.spelled = set_spelled}, .base_dir = base_dir};
}

py::dict gpu_metrics(const analysis::GpuStepMetrics& g) {
  py::dict d;
  d["gpu"] = g.gpu;
  d["finish_ms"] = g.finish.to_ms();
  d["compute_ms"] = g.compute.to_ms();
  d["compute_slowed_ms"] = g.compute_slowed.to_ms();
  d["gradient_copies_ms"] = g.gradient_copies.to_ms();
  d["communication_ms"] = g.communication.to_ms();
  d["exposed_communication_ms"] = g.exposed_communication.to_ms();
  d["idle_ms"] = g.idle.to_ms();
  d["kernels"] = g.kernels;
  d["optimizer_ms"] = g.optimizer.to_ms();
  d["tp_communication_ms"] = g.tp_communication.to_ms();
  d["ep_communication_ms"] = g.ep_communication.to_ms();
  d["pipeline_bubble_ms"] = g.pipeline_bubble.to_ms();
  d["dp_communication_exposed_ms"] = g.dp_communication.to_ms();
  return d;
}

py::dict critical_path(const analysis::CriticalPath& p) {
  py::dict d;
  d["compute_ms"] = p.compute.to_ms();
  d["compute_slowed_ms"] = p.compute_slowed.to_ms();
  d["gradient_copies_ms"] = p.gradient_copies.to_ms();
  d["optimizer_ms"] = p.optimizer.to_ms();
  d["gradient_communication_ms"] = p.gradient_communication.to_ms();
  d["model_parallel_transfers_ms"] = p.model_parallel_transfers.to_ms();
  d["tensor_parallel_communication_ms"] = p.tensor_parallel_communication.to_ms();
  d["expert_parallel_communication_ms"] = p.expert_parallel_communication.to_ms();
  d["launch_gaps_ms"] = p.launch_gaps.to_ms();
  d["gpus_visited"] = p.gpus_visited;
  d["gpu_changes"] = p.gpu_changes;
  return d;
}

py::dict step_figures(const analysis::StepResult& s) {
  py::dict d;
  // As results.csv's columns (analysis/step/worker_shape.h): mp the GPUs of one DP worker, tp, pp, ep,
  // zero a transformer's (None for a 2017 network).
  const analysis::WorkerShape w = analysis::worker_shape(s);
  d["dp"] = w.dp;
  d["mp"] = w.gpus_per_worker;
  const auto dimension = [&](int analysis::WorkerShape::Transformer::*field) {
    return w.transformer ? py::object(py::int_((*w.transformer).*field)) : py::object(py::none());
  };
  d["tp"] = dimension(&analysis::WorkerShape::Transformer::tp);
  d["pp"] = dimension(&analysis::WorkerShape::Transformer::pp);
  d["ep"] = dimension(&analysis::WorkerShape::Transformer::ep);
  d["zero"] = dimension(&analysis::WorkerShape::Transformer::zero);
  d["gpus"] = w.gpus;
  d["global_batch"] = s.global_batch;
  d["step_time_ps"] = s.step_time.ps();
  d["p95_step_time_ps"] = s.spread.p95.ps();
  d["steps"] = s.spread.steps;
  d["critical_gpu_steps"] = s.spread.critical_steps;
  d["samples_per_second"] = s.samples_per_second;
  d["units_per_second"] = s.units_per_second;
  d["unit"] = s.unit;
  d["mean"] = gpu_metrics(s.mean);
  d["critical"] = gpu_metrics(s.critical);
  d["critical_path"] = critical_path(s.critical_path);
  py::list per_gpu;
  for (const auto& g : s.per_gpu) per_gpu.append(gpu_metrics(g));
  d["per_gpu"] = per_gpu;
  d["events"] = s.events;
  d["messages"] = s.messages;
  d["collectives"] = s.collectives;
  d["strategy"] = s.simulation.strategy;
  return d;
}

py::dict run_figures(const api::RunReport& r) {
  py::dict d = step_figures(r.run.step);
  d["table"] = r.summary.table;
  d["json"] = r.summary.json;
  d["notes"] = r.notes;
  d["fits_memory"] = analysis::fits_in_memory(r.run);
  const auto peaks = r.run.memory.peaks();
  d["peak_memory_bytes"] = workloads::largest_peak(peaks).count();
  d["memory_capacity_bytes"] =
      r.run.gpu_capacity ? py::object(py::int_(r.run.gpu_capacity->bytes.count())) : py::object(py::none());
  // A layer-slice's whole model (None where every layer is simulated), as summary.json has it.
  const auto& slice = r.run.model_slice;
  const auto whole_fits = slice ? analysis::whole_model_fits(*slice, r.run.gpu_capacity) : std::nullopt;
  d["layers_simulated"] = slice ? py::object(py::int_(slice->layers_simulated)) : py::object(py::none());
  d["layers"] = slice ? py::object(py::int_(slice->layers)) : py::object(py::none());
  d["whole_model_peak_bytes"] =
      slice ? py::object(py::int_(slice->whole_model.total().count())) : py::object(py::none());
  d["whole_model_fits"] = whole_fits ? py::object(py::bool_(*whole_fits)) : py::object(py::none());
  if (r.run.time_to_train) {
    const analysis::TimeToTrain& t = *r.run.time_to_train;
    py::dict ttt;
    ttt["seconds"] = t.seconds;
    ttt["epochs"] = t.epochs;
    ttt["steps_per_epoch"] = t.steps_per_epoch;
    ttt["total_steps"] = t.total_steps;
    ttt["extrapolated"] = t.extrapolated;
    ttt["efficiency"] = r.run.efficiency;
    d["time_to_train"] = ttt;
  } else {
    d["time_to_train"] = py::none();
  }
  d["written"] = r.written ? py::object(py::str(r.written->string())) : py::object(py::none());
  d["trace"] = r.run.trace_path ? py::object(py::str(r.run.trace_path->string())) : py::object(py::none());
  return d;
}

py::dict run(const std::string& path, const std::optional<std::string>& text,
             const std::vector<std::string>& set, const std::vector<std::string>& set_spelled,
             const std::string& base_dir,
             const std::optional<std::string>& out, bool write_outputs,
             const std::optional<std::string>& trace, const std::optional<std::string>& trace_detail,
             const std::string& trace_gpus, const std::string& trace_window, bool trace_gzip,
             const std::string& trace_step, const py::object& progress) {
  api::RunRequest request;
  if (out) request.out = *out;
  request.write_outputs = write_outputs;
  request.spelling = analysis::OptionSpelling::python();
  // The command line's rule (analysis/api/trace_arguments.h); a keyword left at its default ("",
  // trace_detail None) is not given.
  const auto keyword = [](const std::string& value) {
    return value.empty() ? std::nullopt : std::optional<std::string>(value);
  };
  api::apply_trace_arguments({.trace = trace,
                              .detail = trace_detail,
                              .gpus = keyword(trace_gpus),
                              .window = keyword(trace_window),
                              .step = keyword(trace_step),
                              .gzip = trace_gzip},
                             api::kPythonTraceNames, request);
  // Signals reach Python's main thread only: elsewhere, without a callback, nothing is polled and the
  // step runs its plain event loop.
  PythonProgress lines(progress);
  if (!progress.is_none() || std::this_thread::get_id() == main_thread()) request.progress = &lines;
  api::RunReport report;
  {
    py::gil_scoped_release nogil;
    report = api::run(scenario_input(path, text, set, set_spelled, base_dir), request);
  }
  return run_figures(report);
}

py::dict sweep(const std::string& path, const std::optional<std::string>& text,
               const std::vector<std::string>& set, const std::vector<std::string>& set_spelled,
               const std::string& base_dir,
               const std::optional<std::string>& out, int jobs, bool resume, bool progress) {
  api::SweepOptions options;
  if (out) options.out = *out;
  options.jobs = jobs;
  options.resume = resume;
  options.progress = progress;
  options.spelling = analysis::OptionSpelling::python();
  api::SweepOutcome o;
  {
    py::gil_scoped_release nogil;
    o = api::sweep(scenario_input(path, text, set, set_spelled, base_dir), options);
  }
  py::dict d;
  d["csv"] = o.csv;
  d["directory"] = o.directory.string();
  d["points_run"] = o.points_run;
  d["notes"] = o.notes;
  d["plot"] = o.plot ? py::object(py::str(o.plot->string())) : py::object(py::none());
  return d;
}

py::dict study(const std::string& path, const std::optional<std::string>& out, std::optional<int> threads,
               bool plots, bool ib_sensitivity, const std::optional<std::string>& memory,
               const std::string& max_events, const std::string& max_sim_memory, bool progress) {
  analysis::StudyCommandOptions o;
  o.scenario = path;
  if (out) o.output = *out;
  o.threads = threads;
  o.plots = plots;
  o.ib_sensitivity = ib_sensitivity;
  o.memory = memory;
  o.max_events = max_events;
  o.max_sim_memory = max_sim_memory;
  o.spelling = analysis::OptionSpelling::python();
  o.command_line = "hybridsim study " + path;
  std::ostringstream printed;
  std::filesystem::path directory;
  {
    py::gil_scoped_release nogil;
    directory = api::study(o, printed, progress ? &std::cerr : nullptr);
  }
  py::dict d;
  d["printed"] = printed.str();
  d["directory"] = directory.string();
  return d;
}

py::dict collective(api::CollectiveRequest request) {  // a copy, as plan()'s (module_plan.cpp)
  request.names = analysis::CollectiveOptionNames::for_language(analysis::OptionSpelling::python());
  api::CollectiveReport r;
  {
    py::gil_scoped_release nogil;
    r = api::collective(request);
  }
  py::dict d;
  d["title"] = r.title;
  d["csv"] = analysis::collective_csv(r.rows);
  d["table"] = analysis::collective_table(r.rows, r.title);
  d["json"] = analysis::collective_json(r.rows, r.title);
  d["notes"] = r.notes;  // a topology file's, as run()'s and sweep()'s notes (stderr on the command line)
  return d;
}

py::dict topology(api::TopologyRequest request) {         // a copy, as collective()'s
  request.spelling = analysis::OptionSpelling::python();  // "pcie_only needs rings"
  api::TopologyReport r;
  {
    py::gil_scoped_release nogil;
    r = api::topology(request);
  }
  py::dict d;
  d["text"] = r.text;
  d["notes"] = r.notes;  // as collective()'s
  return d;
}

// A named model's workload.model fields (hybridsim/sections.py's Model), as the library has them.
py::dict transformer_model(const std::string& name) {
  const workloads::TransformerModel m = workloads::named_transformer(name);
  py::dict d;
  d["layers"] = m.layers;
  d["hidden"] = m.hidden;
  d["heads"] = m.heads;
  d["kv_heads"] = m.kv_heads;
  d["ffn_hidden"] = m.ffn_hidden;
  d["ffn"] = std::string(workloads::ffn_kind_name(m.ffn));
  d["vocab"] = m.vocab;
  d["sequence"] = m.sequence;
  d["experts"] = m.experts;
  d["top_k"] = m.top_k;
  d["capacity_factor"] = m.capacity_factor;
  return d;
}

}  // namespace

// A cap's text (max_events, max_sim_memory) read by the rule every command reads it by
// (sim::parse_events_cap, parse_memory_cap), refused as `spelled: ` and that rule's words, `spelled`
// the keyword as the caller wrote it (max_events=10**18 + 1 unquoted). run() and sweep() said the
// scenario key's words ("simulation.max_events: got ...") where plan(), study() and collective()
// said these, and those three quoted an int as a str ('1000000000000000001').
void check_cap(const std::string& keyword, const std::string& text, const std::string& spelled) {
  try {
    if (keyword == "max_events")
      sim::parse_events_cap(text);
    else
      sim::parse_memory_cap(text);
  } catch (const InputError& e) {
    throw InputError(spelled + ": " + e.what());
  }
}

// Sets `type`'s exception for `e`, its figures as attributes (None where a cap that passes is not known).
void raise_budget_exceeded(const py::object& type, const hybridsim::analysis::BudgetRefusal& e) {
  const hybridsim::analysis::BudgetRefused& r = e.refused();
  py::object error = type(e.what());
  error.attr("kind") = r.kind == sim::BudgetExceeded::Kind::Events ? "events" : "memory";
  error.attr("estimate") = r.estimate;
  error.attr("limit") = r.limit;
  error.attr("needed") = r.needed != 0 ? py::object(py::int_(r.needed)) : py::object(py::none());
  PyErr_SetObject(type.ptr(), error.ptr());
}

// The module's exceptions, which hybridsim/__init__.py turns into its own: bad input, a refusal for a
// budget, and a bug.
void register_errors(py::module_& m) {
  // Bad input: the message is the one the command line prints ("file:line:col: field: ...").
  py::register_exception<hybridsim::InputError>(m, "InputError", PyExc_ValueError);
  // A refusal for a budget carries its figures, not only its words: hybridsim.BudgetError's kind,
  // estimate, limit and needed (registered after InputError, so that it is tried first).
  static py::exception<hybridsim::analysis::BudgetRefusal> budget_exceeded(m, "BudgetExceeded",
                                                                           PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const hybridsim::analysis::BudgetRefusal& e) {
      raise_budget_exceeded(budget_exceeded, e);
    }
  });
  py::register_exception<hybridsim::InternalError>(m, "InternalError", PyExc_RuntimeError);
}

}  // namespace hybridsim::python

PYBIND11_MODULE(_hybridsim, m) {
  namespace hp = hybridsim::python;
  m.doc() = "hybridsim's native part; use the hybridsim package (analysis/python/hybridsim)";
  hp::main_thread();  // remembered at import
  hp::register_errors(m);
  m.def("run", &hp::run, py::arg("path"), py::arg("text"), py::arg("set"), py::arg("set_spelled"),
        py::arg("base_dir"),
        py::arg("out"), py::arg("write_outputs"), py::arg("trace"), py::arg("trace_detail"),
        py::arg("trace_gpus"), py::arg("trace_window"), py::arg("trace_gzip"), py::arg("trace_step"),
        py::arg("progress"));
  m.def("sweep", &hp::sweep, py::arg("path"), py::arg("text"), py::arg("set"), py::arg("set_spelled"),
        py::arg("base_dir"),
        py::arg("out"), py::arg("jobs"), py::arg("resume"), py::arg("progress"));
  m.def("study", &hp::study, py::arg("path"), py::arg("out"), py::arg("threads"), py::arg("plots"),
        py::arg("ib_sensitivity"), py::arg("memory"), py::arg("max_events"), py::arg("max_sim_memory"),
        py::arg("progress"));
  hp::register_plan(m);
  using hybridsim::api::CollectiveRequest;
  py::class_<CollectiveRequest>(m, "CollectiveRequest")
      .def(py::init<>())
      .def_readwrite("topology", &CollectiveRequest::topology)
      .def_readwrite("nodes", &CollectiveRequest::nodes)
      .def_readwrite("gpus_per_node", &CollectiveRequest::gpus_per_node)
      .def_readwrite("gpus", &CollectiveRequest::gpus)
      .def_readwrite("op", &CollectiveRequest::op)
      .def_readwrite("algorithm", &CollectiveRequest::algorithm)
      .def_readwrite("protocol", &CollectiveRequest::protocol)
      .def_readwrite("fast_path", &CollectiveRequest::fast_path)
      .def_readwrite("channels", &CollectiveRequest::channels)
      .def_readwrite("pcie_only", &CollectiveRequest::pcie_only)
      .def_readwrite("fabric", &CollectiveRequest::fabric)
      .def_readwrite("oversubscription", &CollectiveRequest::oversubscription)
      .def_readwrite("message_size", &CollectiveRequest::message_size)
      .def_readwrite("reduction_bandwidth", &CollectiveRequest::reduction)
      .def_readwrite("reduction_given", &CollectiveRequest::reduction_given)
      .def_readwrite("min_bytes", &CollectiveRequest::min_bytes)
      .def_readwrite("max_bytes", &CollectiveRequest::max_bytes)
      .def_readwrite("step_factor", &CollectiveRequest::step_factor)
      .def_readwrite("max_events", &CollectiveRequest::max_events)
      .def_readwrite("max_sim_memory", &CollectiveRequest::max_sim_memory);
  m.def("collective", &hp::collective, py::arg("request"));
  using hybridsim::api::TopologyRequest;
  py::class_<TopologyRequest>(m, "TopologyRequest")
      .def(py::init<>())
      .def_readwrite("topology", &TopologyRequest::topology)
      .def_readwrite("nodes", &TopologyRequest::nodes)
      .def_readwrite("gpus_per_node", &TopologyRequest::gpus_per_node)
      .def_readwrite("fabric", &TopologyRequest::fabric)
      .def_readwrite("oversubscription", &TopologyRequest::oversubscription)
      .def_readwrite("route", &TopologyRequest::route)
      .def_readwrite("rings", &TopologyRequest::rings)
      .def_readwrite("pcie_only", &TopologyRequest::pcie_only)
      .def_readwrite("dot", &TopologyRequest::dot);
  m.def("topology", &hp::topology, py::arg("request"));
  m.def("transformer_models", &hybridsim::workloads::transformer_model_names);
  m.def("check_cap", &hp::check_cap, py::arg("keyword"), py::arg("text"), py::arg("spelled"));
  m.def("transformer_model", &hp::transformer_model, py::arg("name"));
}

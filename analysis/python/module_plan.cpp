// The Python module's plan(): the 2017 networks' planner (`hybridsim plan --model gnmt`) and the
// transformer planner (`hybridsim plan --model llama3-8b --gpu h100`), each called through the
// library's front door with the GIL released; hybridsim/__init__.py's plan() picks one by the model's
// name (is_llm_plan_model) and makes the PlanResult users see.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <sstream>
#include <string>

#include "analysis/api/hybridsim.h"
#include "analysis/api/llm_plan.h"
#include "analysis/plan/llm_dimensions.h"
#include "analysis/python/module_parts.h"
#include "analysis/study/study_steps.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/program/pipeline_schedule.h"
#include "workloads/program/placement.h"

namespace py = pybind11;

namespace hybridsim::python {
namespace {

// Options are taken by value: a copy made with the GIL held, so that another thread changing the
// Python object while the simulation runs cannot race with it.
py::dict plan(analysis::PlanCommandOptions options, int top, bool progress) {
  options.spelling = analysis::OptionSpelling::python();  // refusals say gpus=, not --gpus
  analysis::PlanResult result;
  {
    py::gil_scoped_release nogil;
    result = api::plan(options, progress ? &std::cerr : nullptr);
  }
  std::ostringstream printed;
  analysis::print_plan(result, printed, top);
  py::list ranked;
  for (const analysis::PlanCandidate& c : result.ranked) {
    py::dict row;
    const analysis::StepLabel& label = c.step.label;
    row["label"] = analysis::describe(label);
    row["dp"] = label.dp();
    row["mp"] = label.mp;
    row["partitioner"] = std::string(workloads::partitioner_name(label.partitioner));
    row["bucket_bytes"] = label.bucket_bytes;
    row["algorithm"] = std::string(workloads::algorithm_name(label.algorithm));
    row["step_time_ps"] = c.step.step_time.ps();
    row["samples_per_second"] = c.samples_per_second;
    row["time_to_train_seconds"] = c.ttt ? py::object(py::float_(c.ttt->seconds)) : py::object(py::none());
    row["fits_memory"] = c.does_not_fit.empty();
    row["why"] = c.why;
    ranked.append(row);
  }
  py::list not_simulated;  // past their caps: not ranked (print_plan lists them with their estimate)
  for (const auto& n : result.not_simulated) not_simulated.append(analysis::describe(n.label));
  py::dict d;
  d["printed"] = printed.str();
  d["ranked"] = ranked;
  d["not_simulated"] = not_simulated;
  return d;
}

// A transformer layout's row: its dimensions as the YAML's parallelism keys name them, and its
// figures, simulated or by the closed form (`simulated` says which).
py::dict llm_row(const analysis::LlmPlanResult& r, const analysis::LlmPlanCandidate& c) {
  const analysis::LlmLayout& l = c.layout;
  py::dict row;
  row["label"] = analysis::layout_label(r.request.dimensions, l);
  row["dp"] = l.dp;
  row["tp"] = l.tp;
  row["pp"] = l.pp;
  row["ep"] = l.ep;
  row["sequence_parallel"] = l.sequence_parallel;
  row["micro_batch"] = l.micro_batch;
  row["recompute"] = std::string(workloads::recompute_name(l.recompute));
  row["zero"] = l.zero;
  row["schedule"] = std::string(workloads::pipeline_schedule_name(l.schedule));
  row["virtual_stages"] = l.virtual_stages;
  row["global_batch"] = l.global_batch;
  row["simulated"] = c.simulated();
  row["step_time_ps"] = c.simulated() ? py::object(py::int_(c.step->step_time.ps())) : py::object(py::none());
  row["estimated_step_seconds"] = c.estimate.step();
  row["tokens_per_second"] = c.tokens_per_second;
  row["time_to_train_seconds"] =
      c.time_to_train_seconds ? py::object(py::float_(*c.time_to_train_seconds)) : py::object(py::none());
  row["memory_bytes"] = c.memory.total().count();
  row["why"] = c.why;  // an estimated row's says why it was not simulated, and its closed form
  return row;
}

// Options by value, as plan()'s. The simulated rows are ranked; those kept to their closed form
// (over the candidates' budget, or past --simulate's best K) are listed apart, best estimate first,
// never ranked with them (print_llm_plan prints both).
py::dict plan_llm(analysis::LlmPlanOptions options, int top, bool progress) {
  options.spelling =
      analysis::OptionSpelling::python();  // refusals say critical_batch=, not --critical-batch
  analysis::LlmPlanResult result;
  {
    py::gil_scoped_release nogil;
    result = api::plan_llm(options, progress ? &std::cerr : nullptr);
  }
  std::ostringstream printed;
  analysis::print_llm_plan(result, printed, top);
  py::list ranked, estimated, not_simulated;
  for (std::size_t i = 0; i < result.ranked.size(); ++i) {
    const analysis::LlmPlanCandidate& c = result.ranked[i];
    if (i < result.simulated_rows()) {
      ranked.append(llm_row(result, c));
    } else {
      py::dict row = llm_row(result, c);
      not_simulated.append(row["label"]);
      estimated.append(row);
    }
  }
  py::dict d;
  d["printed"] = printed.str();
  d["ranked"] = ranked;
  d["not_simulated"] = not_simulated;
  d["estimated"] = estimated;
  return d;
}

}  // namespace

void register_plan(py::module_& m) {
  py::class_<hybridsim::analysis::PlanCommandOptions>(m, "PlanOptions")
      .def(py::init<>())
      .def_readwrite("model", &hybridsim::analysis::PlanCommandOptions::model)
      .def_readwrite("gpus", &hybridsim::analysis::PlanCommandOptions::gpus)
      .def_readwrite("cluster", &hybridsim::analysis::PlanCommandOptions::cluster)
      .def_readwrite("objective", &hybridsim::analysis::PlanCommandOptions::objective)
      .def_readwrite("variant", &hybridsim::analysis::PlanCommandOptions::variant)
      .def_readwrite("ib_bandwidth", &hybridsim::analysis::PlanCommandOptions::ib_bandwidth)
      .def_readwrite("memory", &hybridsim::analysis::PlanCommandOptions::memory)
      .def_readwrite("max_events", &hybridsim::analysis::PlanCommandOptions::max_events)
      .def_readwrite("max_sim_memory", &hybridsim::analysis::PlanCommandOptions::max_sim_memory)
      .def_readwrite("show_unfit", &hybridsim::analysis::PlanCommandOptions::show_unfit)
      .def_readwrite("threads", &hybridsim::analysis::PlanCommandOptions::threads);
  m.def("plan", &plan, py::arg("options"), py::arg("top"), py::arg("progress"));
  using hybridsim::analysis::LlmPlanOptions;
  py::class_<LlmPlanOptions>(m, "LlmPlanOptions")
      .def(py::init<>())
      .def_readwrite("model", &LlmPlanOptions::model)
      .def_readwrite("gpus", &LlmPlanOptions::gpus)
      .def_readwrite("gpu", &LlmPlanOptions::gpu)
      .def_readwrite("cluster", &LlmPlanOptions::cluster)
      .def_readwrite("ib_bandwidth", &LlmPlanOptions::ib_bandwidth)
      .def_readwrite("memory", &LlmPlanOptions::memory)
      .def_readwrite("global_batch", &LlmPlanOptions::global_batch)
      .def_readwrite("critical_batch", &LlmPlanOptions::critical_batch_tokens)
      .def_readwrite("simulate", &LlmPlanOptions::simulate)
      .def_readwrite("threads", &LlmPlanOptions::threads)
      .def_readwrite("max_events", &LlmPlanOptions::max_events)
      .def_readwrite("max_sim_memory", &LlmPlanOptions::max_sim_memory);
  m.def("plan_llm", &plan_llm, py::arg("options"), py::arg("top"), py::arg("progress"));
  m.def("is_llm_plan_model", &analysis::is_llm_plan_model, py::arg("model"));
  m.def(
      "check_plan_model",
      [](analysis::PlanCommandOptions options) {
        options.spelling = analysis::OptionSpelling::python();
        analysis::check_plan_model(options);
      },
      py::arg("options"));
}

}  // namespace hybridsim::python

#include "analysis/step/step_report.h"

#include <cstdio>

#include "analysis/output/format_fixed.h"
#include "analysis/output/json_text.h"
#include "analysis/output/text_table.h"
#include "analysis/step/worker_shape.h"
#include "sim/link.h"
#include "workloads/program/strategy_label.h"

namespace hybridsim::analysis {

namespace {

std::string share(sim::Time part, sim::Time whole) {
  return whole.ps() > 0
             ? format_fixed(100.0 * static_cast<double>(part.ps()) / static_cast<double>(whole.ps()), 1) + "%"
             : "-";
}

// A key as wide as its column or wider keeps a space before its value: "critical GPU 2 (in 2 of 10
// steps)" ran into it.
std::string line(const std::string& key, const std::string& value) {
  return pad_columns("  " + key + " ", kSummaryKeyColumns) + value + "\n";
}

// "compute 289 ms (99.5%)", or with its named parts: "compute 289 ms (99.5%: kernels 284 ms, gradient
// copies 4.30 ms, optimizer 1.20 ms, slowed by communication 450 us)"; the parts add up to the compute time.
std::string compute_part(sim::Time compute, sim::Time copies, sim::Time slowed, sim::Time step,
                         sim::Time optimizer = {}) {
  std::string out = "compute " + sim::human_time(compute) + " (" + share(compute, step);
  if (copies > sim::Time::zero() || slowed > sim::Time::zero() || optimizer > sim::Time::zero()) {
    out += ": kernels " + sim::human_time(compute - copies - slowed - optimizer);
    if (copies > sim::Time::zero()) out += ", gradient copies " + sim::human_time(copies);
    if (optimizer > sim::Time::zero()) out += ", optimizer " + sim::human_time(optimizer);
    if (slowed > sim::Time::zero()) out += ", slowed by communication " + sim::human_time(slowed);
  }
  return out + ")";
}

std::string breakdown(const GpuStepMetrics& m, sim::Time step) {
  return compute_part(m.compute, m.gradient_copies, m.compute_slowed, step, m.optimizer) + ", exposed comm " +
         sim::human_time(m.exposed_communication) + " (" + share(m.exposed_communication, step) +
         "), idle " + sim::human_time(m.idle) + " (" + share(m.idle, step) + ")";
}

std::string path_breakdown(const CriticalPath& p, sim::Time step) {
  std::string out = compute_part(p.compute, p.gradient_copies, p.compute_slowed, step, p.optimizer);
  if (p.gradient_communication > sim::Time::zero())
    out += ", gradient comm " + sim::human_time(p.gradient_communication) + " (" +
           share(p.gradient_communication, step) + ")";
  if (p.model_parallel_transfers > sim::Time::zero())
    out += ", MP transfers " + sim::human_time(p.model_parallel_transfers) + " (" +
           share(p.model_parallel_transfers, step) + ")";
  if (p.tensor_parallel_communication > sim::Time::zero())
    out += ", TP comm " + sim::human_time(p.tensor_parallel_communication) + " (" +
           share(p.tensor_parallel_communication, step) + ")";
  if (p.expert_parallel_communication > sim::Time::zero())
    out += ", EP comm " + sim::human_time(p.expert_parallel_communication) + " (" +
           share(p.expert_parallel_communication, step) + ")";
  if (p.launch_gaps > sim::Time::zero())
    out += ", launch gaps " + sim::human_time(p.launch_gaps) + " (" + share(p.launch_gaps, step) + ")";
  out += "; on " + std::to_string(p.gpus_visited) + (p.gpus_visited == 1 ? " GPU" : " GPUs");
  if (p.gpu_changes > 0)
    out += ", " + std::to_string(p.gpu_changes) + (p.gpu_changes == 1 ? " hop" : " hops") + " between them";
  return out;
}

// The step's parts on a GPU (GpuStepMetrics), in the order each takes what the ones before left:
// "compute 4.90 s (76.0%), TP comm 414 ms (6.4%), pipeline bubble …, other 93.0 ms (1.4%)";
// parts under 1 ns are left out (the mean's parts are each rounded down to the picosecond), compute never.
std::string step_parts(const GpuStepMetrics& m, sim::Time step) {
  const sim::Time other =
      step - m.compute - m.tp_communication - m.ep_communication - m.pipeline_bubble - m.dp_communication;
  const std::pair<const char*, sim::Time> parts[] = {{"compute", m.compute - m.optimizer},
                                                     {"TP comm", m.tp_communication},
                                                     {"EP comm", m.ep_communication},
                                                     {"pipeline bubble", m.pipeline_bubble},
                                                     {"DP comm exposed", m.dp_communication},
                                                     {"optimizer", m.optimizer},
                                                     {"other", other}};
  std::string out;
  for (const auto& [name, t] : parts)
    if (t >= sim::Time::ns(1) || out.empty())
      out += (out.empty() ? "" : ", ") + std::string(name) + " " + sim::human_time(t) + " (" +
             share(t, step) + ")";
  return out;
}

void metrics_json(std::string& out, const GpuStepMetrics& m) {
  out += "{\"gpu\": " + std::to_string(m.gpu) + ", \"finish_us\": " + format_fixed(m.finish.to_us(), 3) +
         ", \"compute_us\": " + format_fixed(m.compute.to_us(), 3) +
         ", \"gradient_copies_us\": " + format_fixed(m.gradient_copies.to_us(), 3) +
         ", \"compute_slowed_us\": " + format_fixed(m.compute_slowed.to_us(), 3) +
         ", \"communication_us\": " + format_fixed(m.communication.to_us(), 3) +
         ", \"exposed_communication_us\": " + format_fixed(m.exposed_communication.to_us(), 3) +
         ", \"idle_us\": " + format_fixed(m.idle.to_us(), 3) + ", \"kernels\": " + std::to_string(m.kernels) +
         ", \"optimizer_us\": " + format_fixed(m.optimizer.to_us(), 3) +
         ", \"tp_communication_us\": " + format_fixed(m.tp_communication.to_us(), 3) +
         ", \"ep_communication_us\": " + format_fixed(m.ep_communication.to_us(), 3) +
         ", \"pipeline_bubble_us\": " + format_fixed(m.pipeline_bubble.to_us(), 3) +
         ", \"dp_communication_exposed_us\": " + format_fixed(m.dp_communication.to_us(), 3) + "}";
}

// Said only when a ring was folded or the step had to run again in full (sim/README.md,
// "Folding"); a step simulated message by message throughout says nothing more.
std::string simulation_path_text(const StepResult& r) {
  const StepResult::Simulation& s = r.simulation;
  if (s.rerun) return "full: another transfer crossed a folded ring's links, so the step ran again in full";
  std::string out;
  // Every GPU of the step simulated where only idle GPUs folded (a cluster larger than the step): no
  // word, as a step that did not fold.
  if (s.gpus_simulated > 0 && s.gpus_simulated < static_cast<std::uint32_t>(r.gpus))
    out = std::to_string(s.gpus_simulated) + " of " + std::to_string(r.gpus) +
          " GPUs simulated (the others repeat them); ";
  else if (!s.step_fold_reason.empty())
    out = "every GPU simulated (" + s.step_fold_reason + "); ";
  if (s.folded == 0) return out.empty() ? out : out.substr(0, out.size() - 2);
  out += "folded " + std::to_string(s.folded) + " of " + std::to_string(r.collectives) +
         " collectives onto representative ranks";
  if (s.embedded > 0)
    out += " (" + std::to_string(s.embedded) + " of them together with the rings that share their links)";
  if (s.bound > sim::Time::zero()) out += " (bounded, within " + sim::human_time(s.bound) + ")";
  if (!s.full_reason.empty()) out += "; others in full: " + s.full_reason;
  return out;
}

// Under communication.algorithm: hierarchical, when some all-reduces ran as rings: how many, and why.
std::string hierarchical_text(const StepResult& r) {
  const StepResult::Simulation& s = r.simulation;
  if (s.hierarchical_as_ring == 0) return {};
  return "hierarchical asked; " +
         (s.hierarchical_as_ring == s.hierarchical
              ? "every all-reduce (" + std::to_string(s.hierarchical) + ")"
              : std::to_string(s.hierarchical_as_ring) + " of " + std::to_string(s.hierarchical) +
                    " all-reduces") +
         " ran as the ring: its GPUs are " + s.hierarchical_unfit +
         " (hierarchical needs the same number, 2 or more, on each of two machines or more)";
}

}  // namespace

std::string strategy_text(const StepResult& r) {
  return workloads::strategy_label({.dp = r.dp,
                                    .mp = r.mp,
                                    .tp = r.tp,
                                    .pp = r.pp,
                                    .ep = r.ep,
                                    .zero = r.zero,
                                    .gpus = r.gpus,
                                    .transformer = r.transformer});
}

std::string step_summary_table(const StepResult& r,
                               const std::vector<std::pair<std::string, std::string>>& context) {
  std::string out;
  for (const auto& [k, v] : context) out += line(k, v);
  out += line("strategy", strategy_text(r) + ", global batch " + std::to_string(r.global_batch));
  out += line("step time", sim::human_time(r.step_time) +
                               (r.spread.steps > 1 ? " (mean of " + std::to_string(r.spread.steps) +
                                                         " steps; p95 " + sim::human_time(r.spread.p95) +
                                                         ", min " + sim::human_time(r.spread.min) + ", max " +
                                                         sim::human_time(r.spread.max) + ")"
                                                   : ""));
  out += line("throughput", format_fixed(r.samples_per_second, 1) + " samples/s" +
                                (r.unit.empty() || r.unit == "samples"
                                     ? ""
                                     : ", " + format_fixed(r.units_per_second, 0) + " " + r.unit + "/s"));
  out += line("per GPU (mean)", breakdown(r.mean, r.step_time));
  // Over several steps: the GPU last to finish in the most steps, with its own means (step_series.h),
  // and in how many where another GPU was last in some ("(most often)" was said when it was last in
  // every step).
  const StepResult::Spread& spread = r.spread;
  out +=
      line("critical GPU " + std::to_string(r.critical.gpu) +
               (spread.critical_steps < spread.steps ? " (in " + std::to_string(spread.critical_steps) +
                                                           " of " + std::to_string(spread.steps) + " steps)"
                                                     : ""),
           breakdown(r.critical, r.step_time));
  out += line("critical path", path_breakdown(r.critical_path, r.step_time));
  out += line("step parts (per GPU, mean)", step_parts(r.mean, r.step_time));
  std::string bytes;
  for (int k = 0; k < sim::kLinkKindCount; ++k) {
    const sim::Bytes b = r.bytes_by_link_kind[static_cast<std::size_t>(k)];
    if (b.count() == 0) continue;
    bytes += (bytes.empty() ? "" : ", ") + std::string(sim::link_kind_name(static_cast<sim::LinkKind>(k))) +
             " " + sim::human_bytes(b);
  }
  out += line("bytes moved (× links crossed)", bytes.empty() ? "none" : bytes);
  out += line("simulated",
              std::to_string(r.collectives) + " collectives and transfers, " + std::to_string(r.messages) +
                  " messages, " + std::to_string(r.events) + " events" +
                  (r.spread.steps > 1 ? " over " + std::to_string(r.spread.steps) + " steps" : ""));
  if (const std::string path = simulation_path_text(r); !path.empty())
    out += line("collective simulation", path);
  if (const std::string algorithm = hierarchical_text(r); !algorithm.empty())
    out += line("all-reduce algorithm", algorithm);
  return out;
}

StepFigures step_summary_figures(const StepResult& r) {
  // As results.csv's (analysis/step/worker_shape.h): mp the GPUs of one data-parallel worker, so
  // dp × mp = gpus for both kinds; tp, pp, ep, zero a transformer's, null otherwise.
  const WorkerShape w = worker_shape(r);
  const auto dimension = [&](int WorkerShape::Transformer::*field) {
    return w.transformer ? std::to_string((*w.transformer).*field) : std::string("null");
  };
  const auto us = [](sim::Time t) { return format_fixed(t.to_us(), 3); };
  StepFigures f;
  f.shape = {{"dp", std::to_string(w.dp)},
             {"mp", std::to_string(w.gpus_per_worker)},
             {"tp", dimension(&WorkerShape::Transformer::tp)},
             {"pp", dimension(&WorkerShape::Transformer::pp)},
             {"ep", dimension(&WorkerShape::Transformer::ep)},
             {"zero", dimension(&WorkerShape::Transformer::zero)},
             {"gpus", std::to_string(w.gpus)},
             {"global_batch", std::to_string(r.global_batch)}};
  f.times = {{"step_time_us", us(r.step_time)},
             {"steps", std::to_string(r.spread.steps)},
             {"critical_gpu_steps", std::to_string(r.spread.critical_steps)},
             {"p95_step_time_us", us(r.spread.p95)},
             {"min_step_time_us", us(r.spread.min)},
             {"max_step_time_us", us(r.spread.max)},
             {"samples_per_second", format_fixed(r.samples_per_second, 3)},
             {"units_per_second", format_fixed(r.units_per_second, 3)},
             {"unit", r.unit, true}};
  f.counts = {{"events", std::to_string(r.events)},
              {"messages", std::to_string(r.messages)},
              {"collectives", std::to_string(r.collectives)}};
  return f;
}

namespace {

// "\"dp\": 8, \"mp\": 1": one line of summary.json's figures.
void append_figures(std::string& out, const std::vector<StepFigure>& figures) {
  for (std::size_t i = 0; i < figures.size(); ++i) {
    out += i ? ", " : "";
    append_json_string(out, figures[i].key);
    out += ": ";
    if (figures[i].text)
      append_json_string(out, figures[i].value);
    else
      out += figures[i].value;
  }
}

}  // namespace

std::string step_summary_json(const StepResult& r,
                              const std::vector<std::pair<std::string, std::string>>& context,
                              const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out = "{\n  \"context\": {";
  for (std::size_t i = 0; i < context.size(); ++i) {
    out += i ? ", " : "";
    append_json_string(out, context[i].first);
    out += ": ";
    append_json_string(out, context[i].second);
  }
  const StepFigures figures = step_summary_figures(r);
  out += "},\n  ";
  append_figures(out, figures.shape);
  out += ",\n  ";
  append_figures(out, figures.times);
  out += ",\n  \"mean\": ";
  metrics_json(out, r.mean);
  out += ",\n  \"critical\": ";
  metrics_json(out, r.critical);
  const CriticalPath& p = r.critical_path;
  out +=
      ",\n  \"critical_path\": {\"compute_us\": " + format_fixed(p.compute.to_us(), 3) +
      ", \"gradient_copies_us\": " + format_fixed(p.gradient_copies.to_us(), 3) +
      ", \"optimizer_us\": " + format_fixed(p.optimizer.to_us(), 3) +
      ", \"compute_slowed_us\": " + format_fixed(p.compute_slowed.to_us(), 3) +
      ", \"gradient_communication_us\": " + format_fixed(p.gradient_communication.to_us(), 3) +
      ", \"model_parallel_transfers_us\": " + format_fixed(p.model_parallel_transfers.to_us(), 3) +
      ", \"tensor_parallel_communication_us\": " + format_fixed(p.tensor_parallel_communication.to_us(), 3) +
      ", \"expert_parallel_communication_us\": " + format_fixed(p.expert_parallel_communication.to_us(), 3) +
      ", \"launch_gaps_us\": " + format_fixed(p.launch_gaps.to_us(), 3) +
      ", \"gpus_visited\": " + std::to_string(p.gpus_visited) +
      ", \"gpu_changes\": " + std::to_string(p.gpu_changes) + "}";
  out += ",\n  \"bytes_by_link_kind\": {";
  bool first = true;
  for (int k = 0; k < sim::kLinkKindCount; ++k) {
    const sim::Bytes b = r.bytes_by_link_kind[static_cast<std::size_t>(k)];
    if (b.count() == 0) continue;
    out += first ? "" : ", ";
    first = false;
    append_json_string(out, sim::link_kind_name(static_cast<sim::LinkKind>(k)));
    out += ": " + std::to_string(b.count());
  }
  out += "},\n  ";
  append_figures(out, figures.counts);
  out += ",\n  \"per_gpu\": [";
  for (std::size_t i = 0; i < r.per_gpu.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    metrics_json(out, r.per_gpu[i]);
  }
  out += "\n  ]";
  for (const auto& m : members) {
    out += ",\n  ";
    append_json_string(out, m.first);
    out += ": " + m.second;
  }
  out += "\n}\n";
  return out;
}

}  // namespace hybridsim::analysis

#include "analysis/run/scenario_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "analysis/output/format_fixed.h"
#include "analysis/run/training_at_step.h"
#include "analysis/step/budget_error.h"
#include "analysis/step/memory_report.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_series.h"
#include "analysis/trace/step_trace.h"
#include "sim/error.h"
#include "sim/time_window.h"
#include "topology/gpu_list.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/program/pipeline_schedule.h"

namespace hybridsim::analysis {

ScenarioRunOptions scenario_trace_options(const scenarios::Scenario& scenario,
                                          const std::filesystem::path& directory) {
  ScenarioRunOptions options;
  if (!scenario.outputs.trace) return options;
  const scenarios::TraceSettings& t = *scenario.outputs.trace;
  const TraceFile file = trace_file(directory / t.file, t.gzip);  // trace.json + gzip → trace.json.gz
  options.trace = file.path;
  options.trace_options.detail = t.detail;
  options.trace_options.gpus = t.gpus.list;
  options.trace_options.all_gpus = t.gpus.all;
  options.trace_options.all_gpus_said = "outputs.trace.gpus: all";  // the block's own words
  options.trace_options.gpus_option = "outputs.trace.gpus";
  options.trace_options.step = scenario.trace_step;
  options.trace_options.window = t.window;
  options.trace_options.gzip = file.gzip;
  // Refusals that come once the step is known name the key where it was written.
  if (t.window)
    options.trace_options.window_given = scenarios::location_of(scenario, "outputs.trace.window") +
                                         ": outputs.trace.window \"" + sim::format_time_window(*t.window) +
                                         "\"";
  if (t.gpus.list)
    options.trace_options.gpus_given = scenarios::location_of(scenario, "outputs.trace.gpus") +
                                       ": outputs.trace.gpus " + topology::format_gpu_list(*t.gpus.list);
  return options;
}

namespace {

// A point's trace name is `before` + "-<index>" + `after`.
struct NumberedName {
  std::string before, after;
};
NumberedName numbered_name(const std::filesystem::path& file) {
  std::string name = file.filename().string();
  std::string gz;
  if (name.size() > 3 && name.ends_with(".gz")) {
    gz = ".gz";
    name.resize(name.size() - gz.size());
  }
  // Before the last extension; a name without one (or a dot-file such as ".json") gets it at the end.
  const auto dot = name.rfind('.');
  const std::size_t at = dot == std::string::npos || dot == 0 ? name.size() : dot;
  return {name.substr(0, at), name.substr(at) + gz};
}

}  // namespace

std::filesystem::path sweep_point_trace_file(const std::filesystem::path& file, std::size_t index) {
  const NumberedName n = numbered_name(file);
  return file.parent_path() / (n.before + "-" + std::to_string(index) + n.after);
}

std::optional<std::size_t> sweep_point_trace_index(const std::filesystem::path& file,
                                                   const std::string& name) {
  const NumberedName n = numbered_name(file);
  const std::size_t outside = n.before.size() + 1 + n.after.size();
  if (name.size() <= outside || !name.starts_with(n.before + "-") || !name.ends_with(n.after))
    return std::nullopt;
  const std::string digits = name.substr(n.before.size() + 1, name.size() - outside);
  // As std::to_string writes an index: digits alone, no leading zero, within size_t.
  if (digits.size() > 18 || (digits.size() > 1 && digits[0] == '0') ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return static_cast<std::size_t>(std::stoull(digits));
}

StepSetup step_setup(const scenarios::ResolvedScenario& r) {
  StepSetup s;
  static_cast<workloads::StepConfig&>(s) = r;
  s.profile = &r.profile;
  s.topology = &r.topology;
  if (r.transformer) s.memory = &r.transformer->memory_by_stage;
  s.protocol_written = scenarios::location_of(r.scenario, "communication.protocol");
  return s;
}

void check_scenario_event_floor(const scenarios::Scenario& scenario, const OptionSpelling& spelling) {
  try {
    check_event_floor(scenarios::load_workload_profile(scenario), scenario.simulation.max_events);
  } catch (const sim::BudgetExceeded& e) {
    throw budget_refusal(scenario.source, e, "the step", scenario_budget_knobs(spelling),
                         scenario.communication.fast_path == sim::FastPath::Off);
  }
}

namespace {

// A training key written for a network without the curve or dataset it needs would leave the run
// without a time to train and say nothing (a typo such as "optimistc" too): refused at the key.
[[noreturn]] void no_time_to_train(const scenarios::Scenario& s, const std::string& key,
                                   const std::string& why, const std::string& expected) {
  throw InputError(scenarios::location_of(s, key) + ": " + key + ": " + why + "; expected " + expected);
}

}  // namespace

std::optional<TrainingModel> training_model(const scenarios::Scenario& scenario,
                                            const std::string& network) {
  const std::string key = workloads::canonical_network_name(scenario.training.network.value_or(network));
  if (scenario.training.network)
    if (const auto mismatch = curve_family_mismatch(network, key))
      no_time_to_train(scenario, "training.network", mismatch->problem, mismatch->expected);
  const auto dataset = find_training_dataset(key);
  const auto& e = scenario.training.efficiency;
  const auto& written = scenario.provenance.where;
  TrainingModel m{StatisticalEfficiency::parametric(1, 1, {1, 1}), 0, ""};
  if (e.kind == scenarios::EfficiencySettings::Kind::Named) {
    const auto curve = find_efficiency_curve(key, e.variant);
    if (!curve) {
      for (const char* field : {"training.efficiency", "training.network", "training.dataset_samples"})
        if (written.contains(field)) {
          std::string known;
          for (const auto& c : builtin_efficiency_curves())
            known += (known.empty() ? "" : ", ") + c.network + "/" + c.variant;
          no_time_to_train(
              scenario, field,
              "no built-in statistical-efficiency curve " + key + "/" + e.variant + ", so no time to train",
              std::string(field == std::string("training.efficiency") ? "" : "it left out, or ") +
                  "a built-in curve (" + known +
                  ") or a curve of its own, training.efficiency: "
                  "{e_min, b_noise} or {table: [[B, epochs], ...]}");
        }
      return std::nullopt;
    }
    m.efficiency = curve->efficiency;
    m.label = key + "/" + e.variant + (curve->is_estimate ? " (estimate)" : "");
  } else if (e.kind == scenarios::EfficiencySettings::Kind::Parametric) {
    const BatchRange range{e.min_batch.value_or(1), e.max_batch.value_or(1'000'000'000)};
    m.efficiency = StatisticalEfficiency::parametric(e.e_min, e.b_noise, range);
    // %g: std::to_string's %f wrote an E_min of 1e300 in 301 digits and one of 1e-7 as 0.000000.
    char label[100];
    std::snprintf(label, sizeof label, "parametric E_min %.6g, B_noise %.6g", e.e_min, e.b_noise);
    m.label = label;
  } else {
    std::vector<BatchEpochs> points;
    for (const auto& [b, epochs] : e.table) points.push_back({b, epochs});
    // min_batch and max_batch default to the table's ends (custom_codecs_run.cpp checks them
    // against the table); written, they move where the curve is flagged as extrapolated.
    const BatchRange range{e.min_batch.value_or(points.front().global_batch),
                           e.max_batch.value_or(points.back().global_batch)};
    m.efficiency = StatisticalEfficiency::table(std::move(points), range);
    m.label = "table of " + std::to_string(e.table.size()) + " points";
  }
  if (scenario.training.dataset_samples) m.dataset_samples = *scenario.training.dataset_samples;
  else if (dataset) m.dataset_samples = dataset->samples;
  else
    no_time_to_train(scenario, "training.efficiency",
                     "a curve of its own, but " + key + " has no built-in dataset to count epochs in",
                     "training.dataset_samples too");
  return m;
}

namespace {

// A step whose simulated time passes what sim::Time holds (2^63 ps, 106 days) is the input's doing:
// an InputError naming the fields that lengthen the step, where they were written.
[[noreturn]] void step_too_long(const scenarios::Scenario& s, const std::string& what) {
  static constexpr std::string_view kFields[] = {"workload.batch_per_worker",
                                                 "workload.compute_speed",
                                                 "workload.gpu_speeds",
                                                 "workload.profile",
                                                 "cluster.links",
                                                 "cluster.topology",
                                                 "communication.message_size",
                                                 "communication.bucket_size",
                                                 "communication.reduction_bandwidth",
                                                 "variability"};
  std::string written;
  for (const auto field : kFields)
    for (const auto& [path, where] : s.provenance.where)
      if (path == field || (path.starts_with(field) && path[field.size()] == '.')) {
        written += (written.empty() ? "" : ", ") + path + " (" + where + ")";
        break;
      }
  throw InputError(s.source + ": the step's simulated time passes what 64-bit picoseconds hold (106 days; " +
                   what + ")" +
                   (written.empty() ? std::string("; the profile's kernels are too long")
                                    : "; what lengthens it, as written: " + written));
}

}  // namespace

ScenarioRun run_scenario(const scenarios::ResolvedScenario& resolved, const ScenarioRunOptions& options) {
  try {
    return run_scenario_unchecked(resolved, options);
  } catch (const std::overflow_error& e) {
    step_too_long(resolved.scenario, e.what());
  } catch (const sim::BudgetExceeded& e) {
    throw budget_refusal(resolved.scenario.source, e,
                         e.cause.find("variability steps") != std::string::npos ? "the run" : "the step",
                         options.budget_knobs.value_or(scenario_budget_knobs(options.spelling)),
                         resolved.collective.fast_path == sim::FastPath::Off);
  }
}

ScenarioRun run_scenario_unchecked(const scenarios::ResolvedScenario& resolved,
                                   const ScenarioRunOptions& options) {
  ScenarioRun run;
  run.context = scenarios::key_settings(resolved);
  // Before the step: a training key that cannot give a time to train is refused without simulating.
  const auto model = training_model_at_step(resolved);
  const StepSetup setup = step_setup(resolved);
  if (options.trace) {
    StepTraceOptions t = options.trace_options;
    for (const auto& kv : run.context) t.other_data.push_back(kv);
    StepTraceSummary summary;
    // The trace shows one step (options.trace_options.step); the others are simulated without one.
    run.step = simulate_steps_with_trace(setup, *options.trace, t, &summary, options.progress);
    run.trace_path = summary.path;
    run.trace_bytes = summary.bytes;
    run.trace_events = summary.events;
    run.trace_shows = summary.shows;
  } else {
    run.step = simulate_steps(setup, std::nullopt, options.progress,
                              options.step_estimate ? &*options.step_estimate : nullptr);
  }
  // A transformer's memory is its own model's (Korthikanti et al., TP and ZeRO divisions), one rank
  // per pipeline stage (the mapping's MP ranks): the peak line names the critical GPU's own stage and
  // the largest stage's GPU. (One rank, the largest stage's, was shown as GPU 0's: stage 1's 16.1 GiB
  // of a pp 2 run on GPU 0, which holds stage 0.)
  run.memory = resolved.transformer
                   ? resolved.transformer->memory_by_stage
                   : workloads::model_step_memory(resolved.profile, resolved, resolved.topology);
  if (resolved.transformer) {
    run.memory_rule = resolved.transformer->memory_rule;
    run.model_slice = resolved.transformer->slice;
  }
  if (const auto& t = resolved.transformer; t && run.step.step_time > sim::Time::zero()) {
    // Per GPU: a replica's tp × pp GPUs share its micro-batches' FLOPs.
    const double per_gpu =
        static_cast<double>(run.step.accumulation) / (t->tp * t->pp) / run.step.step_time.to_seconds();
    run.model_tflops_per_gpu = t->model_flop_per_micro_batch * per_gpu / 1e12;
    run.mfu =
        t->mfu_flop_per_micro_batch * per_gpu / (static_cast<double>(t->peak_flop_per_second) * t->speed);
    run.mfu_peak_scale = t->speed;
    run.transformer_estimate = t->estimate;
  }
  run.gpu_capacity = resolved.gpu_capacity;
  run.mapping = resolved.mapping;
  if (model) {
    run.time_to_train = time_to_train(run.step.step_time, run.step.global_batch,
                                      model->dataset_samples, model->efficiency);
    run.efficiency = model->label;
  }
  return run;
}

bool fits_in_memory(const ScenarioRun& run) { return does_not_fit(run).empty(); }

std::string does_not_fit(const ScenarioRun& run) {
  return does_not_fit_text(run.memory.peaks(), run.mapping, run.gpu_capacity, run.step.critical.gpu);
}

std::optional<bool> whole_model_fits(const scenarios::ModelSlice& slice,
                                     const std::optional<workloads::MemoryCapacity>& capacity) {
  if (!capacity) return std::nullopt;
  return slice.whole_model.total() <= capacity->bytes;
}

std::string model_slice_text(const scenarios::ModelSlice& slice,
                             const std::optional<workloads::MemoryCapacity>& capacity) {
  // The memory line above says whether the slice fits; this one whether the model it stands for does
  // (a GPT-3 175B slice "fits" in 9.78 GiB where its 96 layers need 331 GiB a GPU).
  const std::optional<bool> fits = whole_model_fits(slice, capacity);
  const std::string verdict = !fits ? "" : *fits ? " fits" : " does not fit";
  std::string where;
  // The whole model's layers split as run splits them (balanced_layers); "evenly" was said of 32
  // layers over pp 3, stages of 10, 11 and 11.
  if (slice.pp > 1)
    where = "pipeline stage " + std::to_string(slice.stage) + " of " + std::to_string(slice.pp) +
            (slice.layers % slice.pp == 0
                 ? std::string(" (the largest; the layers split evenly) ")
                 : " (the largest; the layers split " +
                       workloads::balanced_layers_text(static_cast<int>(slice.layers), slice.pp) + ") ");
  return std::to_string(slice.layers_simulated) + " of " + std::to_string(slice.layers) +
         " layers simulated: step time, throughput and memory are the slice's; the whole " + slice.model +
         verdict + ": " + where + memory_peak_text(slice.whole_model, capacity);
}

std::vector<std::pair<std::string, std::string>> run_metrics(const ScenarioRun& run) {
  std::vector<std::pair<std::string, std::string>> out =
      memory_lines(run.memory, run.mapping, run.gpu_capacity, run.step.critical.gpu);
  if (!run.memory_rule.empty()) out.emplace_back("memory model", run.memory_rule);
  if (run.model_slice) out.emplace_back("model slice", model_slice_text(*run.model_slice, run.gpu_capacity));
  if (run.model_tflops_per_gpu && run.mfu) {
    char buf[400], scale[160] = "";
    if (run.mfu_peak_scale != 1)
      std::snprintf(scale, sizeof scale,
                    " of the GPUs' peak x %g, their mean speed (workload.compute_speed, gpu_speeds)",
                    run.mfu_peak_scale);
    std::snprintf(buf, sizeof buf, "%.1f TFLOP/s per GPU, MFU %.1f%%%s%s", *run.model_tflops_per_gpu,
                  *run.mfu * 100, scale,
                  run.transformer_estimate ? " (ESTIMATE: kernel times not calibrated on this GPU)" : "");
    out.emplace_back("model FLOPs", buf);
  }
  if (run.time_to_train) {
    const auto& t = *run.time_to_train;
    // Per-epoch evaluation (MLPerf's GNMT evaluates BLEU once per epoch, inside its timed run) is
    // not counted: no reference gives how long one takes (statistical_efficiency.md), so none is
    // invented, and the line says so.
    // A global batch over the dataset repeats samples within a step: an epoch is a share of a step.
    char steps[200];
    if (t.batch_over_dataset())
      std::snprintf(
          steps, sizeof steps,
          "%.3g steps (the global batch %lld is over the dataset's %lld samples: a step covers %.3g "
          "epochs)",
          t.steps_per_epoch, static_cast<long long>(t.global_batch),
          static_cast<long long>(t.dataset_samples), 1 / t.steps_per_epoch);
    else
      std::snprintf(steps, sizeof steps, "%lld steps", std::llround(t.steps_per_epoch));
    // Under 0.005, two decimals said "0.00 h (0.00 epochs ...)" for an e_min of 1e-300: the one rule
    // of a sweep's and a study's CSV instead (format_fixed_nonzero).
    char buf[400];
    std::snprintf(buf, sizeof buf, "%s h (%s epochs × %s of %s; training steps only, no evaluation)%s",
                  format_fixed_nonzero(t.seconds / 3600.0, 2).c_str(),
                  format_fixed_nonzero(t.epochs, 2).c_str(), steps, sim::human_time(t.step_time).c_str(),
                  t.extrapolated ? ", extrapolated" : "");
    out.emplace_back("time to train", buf);
    out.emplace_back("statistical efficiency", run.efficiency);
  }
  if (run.trace_path) {
    out.emplace_back(
        "trace", run.trace_path->string() + " (" + sim::human_bytes(sim::Bytes::of(run.trace_bytes)) + ", " +
                     std::to_string(run.trace_events) + " events; open in ui.perfetto.dev or speedscope)");
    if (!run.trace_shows.empty()) out.emplace_back("trace shows", run.trace_shows);
  }
  return out;
}

}  // namespace hybridsim::analysis

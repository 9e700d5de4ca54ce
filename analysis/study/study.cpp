#include "analysis/study/study.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <ostream>

#include "analysis/step/memory_report.h"
#include "sim/error.h"
#include "workloads/gpu/gpu.h"
#include "workloads/gpu/gpu_part_note.h"

namespace hybridsim::analysis {
namespace {

// The scenario of one configuration of a network, as overrides: the study's cluster at the
// configuration's size, its workload and communication keys, and dp × mp with the placement.
struct RequestMaker {
  const StudyConfig& config;
  int per_machine = 8;
  const std::vector<std::string>& limits;

  StepRequest operator()(const StudyNetwork& net, int gpus, int mp, double ib_factor) const {
    // A single machine has no InfiniBand: every IB factor shares its steps.
    const double factor = gpus <= per_machine ? 1.0 : ib_factor;
    const auto ib = sim::Bandwidth::bytes_per_second(static_cast<std::int64_t>(
        static_cast<double>(topology::ib_bandwidth_of(config.cluster).bytes_per_second()) * factor));
    StepRequest r{net.name, cluster_overlay(config.cluster, gpus, ib)};
    const bool builtin = net.profile_source.starts_with("built-in");
    for (auto& o : workload_overlay(net.name, builtin ? "" : net.profile_source, config.gpu_choice))
      r.overlay.push_back(std::move(o));
    // DP has no placement to choose: one step whatever the network's partitioner.
    const std::string placement =
        mp == 1 ? "auto" : std::string(workloads::partitioner_name(net.partitioner));
    for (auto& o : parallelism_overlay(gpus / mp, mp, placement)) r.overlay.push_back(std::move(o));
    for (auto& o :
         communication_overlay(config.algorithm, config.bucket_size, config.message_size, config.fast_path))
      r.overlay.push_back(std::move(o));
    r.overlay.insert(r.overlay.end(), limits.begin(), limits.end());
    r.overlay.push_back("communication.ddp=" + std::string(workloads::ddp_name(net.ddp)));
    return r;
  }
};

bool fits(int gpus, int mp) { return gpus >= mp && gpus % mp == 0; }

std::string ib_label(double factor) {
  std::string s = std::to_string(factor);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return "IB x" + s;
}

// One configuration's simulated step, or why it was not simulated (`step` empty).
struct StepOrWhy {
  std::optional<StepPoint> step;
  std::string why;
};
using StepSource = std::function<StepOrWhy(int gpus, int mp, double ib_factor)>;

// "N = 64, 16 x 4": a configuration of the grid as the notes name it.
std::string configuration_label(int gpus, int dp, int mp) {
  return "N = " + std::to_string(gpus) + ", " + std::to_string(dp) + " x " + std::to_string(mp);
}

// A step the study cannot do without (the baseline, mp alone: every row is measured against them).
const StepPoint& needed(const StepOrWhy& s) {
  if (!s.step) throw InputError(s.why);
  return *s.step;
}

}  // namespace

StudyRow project_row(const StepPoint& step, const EfficiencyCurve& curve, std::int64_t dataset_samples,
                     const StudyRow* base) {
  StudyRow row;
  row.gpus = step.label.gpus;
  row.dp = step.label.dp();
  row.mp = step.label.mp;
  row.step = step;
  row.ttt = time_to_train(step.step_time, step.global_batch, dataset_samples, curve.efficiency);
  const double samples_per_second = static_cast<double>(step.global_batch) / step.step_time.to_seconds();
  if (base == nullptr) {
    row.step_speedup = 1;
    row.e2e_speedup = 1;
  } else {
    const double base_rate = static_cast<double>(base->step.global_batch) / base->step.step_time.to_seconds();
    row.step_speedup = samples_per_second / base_rate;
    row.e2e_speedup = base->ttt.seconds / row.ttt.seconds;
  }
  return row;
}

StudyHeadline compute_headline(const StudyVariant& variant, bool respect_memory) {
  StudyHeadline h;
  const auto& rows = variant.rows;
  if (rows.empty()) return h;
  auto better = [&](int candidate, int current) {
    return current < 0 || rows[static_cast<std::size_t>(candidate)].ttt.seconds <
                              rows[static_cast<std::size_t>(current)].ttt.seconds;
  };
  int max_gpus = 0;
  for (const auto& r : rows) max_gpus = std::max(max_gpus, r.gpus);
  std::map<int, int> dp_at, hybrid_at;  // N → row index of DP / of the best hybrid
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const StudyRow& r = rows[static_cast<std::size_t>(i)];
    if (respect_memory && !r.does_not_fit.empty()) continue;  // never best, never compared
    h.extrapolated = h.extrapolated || r.ttt.extrapolated;
    if (r.is_dp()) {
      if (better(i, h.best_dp)) h.best_dp = i;
      dp_at[r.gpus] = i;
    } else {
      if (better(i, h.best_hybrid)) h.best_hybrid = i;
      auto [it, added] = hybrid_at.try_emplace(r.gpus, i);
      if (!added && better(i, it->second)) it->second = i;
    }
  }
  auto seconds = [&](int i) { return rows[static_cast<std::size_t>(i)].ttt.seconds; };
  if (dp_at.contains(max_gpus)) h.dp_at_max = dp_at[max_gpus];
  if (hybrid_at.contains(max_gpus)) h.hybrid_at_max = hybrid_at[max_gpus];
  if (h.best_dp >= 0 && h.best_hybrid >= 0) h.gain_best = seconds(h.best_dp) / seconds(h.best_hybrid) - 1;
  if (h.dp_at_max >= 0 && h.hybrid_at_max >= 0)
    h.gain_at_max = seconds(h.dp_at_max) / seconds(h.hybrid_at_max) - 1;
  // Walk down from the largest N while hybrid stays ahead.
  for (auto it = dp_at.rbegin(); it != dp_at.rend(); ++it) {
    const auto hy = hybrid_at.find(it->first);
    if (hy == hybrid_at.end() || !(seconds(hy->second) < seconds(it->second))) break;
    h.crossover = it->first;
  }
  return h;
}

StudyResult run_study(const StudyConfig& config, const StudyRunOptions& options) {
  StepCache cache;
  return run_study(config, options, cache);
}

namespace {

// The mp values a network allows (every GPU of the worker gets ops), and notes on the others.
NetworkStudy probe_network(const StudyConfig& config, std::size_t n) {
  const StudyNetwork& net = config.networks[n];
  NetworkStudy ns;
  ns.network = n;
  if (auto note = workloads::preset_part_note(config.cluster.preset, net.profile.meta.gpu)) {
    ns.kernel_note = *note;
    ns.notes.push_back(*note);
  }
  // A GPU of another chip named by workload.gpu (the two notes exclude each other: same chip or not).
  if (config.gpu_choice.gpu)
    if (auto note = workloads::named_gpu_note(config.cluster.preset, net.profile.meta.gpu, "workload.gpu")) {
      ns.kernel_note = *note;
      ns.notes.push_back(*note);
    }
  for (const int mp : config.mp) {
    std::string why;
    try {
      const workloads::MpPlacement placement = worker_placement(net.profile, mp, net.partitioner);
      if (placement.uses_every_gpu()) {
        ns.mp.push_back(mp);
        continue;
      }
      why = "the " + std::string(workloads::partitioner_name(net.partitioner)) + " partitioner " +
            placement.idle_gpus_text();
    } catch (const InputError& e) {
      why = e.what();
    }
    ns.mp_left_out.push_back("mp = " + std::to_string(mp) + ": " + why);
    ns.notes.push_back("mp = " + std::to_string(mp) + " left out: " + why);
  }
  return ns;
}

// Every step a network's variants need, in the order the old key list had them.
void add_requests(const RequestMaker& request, const StudyConfig& config, const StudyNetwork& net,
                  const NetworkStudy& ns, const std::vector<double>& ib_factors,
                  std::vector<StepRequest>& out) {
  for (const double f : ib_factors) {
    out.push_back(request(net, 1, 1, f));
    for (const int mp : ns.mp) out.push_back(request(net, mp, mp, f));
    for (const int gpus : config.gpus) {
      out.push_back(request(net, gpus, 1, f));
      for (const int mp : ns.mp)
        if (fits(gpus, mp)) out.push_back(request(net, gpus, mp, f));
    }
  }
}

// One variant of a network: its rows projected from the simulated steps, checked against memory; a
// configuration of the grid not simulated is no row, and is named in `not_simulated`.
StudyVariant project_variant(const StudyResult& result, const NetworkStudy& ns, std::string label,
                             const EfficiencyCurve& curve, double ib_factor, const StepSource& step) {
  const StudyNetwork& net = result.config.networks[ns.network];
  StudyVariant v(std::move(label), curve, ib_factor);
  const auto samples = net.dataset.samples;
  v.baseline = project_row(needed(step(1, 1, ib_factor)), v.curve, samples, nullptr);
  for (const int mp : ns.mp)
    v.mp_alone.push_back(project_row(needed(step(mp, mp, ib_factor)), v.curve, samples, &v.baseline));
  const auto add = [&](int gpus, int mp) {
    const StepOrWhy s = step(gpus, mp, ib_factor);
    if (s.step)
      v.rows.push_back(project_row(*s.step, v.curve, samples, &v.baseline));
    else
      v.not_simulated.push_back({configuration_label(gpus, gpus / mp, mp), s.why});
  };
  for (const int gpus : result.config.gpus) {
    add(gpus, 1);
    for (const int mp : ns.mp)
      if (fits(gpus, mp)) add(gpus, mp);
  }
  for (StudyRow& r : v.rows) r.does_not_fit = does_not_fit_text(r.step.memory_peaks, {}, result.memory);
  v.headline = compute_headline(v);
  v.break_even = compute_break_even(v);
  return v;
}

std::string int_list(const std::vector<int>& values) {
  std::string out;
  for (const int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

// Why the grid holds no hybrid configuration (empty when it holds one): no mp the model allows, or
// none of them divides a GPU count of the grid.
std::string no_hybrid_reason(const StudyConfig& config, const NetworkStudy& ns) {
  if (ns.mp.empty()) {
    std::string why;
    for (const auto& w : ns.mp_left_out) why += (why.empty() ? "" : "; ") + w;
    return "no hybrid configuration in the grid: no mp of [" + int_list(config.mp) + "] splits the model (" +
           why + ")";
  }
  for (const int gpus : config.gpus)
    for (const int mp : ns.mp)
      if (fits(gpus, mp)) return {};
  return "no hybrid configuration in the grid: no mp of [" + int_list(ns.mp) + "] divides a GPU count of [" +
         int_list(config.gpus) + "]";
}

// A note on a configuration not simulated, under `variant`'s steps (empty: the headline's).
std::string not_simulated_note(const StudyVariant::NotSimulated& n, const std::string& variant) {
  return n.configuration + (variant.empty() ? "" : " (" + variant + ")") +
         " not simulated, left out of every figure: refused during its run: " + n.why;
}

// The headline curve, the sensitivity curves, then the faster-InfiniBand runs; the first variant
// says once which rows memory leaves out.
void project_network(const StudyResult& result, NetworkStudy& ns, const std::vector<double>& ib_factors,
                     const StepSource& step) {
  const StudyNetwork& net = result.config.networks[ns.network];
  ns.variants.push_back(project_variant(result, ns, net.curve.variant, net.curve, 1.0, step));
  for (const StudyRow& r : ns.variants.front().rows)
    if (!r.does_not_fit.empty())
      ns.notes.push_back(configuration_label(r.gpus, r.dp, r.mp) + " left out of best: " + r.does_not_fit);
  for (const auto& n : ns.variants.front().not_simulated) ns.notes.push_back(not_simulated_note(n, ""));
  ns.no_hybrid = no_hybrid_reason(result.config, ns);
  if (!ns.no_hybrid.empty()) ns.notes.push_back(ns.no_hybrid);
  for (const auto& c : net.sensitivity_curves)
    ns.variants.push_back(project_variant(result, ns, c.variant, c, 1.0, step));
  for (std::size_t i = 1; i < ib_factors.size(); ++i) {
    ns.variants.push_back(
        project_variant(result, ns, ib_label(ib_factors[i]), net.curve, ib_factors[i], step));
    // The efficiency curves share the headline's steps; the faster InfiniBand's are steps of their own.
    for (const auto& n : ns.variants.back().not_simulated)
      ns.notes.push_back(not_simulated_note(n, ns.variants.back().label));
  }
}

}  // namespace

StudyResult run_study(const StudyConfig& config, const StudyRunOptions& options, StepCache& cache) {
  const auto start = std::chrono::steady_clock::now();
  StepRunOptions run;
  run.started = run.clock();  // the progress lines' "in all" is the whole study's, not one part's
  if (config.networks.empty()) throw InputError(config.source + ": the study has no networks");
  if (config.gpus.empty()) throw InputError(config.source + ": the study has no GPU counts");
  StudyResult result;
  result.config = config;
  result.spelling = options.spelling;
  // The GPU workload.gpu names, where it differs from the preset's (a100-40gb on dgx-a100): the rows
  // were checked against the preset's 80 GiB.
  result.memory = options.memory
                      ? options.memory
                      : workloads::workload_gpu_capacity(
                            config.cluster.preset, config.gpu_choice.gpu
                                                       ? workloads::gpu_by_key(*config.gpu_choice.gpu).model
                                                       : std::string_view());
  const RequestMaker request{result.config, gpus_per_machine(config.cluster), options.limits};

  std::vector<double> ib_factors{1.0};
  if (options.ib_sensitivity)
    for (const double f : config.ib_factors) ib_factors.push_back(f);

  std::vector<StepRequest> requests;
  StepRunContext context;
  for (std::size_t n = 0; n < result.config.networks.size(); ++n) {
    const StudyNetwork& net = result.config.networks[n];
    context.profiles[net.name] = &net.profile;
    result.networks.push_back(probe_network(result.config, n));
    add_requests(request, result.config, net, result.networks.back(), ib_factors, requests);
  }

  run.threads = options.threads.value_or(config.threads);
  if (options.progress != nullptr) run.on_progress = progress_printer(*options.progress, "study");
  run.progress = options.progress;  // the whole run's estimate and progress with an estimated end
  run.label = "study";
  run.budget_knobs = study_budget_knobs(options.spelling);
  const std::size_t before = cache.simulated();
  const std::size_t refused_before = cache.refused_in_run();
  // A step refused during its run (its fold given up on timings, its next way over the events cap:
  // GNMT dp 4096 x mp 4 on 16,384 GPUs, tests/bench/MEASUREMENTS.md, foldtie) would otherwise stop the
  // study after every other step ran: it is reported not simulated instead, and the others finish.
  run.keep_going_past_run_refusals = true;
  const std::vector<StepRef> ids = cache.simulate(requests, context, run);
  std::map<StepRequest, StepRef> id_of;
  for (std::size_t i = 0; i < requests.size(); ++i) id_of.emplace(requests[i], ids[i]);
  result.steps_simulated = cache.simulated() - before - (cache.refused_in_run() - refused_before);

  for (NetworkStudy& ns : result.networks) {
    const StudyNetwork& net = result.config.networks[ns.network];
    project_network(result, ns, ib_factors, [&](int gpus, int mp, double f) -> StepOrWhy {
      const StepRef& ref = id_of.at(request(net, gpus, mp, f));
      if (cache.contains(ref.id)) return {cache.point(ref), {}};
      const StepFailure* failed = cache.failure(ref.id);
      if (failed == nullptr)
        throw InternalError("step neither simulated nor refused: " + describe(ref.label));
      // Any other failure (a shared cache's, with keep_going) is the study's error, as it was.
      if (!failed->in_run) throw InputError(failed->why);
      return {std::nullopt, failed->why};
    });
  }
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace hybridsim::analysis

#include "analysis/plan/llm_planner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

#include "analysis/study/study_report.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/error.h"

namespace hybridsim::analysis {
namespace {

constexpr const char* kPlanSource = "plan candidate";

std::string gib(sim::Bytes b) { return workloads::format_gib(b); }

std::string memory_text(const LlmMemory& m) {
  return gib(m.total()) + " on stage " + std::to_string(m.stage) + " (weights " + gib(m.weights) +
         ", gradients " + gib(m.gradients) + ", optimizer " + gib(m.optimizer) + ", activations " +
         gib(m.activations) + ")";
}

// Nothing fits: the layout needing the least memory, what it needs, and the options to change.
[[noreturn]] void refuse_nothing_fits(const LlmPlanRequest& r, std::size_t enumerated) {
  const std::string what = r.model + " on " + std::to_string(r.gpus) + " GPUs";
  if (enumerated == 0)
    throw InputError("--gpus " + std::to_string(r.gpus) + ": no layout of " + what + " with global batch " +
                     std::to_string(r.global_batch) + " (tp up to " +
                     std::to_string(r.machine.gpus_per_machine) +
                     " dividing the heads, dp x micro-batch dividing the batch); expected another --gpus or "
                     "--global-batch");
  const LlmSpace space{r.setting, r.gpus, r.machine.gpus_per_machine, r.global_batch};
  std::optional<std::pair<LlmLayout, LlmMemory>> least;
  for (const LlmLayout& l : enumerate_layouts(r.dimensions, space)) {
    const LlmMemory m = llm_peak_memory(r.setting, l);
    if (!least || m.total() < least->second.total()) least = {{l, m}};
  }
  std::string off;
  for (const PlanDimension& d : r.dimensions)
    if (!d.enabled) off += (off.empty() ? "" : ", ") + std::string(d.name);
  throw InputError("--memory: none of the " + std::to_string(enumerated) + " layouts of " + what +
                   " fits in " + gib(r.memory.bytes) + " (" + r.memory.source + "); the least, " +
                   layout_label(r.dimensions, least->first) + ", needs " + memory_text(least->second) +
                   "; expected a larger --memory or more --gpus" +
                   (off.empty() ? std::string()
                                : " (not searched yet: " + off +
                                      ", whose keys the scenario loader "
                                      "does not know on this build)"));
}

std::vector<std::string> candidate_overlay(const LlmPlanRequest& r, const LlmLayout& l) {
  std::vector<std::string> o = cluster_overlay(r.cluster, r.gpus, topology::ib_bandwidth_of(r.cluster));
  o.push_back("workload.network=" + r.model);
  if (!r.gpu.empty()) o.push_back("workload.gpu=" + r.gpu);
  for (auto& s : layout_overlay(r.dimensions, l)) o.push_back(std::move(s));
  o.push_back("training.global_batch=" + std::to_string(l.global_batch));
  // Megatron exchanges gradients once per optimizer step, after the last micro-batch; from ZeRO 2 on,
  // every micro-batch's gradients are reduce-scattered into the shards (the loader's default).
  if (l.zero < 2) o.push_back("communication.exchange=last-micro-batch");
  o.insert(o.end(), r.limits.begin(), r.limits.end());
  return o;
}

// Kaplan et al.'s trade-off (S/S_min − 1)(E/E_min − 1) = 1: the tokens needed at batch B tokens grow
// as E_min (1 + B / B_crit); E_min follows from the training tokens at the reference batch.
double tokens_to_train(const LlmPlanRequest& r, double batch_tokens) {
  const double crit = *r.critical_batch_tokens;
  const double ref = static_cast<double>(r.reference_batch * r.setting.model.sequence);
  return r.training_tokens * (1 + batch_tokens / crit) / (1 + ref / crit);
}

std::string seconds(double s) { return format_fixed(s, s < 10 ? 3 : 1); }

// The closed-form terms, largest first, as "compute 9.1 s, TP communication 1.2 s, ...".
std::vector<std::pair<std::string, double>> terms(const LlmTimeEstimate& e) {
  return {{"compute", e.compute},
          {"TP communication", e.tp_communication},
          {"pipeline bubble", e.bubble},
          {"pipeline transfers", e.pp_communication},
          {"DP communication exposed", e.dp_exposed},
          {"expert all-to-all", e.ep_communication},
          {"optimizer", e.optimizer}};
}

std::string breakdown(const LlmPlanCandidate& c) {
  const StepPoint& p = *c.step;
  std::string s = "step " + seconds(p.step_time.to_seconds()) +
                  " s simulated (critical GPU: " + seconds(p.critical.compute.to_seconds()) + " s compute, " +
                  seconds(p.critical.exposed_communication.to_seconds()) + " s exposed communication, " +
                  seconds(p.critical.idle.to_seconds()) + " s idle); closed form " +
                  seconds(c.estimate.step()) + " s:";
  for (const auto& [name, v] : terms(c.estimate))
    if (v > 0) s += " " + name + " " + seconds(v) + ",";
  s.pop_back();
  return s + "; peak memory " + memory_text(c.memory);
}

// Why `a` ranks above `b`: what differs, by how much, and the closed-form terms that moved most.
std::string versus(const std::vector<PlanDimension>& dims, const LlmPlanCandidate& a,
                   const LlmPlanCandidate& b, std::size_t index) {
  std::string s = "vs #" + std::to_string(index + 1) + " (" + layout_differences(dims, a.layout, b.layout) +
                  "): x" + format_fixed(a.tokens_per_second / b.tokens_per_second, 3) +
                  " its tokens/s (step " + seconds(a.step->step_time.to_seconds()) + " vs " +
                  seconds(b.step->step_time.to_seconds()) + " s); where the time goes, by the closed forms:";
  auto ta = terms(a.estimate), tb = terms(b.estimate);
  std::vector<std::pair<std::string, double>> delta;
  for (std::size_t i = 0; i < ta.size(); ++i)
    if (ta[i].second != tb[i].second) delta.push_back({ta[i].first, ta[i].second - tb[i].second});
  std::stable_sort(delta.begin(), delta.end(),
                   [](const auto& x, const auto& y) { return std::abs(x.second) > std::abs(y.second); });
  for (std::size_t i = 0; i < delta.size() && i < 3; ++i)
    s += std::string(i ? "," : "") + " " + delta[i].first + " " + (delta[i].second > 0 ? "+" : "") +
         seconds(delta[i].second) + " s";
  return delta.empty() ? s + " the same" : s;
}

bool better(const LlmPlanCandidate& a, const LlmPlanCandidate& b) {
  if (a.time_to_train_seconds && b.time_to_train_seconds)
    return *a.time_to_train_seconds < *b.time_to_train_seconds;
  return a.tokens_per_second > b.tokens_per_second;
}

}  // namespace

std::vector<LlmPlanCandidate> llm_fitting_candidates(const LlmPlanRequest& r, std::size_t* enumerated) {
  const LlmSpace space{r.setting, r.gpus, r.machine.gpus_per_machine, r.global_batch};
  const std::vector<LlmLayout> layouts = enumerate_layouts(r.dimensions, space);
  if (enumerated) *enumerated = layouts.size();
  std::vector<LlmPlanCandidate> out;
  for (const LlmLayout& l : layouts) {
    LlmPlanCandidate c{.layout = l, .memory = llm_peak_memory(r.setting, l)};
    if (c.memory.total() > r.memory.bytes) continue;
    c.estimate = llm_time_estimate(r.setting, l, r.machine);
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const LlmPlanCandidate& a, const LlmPlanCandidate& b) {
    return a.estimate.step() < b.estimate.step();
  });
  return out;
}

namespace {

// Simulates the candidates' steps (one profile per distinct generated rank) and fills step,
// tokens/s and time to train; failures go to `skipped`, the candidate dropped.
std::vector<LlmPlanCandidate> simulate_candidates(const LlmPlanRequest& r,
                                                  std::vector<LlmPlanCandidate> chosen, StepCache& steps,
                                                  std::vector<std::string>& skipped) {
  std::map<std::string, workloads::Profile> profiles;
  std::vector<StepRequest> requests;
  for (const LlmPlanCandidate& c : chosen) {
    StepRequest q{r.model + " " + layout_label(r.dimensions, c.layout), candidate_overlay(r, c.layout)};
    const scenarios::Scenario s = scenarios::parse_scenario("", kPlanSource, q.overlay);
    profiles.emplace(q.network, scenarios::load_workload_profile(s));
    requests.push_back(std::move(q));
  }
  StepRunContext context;
  for (const auto& [name, p] : profiles) context.profiles[name] = &p;
  StepRunOptions run{.threads = r.threads, .on_progress = {}, .keep_going = true};
  if (r.progress) run.on_progress = progress_printer(*r.progress, "plan");
  run.progress = r.progress;  // the whole run's estimate and progress with an estimated end
  run.label = "plan";
  const std::vector<StepRef> ids = steps.simulate(requests, context, run);
  std::vector<LlmPlanCandidate> out;
  const double sequence = static_cast<double>(r.setting.model.sequence);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (const StepFailure* f = steps.failure(ids[i].id)) {
      skipped.push_back(layout_label(r.dimensions, chosen[i].layout) + ": " + f->why);
      continue;
    }
    LlmPlanCandidate c = chosen[i];
    c.step = steps.point(ids[i]);
    const double batch_tokens = static_cast<double>(c.layout.global_batch) * sequence;
    c.tokens_per_second = batch_tokens / c.step->step_time.to_seconds();
    if (r.critical_batch_tokens)
      c.time_to_train_seconds = tokens_to_train(r, batch_tokens) / c.tokens_per_second;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::size_t llm_runner_up(const LlmPlanResult& r) {
  for (std::size_t i = 1; i < r.ranked.size(); ++i)
    if (r.ranked[i].step->id != r.ranked[0].step->id) return i;
  return r.ranked.size();
}

LlmPlanResult plan_llm(const LlmPlanRequest& r, StepCache* cache) {
  if (r.critical_batch_tokens && (r.training_tokens <= 0 || r.reference_batch <= 0))
    throw InputError("--critical-batch: " + r.model +
                     " has no published training tokens and batch to scale from");
  LlmPlanResult result;
  result.model = r.model;
  result.gpus = r.gpus;
  result.request = r;
  result.by_time_to_train = r.critical_batch_tokens.has_value();
  std::vector<LlmPlanCandidate> fit = llm_fitting_candidates(r, &result.enumerated);
  result.fitting = fit.size();
  if (fit.empty()) refuse_nothing_fits(r, result.enumerated);
  if (r.simulate > 0 && fit.size() > static_cast<std::size_t>(r.simulate))
    fit.resize(static_cast<std::size_t>(r.simulate));
  StepCache own;
  result.ranked = simulate_candidates(r, std::move(fit), cache ? *cache : own, result.skipped);
  if (result.ranked.empty())
    throw InputError("no candidate of " + r.model + " on " + std::to_string(r.gpus) +
                     " GPUs could be simulated: " + result.skipped.front());
  std::stable_sort(result.ranked.begin(), result.ranked.end(), better);
  for (std::size_t i = 0; i < result.ranked.size() && i < 5; ++i)
    result.ranked[i].why = breakdown(result.ranked[i]);
  // The runner-up: the next candidate that simulated another step (two layouts can resolve to one
  // step, e.g. selective recomputation under flash attention, which stores no softmax anyway).
  const std::size_t next = llm_runner_up(result);
  if (next < result.ranked.size())
    result.ranked[0].why += "; " + versus(r.dimensions, result.ranked[0], result.ranked[next], next);
  return result;
}

}  // namespace hybridsim::analysis

#include "analysis/plan/llm_planner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

#include "analysis/plan/llm_candidate_cost.h"
#include "analysis/plan/nothing_fits.h"
#include "analysis/study/study_report.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "workloads/program/strategy_label.h"

namespace hybridsim::analysis {
namespace {

constexpr const char* kPlanSource = "plan candidate";

std::string gib(sim::Bytes b) { return workloads::format_gib(b); }

std::string memory_text(const LlmMemory& m) {
  return gib(m.total()) + " on stage " + std::to_string(m.stage) + " (weights " + gib(m.weights) +
         ", gradients " + gib(m.gradients) + ", optimizer " + gib(m.optimizer) + ", activations " +
         gib(m.activations) + ")";
}

// Why no layout exists where the replicas outnumber the batch: the fewest a searched tp x pp leaves
// (dp = GPUs / (tp x pp)), or that none divides the GPUs; empty where that is not the reason. The
// refusal named tp and the batch only, while pp's rule (then whole, equal stages) was what ruled out
// Llama 3 405B's 126 layers on 16,384 GPUs at 512 sequences.
std::string fewest_replicas_text(const LlmPlanRequest& r, const LlmSpace& space) {
  std::vector<int> tps{1}, pps{1};
  for (const PlanDimension& d : r.dimensions) {
    std::vector<int>* into = d.name == "tp" ? &tps : d.name == "pp" ? &pps : nullptr;
    if (into == nullptr || !d.enabled || !d.values) continue;
    into->clear();
    for (const std::string& v : d.values(space)) into->push_back(std::stoi(v));
  }
  std::optional<LlmLayout> fewest;
  for (const int tp : tps)
    for (const int pp : pps)
      if (r.gpus % (tp * pp) == 0 && (!fewest || r.gpus / (tp * pp) < fewest->dp))
        fewest = LlmLayout{.dp = r.gpus / (tp * pp), .tp = tp, .pp = pp};
  if (!fewest) return ": no tp x pp divides the GPUs";
  if (fewest->dp <= r.global_batch) return "";
  return ": the fewest replicas, dp " + std::to_string(fewest->dp) + " at tp " + std::to_string(fewest->tp) +
         " x pp " + std::to_string(fewest->pp) + ", are more than the batch's " +
         std::to_string(r.global_batch) + " sequences";
}

// Nothing fits: the layout needing the least memory, what it needs, and the options to change.
[[noreturn]] void refuse_nothing_fits(const LlmPlanRequest& r, std::size_t enumerated) {
  const std::string what = r.model + " on " + workloads::gpus_text(r.gpus);
  const LlmSpace space{r.setting, r.gpus, r.machine.gpus_per_machine, r.global_batch};
  if (enumerated == 0)
    throw LlmPlanRefused(LlmPlanRefusal::NoLayout,
                         (r.names.gpus.empty() ? "" : r.names.gpus + " " + std::to_string(r.gpus) + ": ") +
                             "no layout of " + what + " with global batch " + std::to_string(r.global_batch) +
                             " (tp up to " + std::to_string(r.machine.gpus_per_machine) +
                             " dividing the heads, pp dividing the GPUs, at most the " +
                             std::to_string(r.setting.model.layers) +
                             " layers, dp x micro-batch dividing the batch" + fewest_replicas_text(r, space) +
                             "); expected " + r.names.other_layout);
  std::optional<std::pair<LlmLayout, LlmMemory>> least;
  for (const LlmLayout& l : enumerate_layouts(r.dimensions, space)) {
    const LlmMemory m = llm_peak_memory(r.setting, l);
    if (!least || m.total() < least->second.total()) least = {{l, m}};
  }
  std::string off;
  for (const PlanDimension& d : r.dimensions)
    if (!d.enabled) off += (off.empty() ? "" : ", ") + std::string(d.name);
  throw LlmPlanRefused(LlmPlanRefusal::NothingFits,
                       nothing_fits_text({.lead = r.names.memory,
                                          .count = enumerated,
                                          .kind = "layouts",
                                          .what = what,
                                          .capacity = gib(r.memory.bytes) + " (" + r.memory.source + ")",
                                          .least = layout_label(r.dimensions, least->first),
                                          .needs = memory_text(least->second),
                                          .expected = r.names.more_memory,
                                          .aside = off.empty() ? std::string() : "not searched: " + off}));
}


// Kaplan et al.'s trade-off (S/S_min − 1)(E/E_min − 1) = 1: the tokens needed at batch B tokens grow
// as E_min (1 + B / B_crit); E_min follows from the training tokens at the reference batch.
double tokens_to_train(const LlmPlanRequest& r, double batch_tokens) {
  return llm_tokens_to_train(r, *r.critical_batch_tokens, batch_tokens);
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

std::string closed_form_terms(const LlmPlanCandidate& c) {
  std::string s = "closed form " + seconds(c.estimate.step()) + " s:";
  for (const auto& [name, v] : terms(c.estimate))
    if (v > 0) s += " " + name + " " + seconds(v) + ",";
  s.pop_back();
  return s + "; peak memory " + memory_text(c.memory);
}

std::string breakdown(const LlmPlanCandidate& c) {
  if (!c.simulated()) return "estimated, not simulated (" + c.estimated_only + "); " + closed_form_terms(c);
  const StepPoint& p = *c.step;
  return "step " + seconds(p.step_time.to_seconds()) + " s simulated (critical GPU: " +
         seconds(p.critical.compute.to_seconds()) + " s compute, " +
         seconds(p.critical.exposed_communication.to_seconds()) + " s exposed communication, " +
         seconds(p.critical.idle.to_seconds()) + " s idle); " + closed_form_terms(c);
}

std::string step_text(const LlmPlanCandidate& c) {
  return seconds(c.step_seconds()) + (c.simulated() ? "" : " estimated");
}

// Why `a` ranks above `b`: what differs, by how much, and the closed-form terms that moved most.
std::string versus(const std::vector<PlanDimension>& dims, const LlmPlanCandidate& a,
                   const LlmPlanCandidate& b, std::size_t index) {
  std::string s = "vs #" + std::to_string(index + 1) + " (" + layout_differences(dims, a.layout, b.layout) +
                  "): x" + format_fixed(a.tokens_per_second / b.tokens_per_second, 3) +
                  " its tokens/s (step " + step_text(a) + " vs " + step_text(b) +
                  " s); where the time goes, by the closed forms:";
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

std::vector<std::string> llm_candidate_overlay(const LlmPlanRequest& r, const LlmLayout& l) {
  std::vector<std::string> o = cluster_overlay(r.cluster, r.gpus, topology::ib_bandwidth_of(r.cluster));
  o.push_back("workload.network=" + r.model);
  if (!r.gpu.empty()) o.push_back("workload.gpu=" + r.gpu);
  for (auto& s : layout_overlay(r.dimensions, l)) o.push_back(std::move(s));
  o.push_back("training.global_batch=" + std::to_string(l.global_batch));
  // Megatron exchanges gradients once per optimizer step, after the last micro-batch; from ZeRO 2 on,
  // every micro-batch's gradients are reduce-scattered into the shards (the loader's default). One
  // micro-batch exchanges once either way (and the loader refuses last-micro-batch there).
  if (l.zero < 2 && l.micro_batches() > 1) o.push_back("communication.exchange=last-micro-batch");
  o.insert(o.end(), r.limits.begin(), r.limits.end());
  return o;
}

double llm_tokens_to_train(const LlmPlanRequest& r, double critical, double batch_tokens) {
  const double ref = static_cast<double>(r.reference_batch * r.setting.model.sequence);
  return r.training_tokens * (1 + batch_tokens / critical) / (1 + ref / critical);
}

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

LlmCandidateCost llm_plan_candidate_cost(const LlmPlanRequest& r, const LlmLayout& l) {
  const scenarios::Scenario s = scenarios::parse_scenario("", kPlanSource, llm_candidate_overlay(r, l));
  return llm_candidate_cost(scenarios::load_workload_profile(s), l, r.gpus);
}

double LlmPlanCandidate::step_seconds() const {
  return step ? step->step_time.to_seconds() : estimate.step();
}

namespace {

// Tokens/s and time to train from the candidate's step time (simulated, else the closed form's).
void rate(const LlmPlanRequest& r, LlmPlanCandidate& c) {
  const double batch_tokens =
      static_cast<double>(c.layout.global_batch) * static_cast<double>(r.setting.model.sequence);
  c.tokens_per_second = batch_tokens / c.step_seconds();
  if (r.critical_batch_tokens)
    c.time_to_train_seconds = tokens_to_train(r, batch_tokens) / c.tokens_per_second;
}

// Simulates the candidates' steps (one profile per distinct generated rank), each within the
// plan's events budget. Those simulated and those refused for their budget (estimated, not
// simulated) go to `out`; other failures to `skipped`, the candidate dropped.
void simulate_candidates(const LlmPlanRequest& r, const std::vector<LlmPlanCandidate>& chosen,
                         StepCache& steps, std::vector<LlmPlanCandidate>& out,
                         std::vector<std::string>& skipped) {
  std::map<std::string, workloads::Profile> profiles;
  std::vector<StepRequest> requests;
  std::vector<LlmPlanCandidate> to_simulate;
  std::vector<std::int64_t> memory;
  for (const LlmPlanCandidate& c : chosen) {
    StepRequest q{r.model + " " + layout_label(r.dimensions, c.layout), llm_candidate_overlay(r, c.layout)};
    const scenarios::Scenario s = scenarios::parse_scenario("", kPlanSource, q.overlay);
    const workloads::Profile& p =
        profiles.emplace(q.network, scenarios::load_workload_profile(s)).first->second;
    const LlmCandidateCost cost = llm_candidate_cost(p, c.layout, r.gpus);
    if (std::string why = llm_candidate_refusal(r, cost); !why.empty()) {
      LlmPlanCandidate e = c;
      e.estimated_only = std::move(why);
      rate(r, e);
      out.push_back(std::move(e));
      continue;
    }
    to_simulate.push_back(c);
    requests.push_back(std::move(q));
    memory.push_back(cost.memory);
  }
  StepRunContext context;
  for (const auto& [name, p] : profiles) context.profiles[name] = &p;
  StepRunOptions run{.threads = r.threads, .on_progress = {}, .keep_going = true};
  run.memory = std::move(memory);  // each held against the one budget while it is built and run
  run.memory_budget = r.memory_budget_bytes;
  run.budget_knobs = r.budget_knobs;  // a candidate past its caps says so in the request's words
  if (r.progress) run.on_progress = progress_printer(*r.progress, r.progress_label);
  run.progress = r.progress;  // the whole run's estimate and progress with an estimated end
  run.label = r.progress_label;
  const std::vector<StepRef> ids = steps.simulate(requests, context, run);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    LlmPlanCandidate c = to_simulate[i];
    if (const StepFailure* f = steps.failure(ids[i].id)) {
      if (!f->over_budget) {
        skipped.push_back(layout_label(r.dimensions, c.layout) + ": " + f->why);
        continue;
      }
      // "the step would simulate about 3.1e9 events (...), over the limit ...", without its name.
      c.estimated_only = f->over_budget->words;
    } else {
      c.step = steps.point(ids[i]);
    }
    rate(r, c);
    out.push_back(std::move(c));
  }
}

// The best candidates by the estimate simulated, K at a time, while fewer than K simulated and
// fewer than the attempts tried: the others over the budget are kept, estimated.
void simulate_best(const LlmPlanRequest& r, const std::vector<LlmPlanCandidate>& fit, StepCache& steps,
                   LlmPlanResult& result) {
  const std::size_t want = r.simulate > 0 ? static_cast<std::size_t>(r.simulate) : fit.size();
  const std::size_t tries = r.simulate > 0 ? static_cast<std::size_t>(r.attempts()) : fit.size();
  std::size_t next = 0, simulated = 0;
  while (simulated < want && next < std::min(tries, fit.size())) {
    const std::size_t n = std::min({want - simulated, fit.size() - next, tries - next});
    const std::vector<LlmPlanCandidate> chosen(fit.begin() + static_cast<std::ptrdiff_t>(next),
                                               fit.begin() + static_cast<std::ptrdiff_t>(next + n));
    next += n;
    const std::size_t before = result.ranked.size();
    simulate_candidates(r, chosen, steps, result.ranked, result.skipped);
    for (std::size_t i = before; i < result.ranked.size(); ++i)
      simulated += result.ranked[i].simulated() ? 1 : 0;
  }
  result.estimated = static_cast<std::size_t>(std::count_if(
      result.ranked.begin(), result.ranked.end(), [](const LlmPlanCandidate& c) { return !c.simulated(); }));
}

}  // namespace

std::size_t llm_runner_up(const LlmPlanResult& r) {
  // A simulated best is compared with simulated rows only: an estimated one is another basis.
  const std::size_t rows = r.simulated_rows() > 0 ? r.simulated_rows() : r.ranked.size();
  for (std::size_t i = 1; i < rows; ++i) {
    const LlmPlanCandidate &a = r.ranked[0], &b = r.ranked[i];
    if (a.simulated() && b.simulated() ? b.step->id != a.step->id : b.step_seconds() != a.step_seconds())
      return i;
  }
  return r.ranked.size();
}

std::optional<LlmClosedFormRatio> llm_closed_form_ratio(const LlmPlanResult& r) {
  std::optional<LlmClosedFormRatio> out;
  for (std::size_t i = 0; i < r.simulated_rows(); ++i) {
    const LlmPlanCandidate& c = r.ranked[i];
    const double ratio = c.estimate.step() / c.step_seconds();
    if (!out) out = LlmClosedFormRatio{ratio, ratio};
    out->least = std::min(out->least, ratio);
    out->largest = std::max(out->largest, ratio);
  }
  return out;
}

std::size_t llm_estimated_faster(const LlmPlanResult& r) {
  if (r.simulated_rows() == 0) return 0;
  return static_cast<std::size_t>(
      std::count_if(r.ranked.begin() + static_cast<std::ptrdiff_t>(r.simulated_rows()), r.ranked.end(),
                    [&](const LlmPlanCandidate& c) { return better(c, r.ranked.front()); }));
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
  const std::vector<LlmPlanCandidate> fit = llm_fitting_candidates(r, &result.enumerated);
  result.fitting = fit.size();
  if (fit.empty()) refuse_nothing_fits(r, result.enumerated);
  StepCache own;
  simulate_best(r, fit, cache ? *cache : own, result);
  if (result.ranked.empty())
    throw LlmPlanRefused(LlmPlanRefusal::NoneSimulated,
                         "no candidate of " + r.model + " on " + std::to_string(r.gpus) +
                             " GPUs could be simulated: " + result.skipped.front());
  // The simulated rows ranked first, then the estimated ones apart: a closed form is never ranked
  // against a simulated step (it ran low on pipelines: an estimated #1 was slower in its own run
  // than the simulated rows below it).
  std::stable_sort(result.ranked.begin(), result.ranked.end(),
                   [](const LlmPlanCandidate& a, const LlmPlanCandidate& b) {
                     if (a.simulated() != b.simulated()) return a.simulated();
                     return better(a, b);
                   });
  for (LlmPlanCandidate& c : result.ranked) c.why = breakdown(c);
  // The runner-up: the next candidate with another step (two layouts can resolve to one step, e.g.
  // selective recomputation under flash attention, which stores no softmax anyway).
  const std::size_t next = llm_runner_up(result);
  if (next < result.ranked.size())
    result.ranked[0].why += "; " + versus(r.dimensions, result.ranked[0], result.ranked[next], next);
  return result;
}

}  // namespace hybridsim::analysis

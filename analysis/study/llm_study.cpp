#include "analysis/study/llm_study.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "analysis/output/progress_estimate.h"
#include "analysis/study/study_report.h"
#include "sim/error.h"
#include "topology/preset_registry.h"

namespace hybridsim::analysis {
namespace {

// The DP-heavy family: pp 1, ZeRO-3, tp up to 8 (the table's own limit).
void restrict_to_dp_heavy(LlmPlanRequest& r) {
  for (PlanDimension& d : r.dimensions) {
    if (d.name == "zero") d.values = [](const LlmSpace&) { return std::vector<std::string>{"3"}; };
    if (d.name == "pp" || d.name == "schedule" || d.name == "virtual_stages") d.enabled = false;
  }
}

// A plan's time to train at `critical` tokens (0 without a published run to scale from).
double time_to_train(const LlmPlanRequest& r, double critical, const LlmPlanCandidate& plan) {
  if (r.training_tokens <= 0) return 0;
  const double batch = static_cast<double>(plan.layout.global_batch * r.setting.model.sequence);
  return llm_tokens_to_train(r, critical, batch) / plan.tokens_per_second;
}

// Whether `a` trains faster than `b` at the first critical batch (has more tokens/s when none is stated).
bool faster(const LlmStudyConfig& c, const LlmPlanRequest& r, const LlmPlanCandidate& a,
            const LlmPlanCandidate& b) {
  if (c.critical_batch_tokens.empty() || r.training_tokens <= 0)
    return a.tokens_per_second > b.tokens_per_second;
  return time_to_train(r, c.critical_batch_tokens[0], a) < time_to_train(r, c.critical_batch_tokens[0], b);
}

// A family's best plan at one batch, or why it has none: the planner's refusal, whose kind (not its
// message) the table's verdict and the larger batch below follow.
struct FamilyBest {
  std::optional<LlmPlanCandidate> plan{};
  std::optional<LlmPlanCandidate> faster_estimate{};  // see LlmStudyCell::dp_heavy_faster_estimate
  std::string note{};
  std::optional<LlmPlanRefusal> refusal{};  // empty with a note: failed otherwise
};

FamilyBest plan_best(const LlmPlanRequest& r, StepCache& cache) {
  try {
    const LlmPlanResult plan = plan_llm(r, &cache);
    FamilyBest best{.plan = plan.ranked.front()};
    // The estimated rows follow the simulated ones, best closed form first.
    if (llm_estimated_faster(plan) > 0) best.faster_estimate = plan.ranked[plan.simulated_rows()];
    return best;
  } catch (const LlmPlanRefused& e) {
    return {.note = e.what(), .refusal = e.reason};
  } catch (const InputError& e) {
    return {.note = e.what()};
  }
}

// The family's best plan at the model's published batch; when no layout takes that batch (the
// planner's NoLayout: DP-heavy needs dp >= GPUs / gpus-per-machine sequences a step, and dp dividing
// the batch), its best at each of the smallest batches above it that its replica counts take
// (batches_above), the first of them where none has a plan (its refusal). (It was the smallest multiple
// of GPUs / gpus-per-machine, the published batch itself at 12 GPUs of 8 a machine: "no layout"; then
// the one of those whose closed-form step was shortest, right against the smaller batches at every
// critical batch but not against a larger one of more tokens/s: pick_of chooses now.)
std::vector<FamilyBest> plans_of(LlmPlanRequest r, StepCache& cache) {
  FamilyBest best = plan_best(r, cache);
  if (best.plan || best.refusal != LlmPlanRefusal::NoLayout) return {std::move(best)};
  const std::vector<std::int64_t> batches =
      batches_above(r.dimensions, {r.setting, r.gpus, r.machine.gpus_per_machine, r.global_batch});
  if (batches.empty()) return {std::move(best)};
  std::vector<FamilyBest> out;
  std::optional<FamilyBest> refused;  // the first batch's, where none has a plan
  for (const std::int64_t batch : batches) {
    r.global_batch = batch;
    FamilyBest at = plan_best(r, cache);
    if (at.plan)
      out.push_back(std::move(at));
    else if (!refused)
      refused = std::move(at);
  }
  if (out.empty()) out.push_back(std::move(*refused));
  return out;
}

// Of a family's plans, its headline: the fastest to train at the first critical batch (where none is
// stated, the one of the shortest step: tokens/s alone would favour the largest batch).
std::size_t pick_of(const LlmStudyConfig& c, const LlmPlanRequest& r, const std::vector<FamilyBest>& plans) {
  const bool priced = !c.critical_batch_tokens.empty() && r.training_tokens > 0;
  const auto step = [](const LlmPlanCandidate& p) {
    return static_cast<double>(p.layout.global_batch) / p.tokens_per_second;
  };
  std::size_t best = 0;
  for (std::size_t i = 1; i < plans.size(); ++i) {
    const auto& a = plans[i].plan;
    const auto& b = plans[best].plan;
    if (a && (!b || (priced ? faster(c, r, *a, *b) : step(*a) < step(*b)))) best = i;
  }
  return best;
}

// Per critical batch, the family's fastest time to train of its options and the batch it takes.
void times_to_train(const LlmStudyConfig& c, const LlmPlanRequest& r,
                    const std::vector<LlmPlanCandidate>& options, std::vector<double>& ttt,
                    std::vector<std::int64_t>& batch) {
  for (const double critical : c.critical_batch_tokens) {
    double best = 0;
    std::int64_t at = 0;
    for (const LlmPlanCandidate& p : options)
      if (const double t = time_to_train(r, critical, p); t > 0 && (best == 0 || t < best)) {
        best = t;
        at = p.layout.global_batch;
      }
    ttt.push_back(best);
    batch.push_back(at);
  }
}

// The family's headline (pick_of) into the cell's fields, and every plan into `options`.
void keep(std::vector<FamilyBest> plans, std::size_t headline, std::optional<LlmPlanCandidate>& plan,
          std::optional<LlmPlanCandidate>& faster, std::string& note, std::optional<LlmPlanRefusal>& refusal,
          std::vector<LlmPlanCandidate>& options) {
  for (const FamilyBest& p : plans)
    if (p.plan) options.push_back(*p.plan);
  FamilyBest& best = plans[headline];
  plan = std::move(best.plan);
  faster = std::move(best.faster_estimate);
  note = std::move(best.note);
  refusal = best.refusal;
}

// What a cell's notes point to: the study file's keys and the study command's options, not the
// planner's (its user cannot pass --gpus, --global-batch or --memory to a study).
LlmPlanNames study_names(const OptionSpelling& spelling) {
  // "study --max-events" / "study(max_events=)".
  const auto option = [&](std::string_view name) {
    return spelling.is_python() ? "study(" + spelling.name(name) + "=)" : "study " + spelling.name(name);
  };
  return {.gpus = "",
          .other_layout =
              "another GPU count in the study file's gpus (the batch is the model's published one, "
              "or above it each of the smallest each replica count takes; the study file cannot set it)",
          .memory = "",
          .more_memory = "more GPUs in the study file's gpus, or a larger " + option("memory"),
          .max_events = option("max-events"),
          .max_sim_memory = option("max-sim-memory")};
}

// One cell: both families' best plans and their times to train. `told(k)`: k of its 3 plans done
// (3D, DP-heavy, 3D at DP-heavy's batch).
LlmStudyCell plan_cell(const LlmStudyConfig& c, const LlmStudyRunOptions& o, LlmStudyCell cell,
                       StepCache& cache, const std::function<void(int)>& told) {
  // Ranked by tokens/s: at one batch the critical batch moves both alike.
  LlmPlanOptions po{.model = cell.model, .gpus = cell.gpus, .cluster = cell.cluster, .ib_bandwidth = cell.ib};
  po.simulate = c.simulate;
  po.threads = o.threads.value_or(c.threads);
  po.max_events = o.max_events;
  po.max_sim_memory = o.max_sim_memory;
  po.memory = o.memory;
  po.spelling = o.spelling;
  LlmPlanRequest three_d = make_llm_plan_request(po);
  three_d.names = study_names(o.spelling);
  // Each plan's candidates simulated say how far they are (a 16,384-GPU step takes a while).
  three_d.progress = o.progress;
  const std::string label = "llm study, " + cell.model + " " + cell.cluster + " " + cell.ib + " " +
                            std::to_string(cell.gpus) + " GPUs, ";
  three_d.progress_label = label + "3D";
  LlmPlanRequest dp_heavy = three_d;
  restrict_to_dp_heavy(dp_heavy);
  dp_heavy.progress_label = label + "DP-heavy";
  cell.ib_per_gpu = sim::format_bandwidth(topology::ib_share_per_gpu(three_d.cluster));
  cell.published_batch = three_d.global_batch;
  cell.sequence = three_d.setting.model.sequence;
  std::vector<FamilyBest> three_d_plans = plans_of(three_d, cache);
  told(1);
  std::vector<FamilyBest> dp_plans = plans_of(dp_heavy, cache);
  const std::size_t dp_pick = pick_of(c, dp_heavy, dp_plans);
  told(2);
  // Where DP-heavy had to take a larger batch, 3D may take one too (a fixed batch starves a pipeline
  // of micro-batches): 3D's best plan at each batch DP-heavy was planned at as well (DP-heavy's
  // headline's alone where no critical batch is stated, as tokens/s would favour the largest), so that
  // at every critical batch each family trains at its best of the same batches. (3D's batch was the
  // first critical batch's alone: GPT-3's on 16,384 H100 took 2,048 sequences at 8 M tokens too, where
  // its 4,096 trains faster than DP-heavy's there, and the break-even line said DP-heavy won above 7.2 M.)
  const bool priced = !c.critical_batch_tokens.empty() && three_d.training_tokens > 0;
  for (std::size_t i = 0; i < dp_plans.size(); ++i) {
    if (!dp_plans[i].plan || (!priced && i != dp_pick)) continue;
    const std::int64_t batch = dp_plans[i].plan->layout.global_batch;
    if (std::ranges::any_of(
            three_d_plans,
            [&](const FamilyBest& p) { return p.plan && p.plan->layout.global_batch == batch; }) ||
        batch == three_d.global_batch)
      continue;
    LlmPlanRequest larger = three_d;
    larger.global_batch = batch;
    if (FamilyBest alt = plan_best(larger, cache); alt.plan) three_d_plans.push_back(std::move(alt));
  }
  const std::size_t three_d_pick = pick_of(c, three_d, three_d_plans);
  keep(std::move(dp_plans), dp_pick, cell.dp_heavy, cell.dp_heavy_faster_estimate, cell.dp_heavy_note,
       cell.dp_heavy_refusal, cell.dp_heavy_options);
  keep(std::move(three_d_plans), three_d_pick, cell.three_d, cell.three_d_faster_estimate, cell.three_d_note,
       cell.three_d_refusal, cell.three_d_options);
  times_to_train(c, three_d, cell.three_d_options, cell.three_d_ttt, cell.three_d_ttt_batch);
  times_to_train(c, dp_heavy, cell.dp_heavy_options, cell.dp_heavy_ttt, cell.dp_heavy_ttt_batch);
  return cell;
}

}  // namespace

LlmStudyResult run_llm_study(const LlmStudyConfig& c, const LlmStudyRunOptions& o) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  LlmStudyResult result{.config = c};
  StepCache cache;
  // The whole study's progress with an estimated end: its cells weighted by their GPUs (a cell's
  // planning and simulation grow with them), each told a third at a time as its plans are found.
  double total = 0, done = 0;
  for (const int gpus : c.gpus) total += static_cast<double>(gpus);
  total *= static_cast<double>(c.models.size() * c.clusters.size() * c.ib_bandwidths.size());
  ProgressEstimate whole(o.progress, "llm study", total, "GPUs of its cells");
  for (const std::string& model : c.models)
    for (const std::string& cluster : c.clusters)
      for (const std::string& ib : c.ib_bandwidths)
        for (const int gpus : c.gpus) {
          const auto began = Clock::now();
          const std::string what = model + " " + cluster + " " + ib + " " + std::to_string(gpus) + " GPUs";
          const auto told = [&](int k) { whole.advance(done + gpus * k / 3.0, what); };
          result.cells.push_back(
              plan_cell(c, o, {.model = model, .cluster = cluster, .ib = ib, .gpus = gpus}, cache, told));
          done += gpus;
          whole.advance(done, what + " done");
          // Each cell's own wall time, so that a slow one shows (progress only: the table is the same
          // bytes each run).
          if (o.progress)
            *o.progress << "llm study: " << model << " " << cluster << " " << ib << " " << gpus << " GPUs, "
                        << format_fixed(std::chrono::duration<double>(Clock::now() - began).count(), 2)
                        << " s\n";
        }
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace hybridsim::analysis

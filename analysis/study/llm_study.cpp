#include "analysis/study/llm_study.h"

#include <chrono>
#include <functional>

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

// The family's time to train under each critical batch (0 without a plan or published run).
std::vector<double> times_to_train(const LlmStudyConfig& c, const LlmPlanRequest& r,
                                   const std::optional<LlmPlanCandidate>& best) {
  std::vector<double> out;
  for (const double critical : c.critical_batch_tokens) {
    const double batch = best ? static_cast<double>(best->layout.global_batch * r.setting.model.sequence) : 0;
    out.push_back(best && r.training_tokens > 0
                      ? llm_tokens_to_train(r, critical, batch) / best->tokens_per_second
                      : 0.0);
  }
  return out;
}

// Whether `a` trains faster than `b` at the first critical batch (has more tokens/s when none is stated).
bool faster(const LlmStudyConfig& c, const LlmPlanRequest& r, const LlmPlanCandidate& a,
            const LlmPlanCandidate& b) {
  if (c.critical_batch_tokens.empty() || r.training_tokens <= 0)
    return a.tokens_per_second > b.tokens_per_second;
  return times_to_train(c, r, a)[0] < times_to_train(c, r, b)[0];
}

// A family's best plan, or why it has none: the planner's refusal, whose kind (not its message)
// the table's verdict and the larger batch below follow.
struct FamilyBest {
  std::optional<LlmPlanCandidate> plan{};
  std::optional<LlmPlanCandidate> faster_estimate{};  // see LlmStudyCell::dp_heavy_faster_estimate
  std::string note{};
  std::optional<LlmPlanRefusal> refusal{};  // empty with a note: failed otherwise
  std::vector<std::int64_t> batches{};      // those above the published one it chose among (best_of)
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
// the batch), its best at the batch above it that trains fastest at every critical batch: of the
// smallest each of its replica counts takes (batches_above), the one whose best step by the closed
// form is shortest (a larger batch with a shorter step takes no more steps, each shorter; a smaller
// one with a shorter step, fewer steps). The critical batch then prices its tokens. (It was the
// smallest multiple of GPUs / gpus-per-machine, the published batch itself at 12 GPUs of 8 a machine:
// "no layout"; the smallest batch with a layout alone, 513 there, is dp 3 tp 4's 105.9 s step, where
// 516 has dp 12's 57.3 s.)
FamilyBest best_of(LlmPlanRequest r, StepCache& cache) {
  FamilyBest best = plan_best(r, cache);
  if (best.plan || best.refusal != LlmPlanRefusal::NoLayout) return best;
  const std::vector<std::int64_t> batches =
      batches_above(r.dimensions, {r.setting, r.gpus, r.machine.gpus_per_machine, r.global_batch});
  if (batches.empty()) return best;
  std::int64_t chosen = batches.front();  // where none fits: its refusal
  double shortest = 0;
  for (const std::int64_t batch : batches) {
    LlmPlanRequest at = r;
    at.global_batch = batch;
    std::size_t enumerated = 0;
    const std::vector<LlmPlanCandidate> fitting = llm_fitting_candidates(at, &enumerated);
    if (fitting.empty() || (shortest > 0 && fitting.front().estimate.step() >= shortest)) continue;
    shortest = fitting.front().estimate.step();
    chosen = batch;
  }
  r.global_batch = chosen;
  FamilyBest raised = plan_best(r, cache);
  raised.batches = batches;
  return raised;
}

void keep(FamilyBest best, std::optional<LlmPlanCandidate>& plan, std::optional<LlmPlanCandidate>& faster,
          std::string& note, std::optional<LlmPlanRefusal>& refusal) {
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
              "or above it the one of the shortest step of the smallest each replica count takes; the "
              "study file cannot set it)",
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
  keep(best_of(three_d, cache), cell.three_d, cell.three_d_faster_estimate, cell.three_d_note,
       cell.three_d_refusal);
  told(1);
  FamilyBest dp_best = best_of(dp_heavy, cache);
  std::vector<std::int64_t> larger_batches = dp_best.batches;
  // Without a critical batch to price them, tokens/s would favour the largest: DP-heavy's batch only.
  if ((c.critical_batch_tokens.empty() || three_d.training_tokens <= 0) && dp_best.plan)
    larger_batches = {dp_best.plan->layout.global_batch};
  keep(std::move(dp_best), cell.dp_heavy, cell.dp_heavy_faster_estimate, cell.dp_heavy_note,
       cell.dp_heavy_refusal);
  told(2);
  // Where DP-heavy had to take a larger batch, 3D may take one too (a fixed batch starves a pipeline
  // of micro-batches): 3D's best plan of the published batch and each DP-heavy chose among (not only
  // DP-heavy's: GPT-3's on 16,384 H100 is 4,096 sequences, 3D's best 2,048), by time to train at the
  // first critical batch.
  for (const std::int64_t batch : larger_batches) {
    if (!cell.dp_heavy || batch == three_d.global_batch) break;
    LlmPlanRequest larger = three_d;
    larger.global_batch = batch;
    if (const FamilyBest alt = best_of(larger, cache);
        alt.plan && (!cell.three_d || faster(c, larger, *alt.plan, *cell.three_d))) {
      cell.three_d = alt.plan;
      cell.three_d_faster_estimate = alt.faster_estimate;
    }
  }
  cell.three_d_ttt = times_to_train(c, three_d, cell.three_d);
  cell.dp_heavy_ttt = times_to_train(c, dp_heavy, cell.dp_heavy);
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

#include "analysis/study/llm_study.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <ostream>
#include <tuple>

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
    const double batch =
        best ? static_cast<double>(best->layout.global_batch * r.setting.model.sequence) : 0;
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

namespace {

// The planner's compact label ("dp 16 tp 4 pp 2 interleaved v4 sp mb 2 full Z3"), with "B 2048" when
// the plan took another batch than the model's published one.
std::string short_label(const LlmStudyCell& cell, const LlmLayout& l) {
  std::string s = layout_label(llm_plan_dimensions(), l, LabelForm::Compact);
  if (l.global_batch != cell.published_batch) s += " B " + std::to_string(l.global_batch);
  return s;
}

// The family's three columns: tokens/s, sim or est, the layout; or why there is none.
std::string family(const LlmStudyCell& cell, const std::optional<LlmPlanCandidate>& c,
                   const std::optional<LlmPlanRefusal>& refusal, int layout_width) {
  char text[200];
  if (!c) {
    const char* why = refusal == LlmPlanRefusal::NothingFits ? "none fits"
                      : refusal == LlmPlanRefusal::NoLayout  ? "no layout"
                                                             : "failed";
    std::snprintf(text, sizeof text, "%11s %-4s %-*s", "-", "-", layout_width, why);
    return text;
  }
  std::snprintf(text, sizeof text, "%11s %-4s %-*s", format_count(std::llround(c->tokens_per_second)).c_str(),
                c->simulated() ? "sim" : "est", layout_width, short_label(cell, c->layout).c_str());
  return text;
}

// "64, 4096 and 16384" (GPU counts as the table prints them).
std::string count_list(const std::vector<int>& gpus) {
  std::string s;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    s += (i == 0 ? "" : i + 1 == gpus.size() ? " and " : ", ") + std::to_string(gpus[i]);
  return s;
}

// "50 GB/s a NIC port (48 GB/s a GPU)": the study file's rate and what it carries for a GPU.
std::string ib_words(const LlmStudyCell& c) { return c.ib + " a NIC port (" + c.ib_per_gpu + " a GPU)"; }

// Per model, machine and bandwidth: where the best 3D plan trains at least 5% faster than the best
// DP-heavy one (the cells come in that order, GPU counts innermost). "From N GPUs" only when it
// holds at every compared count from N on; counts below N where it holds too are named, and where
// it does not hold at the largest count the verdict lists the counts instead, so that it never
// says more than the rows above it show.
void print_stops_paying(const LlmStudyResult& r, std::ostream& out) {
  for (std::size_t i = 0; i < r.cells.size(); i += r.config.gpus.size()) {
    const LlmStudyCell& head = r.cells[i];
    std::vector<int> compared, paying, open;
    bool all_simulated = true;
    for (std::size_t j = i; j < i + r.config.gpus.size() && j < r.cells.size(); ++j) {
      const LlmStudyCell& c = r.cells[j];
      if (!c.dp_heavy || !c.three_d) continue;
      compared.push_back(c.gpus);
      if (c.dp_heavy_faster_estimate || c.three_d_faster_estimate) open.push_back(c.gpus);
      if (llm_three_d_advantage(r, c) < 1.05) continue;
      paying.push_back(c.gpus);
      all_simulated = all_simulated && c.three_d->simulated() && c.dp_heavy->simulated();
    }
    std::size_t from = compared.size();  // the first of the compared counts' paying tail
    while (from > 0 && std::find(paying.begin(), paying.end(), compared[from - 1]) != paying.end()) --from;
    std::string where;
    if (compared.empty()) {
      where = "no GPU count with both families";
    } else if (paying.empty()) {
      where = "not within the grid";
    } else if (from < compared.size()) {
      const std::vector<int> before(paying.begin(),
                                    std::find(paying.begin(), paying.end(), compared[from]));
      where = "from " + std::to_string(compared[from]) + " GPUs" +
              (before.empty() ? "" : ", and at " + count_list(before) + " GPUs");
    } else {
      where = "at " + count_list(paying) + " GPUs, not at " + std::to_string(compared.back());
    }
    if (!paying.empty() && !all_simulated) where += " (estimated, not simulated)";
    if (!open.empty())
      where += " (at " + count_list(open) +
               " GPUs a layout not simulated may beat a family's simulated best: see its line above)";
    out << "DP-heavy stops paying, " << head.model << " on " << head.cluster << " at " << ib_words(head)
        << ": " << where << "\n";
  }
}

// Each simulated best that a layout of its family, estimated and not simulated, may beat by the
// closed form (hunt6: a study's verdict rested on a second-best row without a word).
void print_faster_estimates(const LlmStudyResult& r, std::ostream& out) {
  for (const LlmStudyCell& c : r.cells)
    for (const auto& [family, plan, faster] :
         {std::tuple{"DP-heavy", &c.dp_heavy, &c.dp_heavy_faster_estimate},
          std::tuple{"3D", &c.three_d, &c.three_d_faster_estimate}}) {
      if (!*plan || !*faster) continue;
      out << family << ", " << c.model << " on " << c.gpus << " GPUs of " << c.cluster << " at "
          << ib_words(c) << ": " << short_label(c, (*faster)->layout) << ", not simulated ("
          << (*faster)->estimated_only << "), may be faster than the simulated row: "
          << format_count(std::llround((*faster)->tokens_per_second))
          << " tokens/s by its closed form against " << format_count(std::llround((*plan)->tokens_per_second))
          << "\n";
    }
}

// Per critical batch, the headline bandwidth's time to train of each family.
void print_times_to_train(const LlmStudyResult& r, std::ostream& out) {
  const auto& crit = r.config.critical_batch_tokens;
  if (crit.empty()) return;
  out << "\ntime to train (headline bandwidth; Kaplan et al.'s trade-off, critical batch in tokens):\n";
  for (const LlmStudyCell& c : r.cells) {
    if (c.ib != r.config.ib_bandwidths.front()) continue;
    out << "  " << c.model << " " << c.cluster << " " << c.gpus << " GPUs:";
    for (std::size_t i = 0; i < crit.size(); ++i) {
      // The pair in one unit (hunt42 saw "2.4 d" beside "44.0 h").
      const double dp_heavy = c.dp_heavy_ttt[i], three_d = c.three_d_ttt[i];
      const auto [dp_text, three_d_text] = format_durations_alike(dp_heavy, three_d);
      out << (i ? ";" : "") << " B_crit " << format_count(std::llround(crit[i])) << ": DP-heavy "
          << (dp_heavy > 0 ? dp_text : "-") << ", 3D " << (three_d > 0 ? three_d_text : "-");
    }
    out << "\n";
  }
}

// Where the families train at different batches (DP-heavy past its replicas' batch), the critical
// batch at which their times to train are equal: with E(B) ~ 1 + B / B_crit (Kaplan et al.), the
// family with more tokens/s wins above it and the one with the smaller batch below it.
void print_break_even(const LlmStudyResult& r, std::ostream& out) {
  for (const LlmStudyCell& c : r.cells) {
    if (!c.dp_heavy || !c.three_d || c.ib != r.config.ib_bandwidths.front()) continue;
    const double bd = static_cast<double>(c.dp_heavy->layout.global_batch * c.sequence);
    const double b3 = static_cast<double>(c.three_d->layout.global_batch * c.sequence);
    if (bd == b3) continue;
    const double rd = c.dp_heavy->tokens_per_second, r3 = c.three_d->tokens_per_second;
    const double critical = (b3 / r3 - bd / rd) / (1 / rd - 1 / r3);
    // As B_crit grows the family with more tokens/s wins; as it shrinks, the one with the shorter step
    // (the number of steps to train no longer depends on the batch): a crossing only when they differ.
    const char* fast = rd > r3 ? "DP-heavy" : "3D";
    const char* other = rd > r3 ? "3D" : "DP-heavy";
    out << "break-even, " << c.model << " on " << c.gpus << " GPUs of " << c.cluster << " (DP-heavy at "
        << format_count(std::llround(bd)) << " tokens a batch, 3D at " << format_count(std::llround(b3))
        << "): ";
    if (std::isfinite(critical) && critical > 0)
      out << "critical batch " << format_count(std::llround(critical)) << " tokens; " << fast
          << " trains faster above it, " << other << " below\n";
    else
      out << fast << " trains faster at every critical batch\n";
  }
}

}  // namespace

// Time to train at the headline critical batch when one is stated (it prices a larger batch), else
// tokens/s: how much faster the best 3D plan is than the best DP-heavy one (0: not both).
double llm_three_d_advantage(const LlmStudyResult& r, const LlmStudyCell& c) {
  if (!c.dp_heavy || !c.three_d) return 0;
  if (!r.config.critical_batch_tokens.empty() && c.three_d_ttt[0] > 0 && c.dp_heavy_ttt[0] > 0)
    return c.dp_heavy_ttt[0] / c.three_d_ttt[0];
  return c.three_d->tokens_per_second / c.dp_heavy->tokens_per_second;
}

void print_llm_table(const LlmStudyResult& r, std::ostream& out) {
  out << r.config.title << "\n"
      << "tokens/s of each family's best plan by the planner, each model at its published global batch (\"B "
         "n\": above it where none of the family's layouts takes it, of the smallest batches each replica "
         "count "
         "takes the one whose step is shortest by the closed form)\n"
      << "sim: simulated; est: estimated, not simulated (its step would simulate past the planner's events "
         "budget), the closed form's tokens/s\n"
      << "3D/DP: time to train at the first critical batch, DP-heavy's over 3D's (tokens/s when none is "
         "stated)\n"
      << "IB port: InfiniBand per NIC port (the study file's ib_bandwidths); IB/GPU: what it carries for a "
         "GPU when all send at once, the machine's NICs, each at the lesser of its port and its PCIe link, "
         "over its GPUs\n\n";
  char line[640];
  std::snprintf(line, sizeof line, "%-10s %-9s %-9s %-9s %6s  %-45s %-67s %5s\n", "model", "machine",
                "IB port", "IB/GPU", "GPUs", "DP-heavy: tokens/s, basis, layout",
                "3D: tokens/s, basis, layout", "3D/DP");
  out << line;
  for (const LlmStudyCell& c : r.cells) {
    const double advantage = llm_three_d_advantage(r, c);
    std::snprintf(line, sizeof line, "%-10s %-9s %-9s %-9s %6d  %s %s %5s\n", c.model.c_str(),
                  c.cluster.c_str(), c.ib.c_str(), c.ib_per_gpu.c_str(), c.gpus,
                  family(c, c.dp_heavy, c.dp_heavy_refusal, 28).c_str(),
                  family(c, c.three_d, c.three_d_refusal, 50).c_str(),
                  advantage > 0 ? format_fixed(advantage, 2).c_str() : "-");
    out << line;
  }
  out << "\n";
  for (const LlmStudyCell& c : r.cells) {
    if (c.ib != r.config.ib_bandwidths.front()) continue;
    if (!c.dp_heavy_note.empty())
      out << "DP-heavy, " << c.model << " on " << c.gpus << " GPUs of " << c.cluster << ": "
          << c.dp_heavy_note << "\n";
    if (!c.three_d_note.empty())
      out << "3D, " << c.model << " on " << c.gpus << " GPUs of " << c.cluster << ": " << c.three_d_note
          << "\n";
  }
  print_faster_estimates(r, out);
  print_stops_paying(r, out);
  print_break_even(r, out);
  print_times_to_train(r, out);
}

void print_llm_study(const LlmStudyResult& r, std::ostream& out) {
  print_llm_table(r, out);
  std::size_t simulated = 0, estimated = 0;
  for (const LlmStudyCell& c : r.cells)
    for (const auto* f : {&c.dp_heavy, &c.three_d})
      if (*f) ++((*f)->simulated() ? simulated : estimated);
  // No wall time here (the goldens pin these bytes): the study command prints it with the progress.
  out << "study: " << r.cells.size() << " cells, " << simulated << " best plans simulated, " << estimated
      << " estimated\n";
}

}  // namespace hybridsim::analysis

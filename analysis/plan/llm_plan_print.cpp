// The transformer plan as text: what was searched and how it was pruned, the ranking, and why the
// best wins.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/plan/llm_planner.h"
#include "analysis/study/study_report.h"
#include "sim/budget.h"
#include "topology/preset_registry.h"
#include "workloads/program/strategy_label.h"

namespace hybridsim::analysis {
namespace {

// "1 layout", "2 layouts".
std::string counted(std::size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

// What the estimated rows were over, the events budget as the user set it: "2e7 events a step (the
// default; --max-events N) or --max-sim-memory", "1 event a step (--max-events 1) or ...". The
// budget's count alone read "1 events a step", and said nothing of where it came from.
std::string budget_text(const LlmPlanRequest& q) {
  const std::string& option = q.names.max_events;
  const std::string given = q.events_budget_given.empty() ? "the default; " + option + " N"
                                                          : option + " " + q.events_budget_given;
  if (q.events_budget_count == 0) return q.names.max_sim_memory + " (no events limit: " + given + ")";
  const std::uint64_t n = q.events_budget_count;
  return "budget of " + sim::BudgetExceeded::count_text(n) + (n == 1 ? " event" : " events") + " a step (" +
         given + ") or " + q.names.max_sim_memory;
}

void print_header(const LlmPlanResult& r, std::ostream& out) {
  const LlmPlanRequest& q = r.request;
  const auto seq = q.setting.model.sequence;
  out << "plan: " << r.model << " on " << workloads::gpus_text(r.gpus) << " of " << q.cluster.preset
      << " machines (" << infiniband_words(q.cluster) << "), global batch " << format_count(q.global_batch)
      << " sequences (" << format_count(q.global_batch * seq) << " tokens)\n";
  if (r.by_time_to_train)
    out << "ranked by time to train: critical batch " << format_count(std::llround(*q.critical_batch_tokens))
        << " tokens (Kaplan et al. 2020), " << format_fixed(q.training_tokens / 1e9, 0) << " B tokens at "
        << format_count(q.reference_batch * seq) << "-token batches\n";
  else
    out << "ranked by tokens/s (no critical batch given: --critical-batch TOKENS ranks by time to train)\n";
  if (!q.gpu_note.empty()) out << "GPU mismatch: " << q.gpu_note << "\n";
  out << "GPU memory " << workloads::format_gib(q.memory.bytes) << " (" << q.memory.source << "); searched:";
  std::string off;
  for (const PlanDimension& d : q.dimensions) {
    if (d.enabled) out << " " << d.name;
    else off += " " + std::string(d.name);
  }
  if (!off.empty()) out << "; not searched:" << off;
  out << "\n"
      << counted(r.enumerated, "layout") << ", " << r.fitting << (r.fitting == 1 ? " fits" : " fit")
      << " in memory; of the best by the closed-form estimate, " << r.simulated_rows() + r.skipped.size()
      << " simulated";
  if (r.estimated > 0)
    out << ", " << r.estimated << " estimated, not simulated (over the plan's " << budget_text(q)
        << ", or their programs too large to build within it; each says why: "
        << (r.simulated_rows() > 0 ? "listed apart, not ranked against the simulated)"
                                   : "ranked by their closed form, an estimate)");
  out << "\n\n";
}

// A row's layout, and its stages' layers where pp does not divide them (the run splits them so):
// "dp 128 tp 8 pp 16 ... (stages of 7, 8 x14, 7 layers)".
std::string row_label(const LlmPlanResult& r, const LlmLayout& layout) {
  const std::string split = llm_stage_split_text(r.request.setting, layout);
  return layout_label(r.request.dimensions, layout) + (split.empty() ? "" : " (" + split + ")");
}

// The table's rows [from, to) of r.ranked: numbered from 1 when `numbered` (the ranking), else
// "-" (estimated rows listed apart from the simulated ranking).
void print_rows(const LlmPlanResult& r, std::size_t from, std::size_t to, bool numbered, std::ostream& out) {
  // The layout column as wide as the longest label printed (every row searched can be ~90 columns),
  // so that the numbers stay under their headings.
  int width = 6;
  for (std::size_t i = from; i < to; ++i)
    width = std::max(width, static_cast<int>(row_label(r, r.ranked[i].layout).size()));
  std::vector<char> line(static_cast<std::size_t>(width) + 128);
  std::snprintf(line.data(), line.size(), "%-4s %-*s %9s %9s %12s %9s %11s %9s\n", "rank", width, "layout",
                "step s", "est. s", "tokens/s", "TFLOP/s", "to train", "peak GiB");
  if (!numbered) std::copy_n("-   ", 4, line.data());  // listed, not ranked
  out << line.data();
  const auto& model = r.request.setting.model;
  for (std::size_t i = from; i < to; ++i) {
    const LlmPlanCandidate& c = r.ranked[i];
    const bool full = c.layout.recompute == workloads::Recompute::Full;
    // Model TFLOP/s per GPU as Narayanan et al. count them (recomputation included): a sequence's
    // FLOPs (linear in the batch) times the batch, in double: Llama 3 405B's 512 sequences are about
    // 1e19 FLOPs, past int64 (the column printed -60.1 TFLOP/s).
    const double flop =
        workloads::model_flop_per_iteration(model, 1, full) * static_cast<double>(c.layout.global_batch);
    const double tflops = flop / c.step_seconds() / r.gpus / 1e12;
    const std::string gib = workloads::format_gib(c.memory.total());
    const std::string rank = numbered ? std::to_string(i - from + 1) : "-";
    // An estimated row has no simulated step: its step column says so, its rates are the estimate's.
    std::snprintf(line.data(), line.size(), "%-4s %-*s %9s %9s %12s %9s %11s %9s\n", rank.c_str(), width,
                  row_label(r, c.layout).c_str(),
                  c.simulated() ? format_fixed(c.step_seconds(), 3).c_str() : "estimated",
                  format_fixed(c.estimate.step(), 3).c_str(),
                  format_count(std::llround(c.tokens_per_second)).c_str(), format_fixed(tflops, 1).c_str(),
                  c.time_to_train_seconds ? format_duration(*c.time_to_train_seconds).c_str() : "-",
                  gib.substr(0, gib.size() - 4).c_str());
    out << line.data();
  }
}

// "0.967-0.985 of the simulated step on the 3 simulated rows here" (one figure where they agree).
std::string ratio_text(const LlmPlanResult& r) {
  const std::optional<LlmClosedFormRatio> ratio = llm_closed_form_ratio(r);
  if (!ratio) return {};
  const std::string least = format_fixed(ratio->least, 3), largest = format_fixed(ratio->largest, 3);
  return (least == largest ? least : least + "-" + largest) + " of the simulated step on the " +
         (r.simulated_rows() == 1 ? std::string("simulated row")
                                  : counted(r.simulated_rows(), "simulated row")) +
         " here";
}

// The plan's metric as a figure: "41.283 s a step, 397,015 tokens/s" (and the time to train).
std::string figures(const LlmPlanCandidate& c) {
  return format_fixed(c.step_seconds(), 3) + " s a step, " + format_count(std::llround(c.tokens_per_second)) +
         " tokens/s" +
         (c.time_to_train_seconds ? ", " + format_duration(*c.time_to_train_seconds) + " to train"
                                  : std::string());
}

// The estimated rows after the simulated ranking: under their own heading, each with its closed
// form and the cap that keeps it from being simulated, and one plain line where any of them beats
// the best simulated row by its closed form.
void print_estimated_apart(const LlmPlanResult& r, std::size_t shown, std::ostream& out) {
  const std::size_t from = r.simulated_rows(), to = std::min(r.ranked.size(), from + shown);
  out << "\nestimated, not simulated: " << counted(r.estimated, "layout")
      << " by their closed form, listed apart, not ranked against the simulated rows above (the closed form "
         "ran "
      << ratio_text(r) << ")";
  if (to - from < r.estimated) out << "; the first " << to - from << " shown (--top)";
  out << "\n";
  print_rows(r, from, to, false, out);
  out << "\n";
  if (const std::size_t faster = llm_estimated_faster(r); faster > 0)
    out << counted(faster, "estimated layout") << " may be faster than #1 by "
        << (faster == 1 ? "its" : "their") << " closed form (which ran " << ratio_text(r)
        << "): raise the cap " << (faster == 1 ? "its line names" : "each line names")
        << " below to simulate " << (faster == 1 ? "it" : "them") << "\n";
  for (std::size_t i = from; i < to; ++i)
    out << layout_label(r.request.dimensions, r.ranked[i].layout) << ": " << r.ranked[i].why << "\n";
}

}  // namespace

void print_llm_plan(const LlmPlanResult& r, std::ostream& out, int top) {
  print_header(r, out);
  const std::size_t shown = static_cast<std::size_t>(std::max(top, 1));
  // The ranking: the simulated rows, or, where none could be simulated, the estimates as estimates.
  const std::size_t ranked = r.simulated_rows() > 0 ? r.simulated_rows() : r.ranked.size();
  const std::size_t n = std::min(ranked, shown);
  print_rows(r, 0, n, true, out);
  out << "\n";
  const LlmPlanCandidate& best = r.ranked.front();
  const std::string label = row_label(r, best.layout);
  if (r.simulated_rows() > 0)
    out << "best: #1 " << label << ", simulated: " << figures(best) << "\n";
  else
    out << "best by the closed form, an estimate (no layout could be simulated within the plan's caps): #1 "
        << label << ", estimated: " << figures(best) << "\n";
  for (std::size_t i = 0; i < n && i < 5; ++i) out << "#" << i + 1 << " " << r.ranked[i].why << "\n";
  if (r.simulated_rows() > 0 && r.estimated > 0) print_estimated_apart(r, shown, out);
  if (r.estimated > 0)
    out << "estimated rows (\"estimated\" in the step column) were not simulated: their tokens/s, TFLOP/s "
           "and time to train are the closed form's, not the simulator's\n";
  for (const auto& s : r.skipped) out << "failed: " << s << "\n";
}

}  // namespace hybridsim::analysis

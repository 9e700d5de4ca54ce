// The break-even figures in words, shared by the terminal table and the Markdown report.
#include "analysis/study/study_report.h"
#include "analysis/study/study_report_detail.h"

#include <algorithm>

namespace hybridsim::analysis::study_detail {
namespace {

std::string factor(double f) { return "x" + format_fixed(f, 2); }
std::string ms(sim::Time t) { return format_fixed(t.to_ms(), 1); }
std::string memory_name(const StudyResult& result) {
  return result.memory ? workloads::format_gib(result.memory->bytes) : std::string("memory");
}

}  // namespace

bool memory_shapes_break_even(const StudyVariant& v) {
  // Only memory that leaves a row out can shape it (a grid without a hybrid has no best hybrid
  // whatever the memory).
  const bool unfit =
      std::any_of(v.rows.begin(), v.rows.end(), [](const StudyRow& r) { return !r.does_not_fit.empty(); });
  const StudyBreakEven& be = v.break_even;
  return unfit && (be.best_dp < 0 || be.best_hybrid < 0 || be.dp_peak == DpPeak::MemoryEdge);
}

BreakEvenText break_even_text(const StudyResult& result, const StudyVariant& variant,
                              const StudyBreakEven& be) {
  BreakEvenText t;
  if (be.best_dp < 0) {
    t.peak = "no DP configuration fits in " + memory_name(result);
    return t;
  }
  const StudyRow& dp = variant.row(be.best_dp);
  const std::string e2e = factor(dp.e2e_speedup) + " vs 1 GPU";
  switch (be.dp_peak) {
    case DpPeak::GridEdge:
      t.peak = "DP's end-to-end speedup is still improving at " + std::to_string(dp.gpus) +
               " GPUs, the grid's edge (" + e2e + ")";
      break;
    case DpPeak::MemoryEdge:
      t.peak = "DP's end-to-end speedup is still improving at " + std::to_string(dp.gpus) +
               " GPUs, the largest DP that fits in " +
               memory_name(result) + " (" + e2e + ")";
      break;
    case DpPeak::Peaked: {
      const StudyRow& past = variant.row(be.dp_past_peak);
      t.peak = "DP's end-to-end speedup stops growing at " + std::to_string(dp.gpus) + " GPUs (" + e2e +
               "; " + std::to_string(past.gpus) + " GPUs: " + factor(past.e2e_speedup) + ")";
      break;
    }
    case DpPeak::None:
      break;
  }
  if (be.hybrid_upto_peak >= 0) {
    const StudyRow& hy = variant.row(be.hybrid_upto_peak);
    t.gain = "hybrid's gain there " + format_percent(be.gain_at_peak) + " (best hybrid on at most " +
             std::to_string(dp.gpus) + " GPUs: " + strategy(hy) + " on " + std::to_string(hy.gpus) +
             " GPUs, " + format_durations_alike(hy.ttt.seconds, dp.ttt.seconds).first + " against DP's " +
             format_durations_alike(hy.ttt.seconds, dp.ttt.seconds).second + ")";
  } else {
    t.gain = "no hybrid on at most " + std::to_string(dp.gpus) + " GPUs";
  }
  if (be.best_hybrid < 0) return t;
  const StudyRow& hy = variant.row(be.best_hybrid);
  const sim::Time step_at_tie = sim::Time::from_seconds(hy.step.step_time.to_seconds() * be.step_factor);
  const std::string steps = " (" + strategy(hy) + " on " + std::to_string(hy.gpus) + " GPUs: " +
                            ms(hy.step.step_time) + " -> " + ms(step_at_tie) + " ms a step)";
  t.step = be.step_factor < 1
               ? "hybrid wins with steps more than " + factor(1 / be.step_factor) + " faster" + steps
               : "hybrid wins until its steps are " + factor(be.step_factor) + " slower" + steps;
  const std::string batch = "at B = " + format_count(be.epochs_batch);
  const bool ahead = be.step_factor > 1;
  if (!be.epochs_factor) {
    t.epochs = ahead
                   ? "hybrid wins however few epochs " + batch +
                         " needs (a hybrid of that batch steps faster than DP)"
                   : "no epochs count " + batch + " alone flips it (DP on other GPU counts beats hybrid too)";
  } else {
    const double f = *be.epochs_factor;
    const std::string values =
        " (" + format_fixed(be.epochs_now, 1) + " -> " + format_fixed(be.epochs_now * f, 1) + " epochs)";
    t.epochs = ahead ? "hybrid wins unless DP needs at most " + factor(f) + " the epochs " + batch + values
                     : "hybrid wins if DP needs more than " + factor(f) + " the epochs " + batch + values;
  }
  return t;
}

}  // namespace hybridsim::analysis::study_detail

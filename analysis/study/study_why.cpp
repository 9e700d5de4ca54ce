// The report's explanations: which term decides the comparison of the best hybrid and the best DP
// (epochs to target vs time per epoch), and how data parallelism alone scales.
#include <cmath>

#include "analysis/study/study_report.h"
#include "analysis/study/study_report_detail.h"

namespace hybridsim::analysis::study_detail {
namespace {

std::string ms(sim::Time t) { return format_fixed(t.to_ms(), 1) + " ms"; }

double epoch_seconds(const StudyRow& r) { return r.ttt.steps_per_epoch * r.step.step_time.to_seconds(); }

std::string describe_row(const StudyRow& r) {
  std::string s = std::to_string(r.gpus) + " GPUs (" +
                  (r.is_dp() ? "DP" : "dp " + std::to_string(r.dp) + " x mp " + std::to_string(r.mp)) +
                  "): global batch " + format_count(r.ttt.global_batch) + ", step " + ms(r.step.step_time) +
                  " (critical GPU: " + ms(r.step.critical.compute) + " compute, " +
                  ms(r.step.critical.exposed_communication) + " exposed communication";
  if (r.step.critical.idle > sim::Time::zero()) s += ", " + ms(r.step.critical.idle) + " idle";
  s += "), " + format_fixed_nonzero(r.ttt.epochs, 1) + (r.ttt.extrapolated ? "* " : " ") + "epochs of " +
       format_steps_per_epoch(r.ttt) + " steps, one epoch " + format_duration(epoch_seconds(r)) +
       ", time to train " + format_duration(r.ttt.seconds);
  return s;
}

std::string compare(const StudyRow& dp, const StudyRow& hy) {
  // time to train = epochs × (steps per epoch × step time): the ratio DP / hybrid splits exactly
  // into the epochs ratio (statistical efficiency) and the epoch-time ratio (hardware efficiency).
  const double epochs = dp.ttt.epochs / hy.ttt.epochs;
  const double epoch_time = epoch_seconds(dp) / epoch_seconds(hy);
  const double total = dp.ttt.seconds / hy.ttt.seconds;
  std::string s =
      "DP needs x" + format_fixed(epochs, 2) + " the epochs of hybrid (statistical efficiency: its " +
      "global batch is x" +
      format_fixed(static_cast<double>(dp.ttt.global_batch) / static_cast<double>(hy.ttt.global_batch), 2) +
      " larger), and one DP epoch takes x" + format_fixed(epoch_time, 2) +
      " the time of a hybrid epoch (hardware efficiency); together DP / hybrid = x" + format_fixed(total, 3) +
      ", so hybrid is " +
      (total >= 1 ? format_fixed(100 * (total - 1), 1) + "% faster (time to train). "
                  : format_fixed(100 * (1 - total), 1) + "% slower (time to train). ");
  const double le = std::abs(std::log(epochs));
  const double lt = std::abs(std::log(epoch_time));
  if (total >= 1)
    s += epoch_time >= 1 ? "Both terms favour hybrid."
                         : "Hybrid wins on epochs, which outweigh its slower epochs.";
  else
    s += epochs <= 1 ? "Both terms favour DP."
                     : (lt > le ? "Hybrid's slower epochs outweigh its fewer epochs: the per-step "
                                  "MP speedup is too small for the batch it gives up."
                                : "Hybrid needs fewer epochs, but not enough to pay for its slower epochs.");
  return s;
}

}  // namespace

std::string strategy(const StudyRow& row) {
  return row.is_dp() ? "DP" : std::to_string(row.dp) + " x " + std::to_string(row.mp);
}

std::string why_text(const NetworkStudy& study) {
  const StudyVariant& v = study.main();
  const StudyHeadline& h = v.headline;
  std::string out;
  if (h.best_dp >= 0) out += "- Best DP: " + describe_row(v.row(h.best_dp)) + ".\n";
  if (h.best_hybrid >= 0) out += "- Best hybrid: " + describe_row(v.row(h.best_hybrid)) + ".\n";
  if (h.best_dp >= 0 && h.best_hybrid >= 0)
    out += "- Best against best: " + compare(v.row(h.best_dp), v.row(h.best_hybrid)) + "\n";
  if (h.dp_at_max >= 0 && h.hybrid_at_max >= 0 &&
      (h.dp_at_max != h.best_dp || h.hybrid_at_max != h.best_hybrid))
    out += "- At N = " + std::to_string(v.row(h.dp_at_max).gpus) + ": " +
           compare(v.row(h.dp_at_max), v.row(h.hybrid_at_max)) + "\n";
  // DP alone: per-step scaling against end-to-end scaling over the grid.
  const StudyRow* first = nullptr;
  const StudyRow* last = nullptr;
  for (const auto& r : v.rows)
    if (r.is_dp()) {
      if (!first) first = &r;
      last = &r;
    }
  if (first && last && first != last) {
    out += "- DP alone from " + std::to_string(first->gpus) + " to " + std::to_string(last->gpus) +
           " GPUs: per-step speedup vs 1 GPU x" + format_fixed(first->step_speedup, 1) + " -> x" +
           format_fixed(last->step_speedup, 1) + " (ideal x" + std::to_string(last->gpus) +
           "), end to end x" + format_fixed(first->e2e_speedup, 1) + " -> x" +
           format_fixed(last->e2e_speedup, 1) + ": epochs grow from " +
           format_fixed_nonzero(first->ttt.epochs, 1) + " at B = " + format_count(first->ttt.global_batch) +
           " to " + format_fixed_nonzero(last->ttt.epochs, 1) +
           " at B = " + format_count(last->ttt.global_batch) + ", and the step grows from " +
           ms(first->step.step_time) + " to " + ms(last->step.step_time) + " (exposed communication " +
           ms(first->step.critical.exposed_communication) + " -> " +
           ms(last->step.critical.exposed_communication) + ").\n";
  }
  for (const auto& m : v.mp_alone)
    out += "- MP alone, " + std::to_string(m.mp) + " GPUs at the 1-GPU batch: step " + ms(m.step.step_time) +
           " vs " + ms(v.baseline.step.step_time) + " on 1 GPU, per-step speedup x" +
           format_fixed(m.step_speedup, 2) + " (critical GPU " + ms(m.step.critical.compute) + " compute, " +
           ms(m.step.critical.idle) + " idle waiting on its peers, " +
           sim::human_bytes(m.step.mp_cut_bytes) + " of activations cross GPUs each way).\n";
  return out;
}

}  // namespace hybridsim::analysis::study_detail

// Where data parallelism stops paying and how far the study's answer is from flipping, derived
// exactly from the projected rows: time to train T = step time × steps per epoch × epochs(B) is a
// product, so scaling one factor of some rows scales their T by the same factor (analysis/README.md,
// "Break-even", has the derivation).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "analysis/study/study.h"

namespace hybridsim::analysis {
namespace {

constexpr double kNone = std::numeric_limits<double>::infinity();

// The answer when every row of the best DP's batch B* has its epochs × f: the best hybrid is
// min(f·a, c) and the best DP min(f·b, d), where a (b) is the best hybrid (DP) time at B* and c (d)
// the best hybrid (DP) time at every other batch (kNone where there is none).
struct EpochsScaling {
  double a = kNone, b = kNone, c = kNone, d = kNone;
  bool hybrid_wins(double f) const { return std::min(f * a, c) < std::min(f * b, d); }
};

// Each side is linear in f between the points where one of its two terms overtakes the other or the
// other side's (c/b, d/a, c/a, d/b; f·a against f·b never crosses), so who wins is constant between
// consecutive points. From f = 1, walk to the nearest point past which the winner changes: up when
// hybrid is behind (more epochs at B* can only hurt a DP that trains there), down when it is ahead.
std::optional<double> flip_factor(const EpochsScaling& s) {
  std::vector<double> points;
  for (const double p : {s.c / s.b, s.d / s.a, s.c / s.a, s.d / s.b})
    if (std::isfinite(p) && p > 0) points.push_back(p);
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  const bool ahead = s.hybrid_wins(1.0);
  if (!ahead) {
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (points[i] < 1.0) continue;
      const double next = i + 1 < points.size() ? points[i + 1] : 2 * points[i];
      if (s.hybrid_wins((points[i] + next) / 2)) return points[i];
    }
    return std::nullopt;
  }
  for (std::size_t i = points.size(); i-- > 0;) {
    if (points[i] > 1.0) continue;
    const double prev = i > 0 ? points[i - 1] : points[i] / 2;
    if (!s.hybrid_wins((prev + points[i]) / 2)) return points[i];
  }
  return std::nullopt;
}

}  // namespace

StudyBreakEven compute_break_even(const StudyVariant& variant, bool respect_memory) {
  StudyBreakEven be;
  const StudyHeadline h = compute_headline(variant, respect_memory);
  be.best_dp = h.best_dp;
  be.best_hybrid = h.best_hybrid;
  if (h.best_dp < 0) return be;  // DpPeak::None
  const auto& rows = variant.rows;
  const auto counts = [&](const StudyRow& r) { return !respect_memory || r.does_not_fit.empty(); };
  const StudyRow& dp = variant.row(h.best_dp);
  int max_gpus = 0;
  for (const auto& r : rows) max_gpus = std::max(max_gpus, r.gpus);

  // The peak: the best DP, and the next larger DP N that counts.
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const StudyRow& r = rows[static_cast<std::size_t>(i)];
    if (!r.is_dp() || !counts(r) || r.gpus <= dp.gpus) continue;
    if (be.dp_past_peak < 0 || r.gpus < variant.row(be.dp_past_peak).gpus) be.dp_past_peak = i;
  }
  be.dp_peak = be.dp_past_peak >= 0  ? DpPeak::Peaked
               : dp.gpus == max_gpus ? DpPeak::GridEdge
                                     : DpPeak::MemoryEdge;

  // Hybrid's gain at the peak: the best hybrid on at most as many GPUs.
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const StudyRow& r = rows[static_cast<std::size_t>(i)];
    if (r.is_dp() || !counts(r) || r.gpus > dp.gpus) continue;
    if (be.hybrid_upto_peak < 0 || r.ttt.seconds < variant.row(be.hybrid_upto_peak).ttt.seconds)
      be.hybrid_upto_peak = i;
  }
  if (be.hybrid_upto_peak >= 0)
    be.gain_at_peak = dp.ttt.seconds / variant.row(be.hybrid_upto_peak).ttt.seconds - 1;

  be.epochs_batch = dp.ttt.global_batch;
  be.epochs_now = dp.ttt.epochs;
  if (h.best_hybrid < 0) return be;
  // (a) Every hybrid T × s: the best hybrid stays the best hybrid, and ties the best DP at s = T_DP / T_hy.
  be.step_factor = dp.ttt.seconds / variant.row(h.best_hybrid).ttt.seconds;
  // (b) Every row of batch B* has its T × f.
  EpochsScaling s;
  for (const auto& r : rows) {
    if (!counts(r)) continue;
    const bool at_batch = r.ttt.global_batch == be.epochs_batch;
    double& slot = r.is_dp() ? (at_batch ? s.b : s.d) : (at_batch ? s.a : s.c);
    slot = std::min(slot, r.ttt.seconds);
  }
  be.epochs_factor = flip_factor(s);
  return be;
}

}  // namespace hybridsim::analysis

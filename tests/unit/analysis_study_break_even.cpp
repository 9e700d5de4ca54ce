// Where DP stops paying and the break-even conditions (analysis/study/study_break_even.cpp), on
// hand-made study rows: every expected number is derived below from the rows' times to train.
// Rows: 32 samples per data-parallel worker, so DP on N GPUs has B = 32 N and a hybrid dp x mp has
// B = 32 dp.
#include <doctest/doctest.h>

#include <sstream>

#include "analysis/study/study.h"
#include "analysis/study/study_report.h"
#include "analysis/study/study_report_detail.h"

using namespace hybridsim;
using analysis::DpPeak;
using analysis::StudyRow;

namespace {

analysis::StudyVariant variant_of(std::vector<StudyRow> rows) {
  analysis::StudyVariant v(
      "default", {"toy", "custom", "", false, analysis::StatisticalEfficiency::parametric(1, 1, {1, 1})},
      1.0);
  v.rows = std::move(rows);
  return v;
}

// A row of N GPUs, mp GPUs per worker, `seconds` to train, `epochs` at its batch, `step_ms` a step.
StudyRow row(int gpus, int mp, double seconds, double epochs = 1, double step_ms = 100) {
  StudyRow r;
  r.gpus = gpus;
  r.mp = mp;
  r.dp = gpus / mp;
  r.ttt.global_batch = 32 * r.dp;
  r.ttt.seconds = seconds;
  r.ttt.epochs = epochs;
  r.step.step_time = sim::Time::from_seconds(step_ms / 1000);
  r.e2e_speedup = 1000 / seconds;  // against a 1,000 s baseline
  return r;
}

int gpus_of(const analysis::StudyVariant& v, int index) { return index < 0 ? -1 : v.row(index).gpus; }

}  // namespace

TEST_CASE("break-even: DP still improving at the grid's edge, hybrid behind") {
  // DP 100 s at 8 (B 256), 60 s at 16 (B 512, 4 epochs); hybrid 120 s at 8 (B 128), 75 s at 16
  // (8 x 2, B 256, 200 ms a step).
  auto v = variant_of({row(8, 1, 100), row(8, 2, 120), row(16, 1, 60, 4), row(16, 2, 75, 4, 200)});
  const auto be = analysis::compute_break_even(v);
  // Best DP at 16 GPUs, the largest N: still improving at the grid's edge, nothing past it.
  CHECK(be.dp_peak == DpPeak::GridEdge);
  CHECK(gpus_of(v, be.best_dp) == 16);
  CHECK(be.dp_past_peak == -1);
  // Hybrid on at most 16 GPUs: 75 s → gain 60 / 75 − 1 = −20%.
  CHECK(gpus_of(v, be.hybrid_upto_peak) == 16);
  CHECK(be.gain_at_peak == doctest::Approx(-0.2));
  // (a) Hybrid's steps × s tie at s = 60 / 75 = 0.8: 1.25x faster steps (200 → 160 ms).
  CHECK(be.step_factor == doctest::Approx(0.8));
  // (b) B* = 512: DP 60 s there (b), no hybrid at 512 (a), best hybrid elsewhere c = 75, other DP
  // d = 100. Hybrid wins once 60 f > 75 (while 100 > 75): f > 75 / 60 = 1.25, epochs 4 → 5.
  CHECK(be.epochs_batch == 512);
  CHECK(be.epochs_now == doctest::Approx(4));
  REQUIRE(be.epochs_factor.has_value());
  CHECK(*be.epochs_factor == doctest::Approx(1.25));

  analysis::StudyResult result;
  const auto t = analysis::study_detail::break_even_text(result, v, be);
  CHECK(t.peak == "DP's end-to-end speedup is still improving at 16 GPUs, the grid's edge (x16.67 vs 1 GPU)");
  CHECK(t.gain.find("hybrid's gain there -20.0% (best hybrid on at most 16 GPUs: 8 x 2 on 16 GPUs") == 0);
  CHECK(t.step ==
        "hybrid wins with steps more than x1.25 faster (8 x 2 on 16 GPUs: 200.0 -> 160.0 ms a step)");
  CHECK(t.epochs == "hybrid wins if DP needs more than x1.25 the epochs at B = 512 (4.0 -> 5.0 epochs)");
}

TEST_CASE("break-even: DP peaks inside the grid, hybrid ahead beyond it") {
  // DP 100 s at 8, 60 s at 16 (B 512), 70 s at 32: the speedup stops growing at 16. Hybrid 120 s
  // (4 x 2 on 8), 75 s (8 x 2 on 16, B 256), 48 s (8 x 4 on 32, B 256, 250 ms a step).
  auto v = variant_of({row(8, 1, 100), row(8, 2, 120), row(16, 1, 60, 5), row(16, 2, 75), row(32, 1, 70),
                       row(32, 4, 48, 3, 250)});
  const auto be = analysis::compute_break_even(v);
  CHECK(be.dp_peak == DpPeak::Peaked);
  CHECK(gpus_of(v, be.best_dp) == 16);
  CHECK(gpus_of(v, be.dp_past_peak) == 32);
  // Hybrid's gain at the peak counts hybrids on at most 16 GPUs only: 60 / 75 − 1 = −20%, although
  // the best hybrid over the grid (48 s on 32 GPUs) wins.
  CHECK(gpus_of(v, be.hybrid_upto_peak) == 16);
  CHECK(be.gain_at_peak == doctest::Approx(-0.2));
  CHECK(gpus_of(v, be.best_hybrid) == 32);
  // (a) s = 60 / 48 = 1.25: hybrid's steps could be 1.25x slower (250 → 312.5 ms) and still tie.
  CHECK(be.step_factor == doctest::Approx(1.25));
  // (b) B* = 512: b = 60, no hybrid there, c = 48, d = 70. DP wins once 60 f <= 48: f = 0.8, 5 → 4 epochs.
  REQUIRE(be.epochs_factor.has_value());
  CHECK(*be.epochs_factor == doctest::Approx(0.8));
  analysis::StudyResult result;
  const auto t = analysis::study_detail::break_even_text(result, v, be);
  CHECK(t.peak == "DP's end-to-end speedup stops growing at 16 GPUs (x16.67 vs 1 GPU; 32 GPUs: x14.29)");
  CHECK(t.step ==
        "hybrid wins until its steps are x1.25 slower (8 x 4 on 32 GPUs: 250.0 -> 312.5 ms a step)");
  CHECK(t.epochs == "hybrid wins unless DP needs at most x0.80 the epochs at B = 512 (5.0 -> 4.0 epochs)");

  // A hybrid of the best DP's batch with a faster step (16 x 2 on 32 GPUs, B 512, 55 s < 60 s):
  // whatever factor multiplies the epochs at B = 512, min(55 f, 48) < min(60 f, 70) for every f <= 1
  // (55 f < 60 f), so no factor below 1 lets DP win.
  v.rows.push_back(row(32, 2, 55));
  const auto same_batch = analysis::compute_break_even(v);
  CHECK(same_batch.step_factor == doctest::Approx(1.25));
  CHECK_FALSE(same_batch.epochs_factor.has_value());
  CHECK(analysis::study_detail::break_even_text(result, v, same_batch)
            .epochs.find("hybrid wins however few epochs") == 0);
}

TEST_CASE("break-even: no epochs count at the best DP's batch flips it when another DP beats every hybrid") {
  // DP 50 s at 8 (B 256), 40 s at 16 (B 512); hybrid 70 s at 8, 55 s at 16. Raising the epochs at
  // B = 512 makes DP at 16 slower, but DP at 8 (50 s) still beats the best hybrid (55 s): b = 40,
  // c = 55, d = 50, and min(40 f, 50) < 55 for every f.
  const auto v = variant_of({row(8, 1, 50), row(8, 2, 70), row(16, 1, 40), row(16, 2, 55)});
  const auto be = analysis::compute_break_even(v);
  CHECK(be.step_factor == doctest::Approx(40.0 / 55.0));  // steps 1.375x faster would tie
  CHECK_FALSE(be.epochs_factor.has_value());
  analysis::StudyResult result;
  CHECK(analysis::study_detail::break_even_text(result, v, be).epochs ==
        "no epochs count at B = 512 alone flips it (DP on other GPU counts beats hybrid too)");
}

TEST_CASE("break-even: memory leaves DP's largest N out, or every DP") {
  // As the first case, plus DP at 32 GPUs (40 s) that does not fit: left out, the best DP is 16
  // GPUs, the largest DP that fits (memory, not the grid, ends DP's scaling).
  auto v = variant_of({row(8, 1, 100), row(8, 2, 120), row(16, 1, 60, 5), row(16, 2, 75), row(32, 1, 40),
                       row(32, 2, 50)});
  v.rows[4].does_not_fit = "does not fit: GPU 0 needs 17 GiB of 16 GiB";
  const auto be = analysis::compute_break_even(v);
  CHECK(be.dp_peak == DpPeak::MemoryEdge);
  CHECK(gpus_of(v, be.best_dp) == 16);
  v.break_even = be;
  CHECK(analysis::study_detail::memory_shapes_break_even(v));
  // Hybrid on at most 16 GPUs: 75 s, −20%; over the grid 50 s (32 GPUs): s = 60 / 50 = 1.2.
  CHECK(be.gain_at_peak == doctest::Approx(-0.2));
  CHECK(be.step_factor == doctest::Approx(1.2));
  // Memory aside: DP at 32 (40 s) is best, at the grid's edge; hybrid on at most 32 GPUs 50 s:
  // 40 / 50 − 1 = −20%, s = 0.8. (b): B* = 1,024, b = 40, c = 50, d = 60: f = 50 / 40 = 1.25.
  const auto unlimited = analysis::compute_break_even(v, /*respect_memory=*/false);
  CHECK(unlimited.dp_peak == DpPeak::GridEdge);
  CHECK(gpus_of(v, unlimited.best_dp) == 32);
  CHECK(unlimited.gain_at_peak == doctest::Approx(-0.2));
  CHECK(unlimited.step_factor == doctest::Approx(0.8));
  REQUIRE(unlimited.epochs_factor.has_value());
  CHECK(*unlimited.epochs_factor == doctest::Approx(1.25));

  // No DP fits: no peak, no gain, no break-even; the text says so.
  for (auto& r : v.rows)
    if (r.is_dp()) r.does_not_fit = "does not fit";
  const auto none = analysis::compute_break_even(v);
  CHECK(none.dp_peak == DpPeak::None);
  CHECK(none.best_dp == -1);
  CHECK_FALSE(none.epochs_factor.has_value());
  analysis::StudyResult result;
  result.memory = workloads::MemoryCapacity{sim::Bytes::gib(16), "16 GiB"};
  const auto t = analysis::study_detail::break_even_text(result, v, none);
  CHECK(t.peak == "no DP configuration fits in 16 GiB");
  CHECK(t.step.empty());
}

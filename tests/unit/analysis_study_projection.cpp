// The study's projection and headline on cases derived by hand: a toy profile whose simulated steps
// are known exactly, and hand-made rows for the headline's definitions (best against best, gain at
// the largest N, crossover).
#include <doctest/doctest.h>

#include "analysis/study/study.h"
#include "analysis/study/study_report.h"
#include "sim/error.h"
#include "tests/unit/toy_profile.h"

using namespace hybridsim;
using analysis::StudyRow;
using sim::Bytes;
using sim::Time;

namespace {

// Two independent ops ("a", "b": no inputs, no consumers, no parameters), each 1 ms forward and
// 2 ms backward, 32 samples per worker. One GPU runs both: 6 ms. Two GPUs with one op each (mp = 2,
// layers partitioner: one layer per GPU) need no transfer: 3 ms. No parameters: no gradient
// exchange and no optimizer, so a DP step takes 6 ms at any N.
workloads::Profile two_ops() {
  workloads::Profile p = testing::toy_profile();
  for (const char* name : {"a", "b"})
    p.ops.push_back(testing::toy_op(name, {}, Time::ms(1), Time::ms(2), Bytes::of(0)));
  workloads::validate_profile(p);
  return p;
}

analysis::StudyConfig toy_config() {
  analysis::StudyConfig c;
  c.source = "toy";
  // epochs(32) = 2 and epochs(64) = 3 exactly (table points); 1,000 samples per epoch.
  analysis::EfficiencyCurve curve{"toy", "custom", "hand-made", false,
                                  analysis::StatisticalEfficiency::table({{32, 2}, {64, 3}})};
  analysis::StudyNetwork net{.name = "toy",
                             .profile = two_ops(),
                             .profile_source = "test",
                             .partitioner = workloads::Partitioner::Layers,
                             .curve = curve,
                             .sensitivity_curves = {},
                             .dataset = {"toy", "toy set", "sample", 1'000, "test"}};
  c.networks.push_back(std::move(net));
  c.gpus = {2, 4};
  c.mp = {2, 4};
  c.threads = 2;
  c.algorithm = workloads::AllReduceAlgorithm::Ring;  // the rings the expected figures assume
  return c;
}

const StudyRow& find(const analysis::StudyVariant& v, int gpus, int mp) {
  for (const auto& r : v.rows)
    if (r.gpus == gpus && r.mp == mp) return r;
  FAIL("no row for N = " << gpus << ", mp = " << mp);
  return v.rows.front();
}

}  // namespace

TEST_CASE("study projection: time to train is exact for a toy profile with known step times") {
  const analysis::StudyResult r = analysis::run_study(toy_config());
  REQUIRE(r.networks.size() == 1);
  const auto& ns = r.networks[0];
  // mp = 4 would leave two of the worker's GPUs without ops (the profile has two ops): left out.
  CHECK(ns.mp == std::vector<int>{2});
  REQUIRE(ns.notes.size() == 1);
  CHECK(ns.notes[0].find("mp = 4") != std::string::npos);
  const auto& v = ns.main();

  // 1 GPU: B = 32, step 6 ms, epochs(32) = 2, ceil(1000 / 32) = 32 steps: 2 × 32 × 6 ms = 0.384 s.
  CHECK(v.baseline.step.step_time == Time::ms(6));
  CHECK(v.baseline.ttt.steps_per_epoch == 32);
  CHECK(v.baseline.ttt.seconds == doctest::Approx(0.384).epsilon(1e-12));

  // DP on 2 GPUs: B = 64, step 6 ms, epochs 3, 16 steps per epoch: 3 × 16 × 6 ms = 0.288 s.
  const StudyRow& dp2 = find(v, 2, 1);
  CHECK(dp2.step.step_time == Time::ms(6));
  CHECK(dp2.ttt.seconds == doctest::Approx(0.288).epsilon(1e-12));
  CHECK(dp2.step_speedup == doctest::Approx(2.0));             // twice the samples per step
  CHECK(dp2.e2e_speedup == doctest::Approx(0.384 / 0.288));     // but 1.5x the epochs
  CHECK_FALSE(dp2.ttt.extrapolated);

  // MP alone (1 × 2) and hybrid at N = 2 are the same configuration: B = 32, step 3 ms,
  // 2 × 32 × 3 ms = 0.192 s.
  REQUIRE(v.mp_alone.size() == 1);
  CHECK(v.mp_alone[0].step.step_time == Time::ms(3));
  CHECK(v.mp_alone[0].step_speedup == doctest::Approx(2.0));
  const StudyRow& hy2 = find(v, 2, 2);
  CHECK(hy2.ttt.seconds == doctest::Approx(0.192).epsilon(1e-12));

  // DP on 4 GPUs: B = 128 lies beyond the table: the last segment's log-log slope
  // log(3/2)/log 2 extends it, epochs(128) = 3 × 1.5 = 4.5 (flagged); 8 steps per epoch:
  // 4.5 × 8 × 6 ms = 0.216 s. Hybrid 2 × 2: B = 64, 3 × 16 × 3 ms = 0.144 s.
  const StudyRow& dp4 = find(v, 4, 1);
  CHECK(dp4.ttt.epochs == doctest::Approx(4.5));
  CHECK(dp4.ttt.extrapolated);
  CHECK(dp4.ttt.seconds == doctest::Approx(0.216).epsilon(1e-12));
  CHECK(find(v, 4, 2).ttt.seconds == doctest::Approx(0.144).epsilon(1e-12));

  // Best DP 0.216 s (N = 4), best hybrid 0.144 s (N = 4): gain 0.216 / 0.144 − 1 = 0.5; hybrid is
  // ahead at both N, so it overtakes from the smallest N.
  const auto& h = v.headline;
  CHECK(v.row(h.best_dp).gpus == 4);
  CHECK(v.row(h.best_hybrid).gpus == 4);
  CHECK(h.gain_best == doctest::Approx(0.5));
  CHECK(h.gain_at_max == doctest::Approx(0.5));
  CHECK(h.crossover == 2);
  CHECK(h.extrapolated);
  // Steps simulated: 1 GPU, MP alone, DP 2, DP 4, hybrid 4 (hybrid 2 is the MP-alone key).
  CHECK(r.steps_simulated == 5);
}

TEST_CASE("study: a row whose global batch is over the dataset counts steps from samples") {
  // A dataset of 100 samples: DP on 4 GPUs (B = 128) processes 4.5 epochs × 100 samples in
  // 450 / 128 = 3.515625 steps of 6 ms = 21.09375 ms (one step an epoch would say 27 ms). Hybrid
  // 2 × 2 (B = 64 <= 100): ceil(100 / 64) = 2 steps an epoch, 3 epochs × 2 × 3 ms = 18 ms.
  analysis::StudyConfig c = toy_config();
  c.networks[0].dataset.samples = 100;
  const analysis::StudyResult r = analysis::run_study(c);
  const auto& v = r.networks[0].main();
  const StudyRow& dp4 = find(v, 4, 1);
  CHECK(dp4.ttt.batch_over_dataset());
  CHECK(dp4.ttt.steps_per_epoch == doctest::Approx(100.0 / 128).epsilon(1e-15));
  CHECK(dp4.ttt.total_steps == doctest::Approx(3.515625).epsilon(1e-12));
  CHECK(dp4.ttt.seconds == doctest::Approx(0.02109375).epsilon(1e-12));
  const StudyRow& hy4 = find(v, 4, 2);
  CHECK_FALSE(hy4.ttt.batch_over_dataset());
  CHECK(hy4.ttt.steps_per_epoch == 2.0);
  CHECK(hy4.ttt.seconds == doctest::Approx(0.018).epsilon(1e-12));
  // The report's rows and the planner print the share of a step an epoch is: "0.781" steps per epoch.
  CHECK(analysis::format_steps_per_epoch(dp4.ttt) == "0.781");
  CHECK(analysis::format_steps_per_epoch(v.baseline.ttt) == "4");
}

TEST_CASE("study headline: best against best, gain at the largest N and the crossover") {
  analysis::StudyVariant v(
      "default", {"toy", "custom", "", false, analysis::StatisticalEfficiency::parametric(1, 1, {1, 1})},
      1.0);
  auto row = [](int gpus, int mp, double seconds) {
    StudyRow r;
    r.gpus = gpus;
    r.mp = mp;
    r.dp = gpus / mp;
    r.ttt.seconds = seconds;
    return r;
  };
  // Time to train (s) by N: DP 10, 8, 6, 5; best hybrid 12, 7, 6.5, 4 (mp = 2) with a worse mp = 4.
  v.rows = {row(8, 1, 10), row(8, 2, 12),  row(16, 1, 8), row(16, 2, 7),  row(32, 1, 6),
            row(32, 2, 6.5), row(64, 1, 5), row(64, 2, 4), row(64, 4, 4.5)};
  const auto h = analysis::compute_headline(v);
  CHECK(v.row(h.best_dp).gpus == 64);
  CHECK(v.row(h.best_hybrid).gpus == 64);
  CHECK(v.row(h.best_hybrid).mp == 2);
  CHECK(h.gain_best == doctest::Approx(5.0 / 4.0 - 1));  // +25%
  CHECK(h.gain_at_max == doctest::Approx(5.0 / 4.0 - 1));
  // Hybrid leads at 16 but falls behind at 32: it overtakes for good only from 64.
  CHECK(h.crossover == 64);

  // When DP's best lies at a smaller N (its step grows with N), the headline compares best with
  // best, not the two at N max: DP 5 s at 16, 9 s at 64; hybrid 6 s at 64 → best gain 5/6 − 1 < 0,
  // gain at N max 9/6 − 1 = +50%.
  v.rows = {row(16, 1, 5), row(16, 2, 7), row(64, 1, 9), row(64, 2, 6)};
  const auto g = analysis::compute_headline(v);
  CHECK(g.gain_best == doctest::Approx(5.0 / 6.0 - 1));
  CHECK(g.gain_at_max == doctest::Approx(0.5));
  CHECK(g.crossover == 64);
}

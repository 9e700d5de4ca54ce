// Time to train = epochs(B) × ceil(dataset / B) × step time, checked on hand-computed toy cases.
#include <doctest/doctest.h>

#include "analysis/training/time_to_train.h"
#include "sim/error.h"

using namespace hybridsim;
using analysis::EpochsEstimate;
using analysis::StatisticalEfficiency;

TEST_CASE("analysis: time to train of a toy case is exact") {
  // Dataset 10,500 samples, global batch 1,000 → ceil(10.5) = 11 steps per epoch (the last step
  // has 500 samples). Curve 2 × (1 + 1,000/1,000) = 4 epochs → 44 steps × 250 ms = 11 s exactly.
  const auto curve = StatisticalEfficiency::parametric(2.0, 1'000, {500, 4'000});
  const auto t = analysis::time_to_train(sim::Time::ms(250), 1'000, 10'500, curve);
  CHECK(t.step_time == sim::Time::ms(250));
  CHECK(t.global_batch == 1'000);
  CHECK(t.epochs == 4.0);
  CHECK(t.steps_per_epoch == 11);
  CHECK(t.total_steps == 44.0);
  CHECK(t.seconds == 11.0);
  CHECK_FALSE(t.extrapolated);
}

TEST_CASE("analysis: time to train carries fractional epochs and the extrapolation flag") {
  // 3.5 epochs × ceil(1,000/100) = 10 steps → 35 steps × 2 ms = 0.07 s; the flag passes through.
  const auto t = analysis::time_to_train(sim::Time::ms(2), 100, 1'000, EpochsEstimate{3.5, true});
  CHECK(t.steps_per_epoch == 10);
  CHECK(t.total_steps == 35.0);
  CHECK(t.seconds == doctest::Approx(0.07).epsilon(1e-12));
  CHECK(t.extrapolated);
}

TEST_CASE("analysis: a global batch over the dataset takes epochs × dataset / batch steps") {
  // epochs(B) counts samples: 2 epochs of 1,000 samples are 2,000 samples, and a step of 5,000
  // samples holds them in 0.4 of a step (it was one step an epoch: 2 steps, 5x too long). An epoch
  // is 1,000 / 5,000 = 0.2 of a step; at 1 ms a step, 0.4 ms.
  const auto t = analysis::time_to_train(sim::Time::ms(1), 5'000, 1'000, EpochsEstimate{2, false});
  CHECK(t.batch_over_dataset());
  CHECK(t.dataset_samples == 1'000);
  CHECK(t.steps_per_epoch == doctest::Approx(0.2).epsilon(1e-15));
  CHECK(t.total_steps == doctest::Approx(0.4).epsilon(1e-15));
  CHECK(t.seconds == doctest::Approx(0.0004).epsilon(1e-12));
  // A batch equal to the dataset is one whole step an epoch, from either side of the rule.
  const auto equal = analysis::time_to_train(sim::Time::ms(1), 1'000, 1'000, EpochsEstimate{2, false});
  CHECK_FALSE(equal.batch_over_dataset());
  CHECK(equal.steps_per_epoch == 1.0);
  CHECK(equal.total_steps == 2.0);
  // One sample short of the batch: still a (partial) step an epoch.
  CHECK(analysis::time_to_train(sim::Time::ms(1), 1'001, 1'000, EpochsEstimate{2, false}).total_steps ==
        doctest::Approx(2 * 1'000.0 / 1'001).epsilon(1e-15));
}

TEST_CASE("analysis: time to train of GNMT at 8K on the WMT16 epoch") {
  // 3,964,928 / 8,192 = 484 steps exactly (3,964,928 = 484 × 8,192). 3.15 × (1 + 8,192/9,057)
  // = 5.999155 epochs → 2,903.59 steps; at 400 ms per step, 1,161.44 s.
  const auto curve = analysis::efficiency_curve_by_name("gnmt", "default").efficiency;
  const auto t = analysis::time_to_train(sim::Time::ms(400), 8'192,
                                         analysis::training_dataset_by_name("gnmt").samples, curve);
  CHECK(t.steps_per_epoch == 484);
  CHECK(t.total_steps == doctest::Approx(5.999155349 * 484).epsilon(1e-9));
  CHECK(t.seconds == doctest::Approx(5.999155349 * 484 * 0.4).epsilon(1e-9));
  CHECK_FALSE(t.extrapolated);
}

TEST_CASE("analysis: bad time-to-train input is rejected") {
  const EpochsEstimate e{1, false};
  CHECK_THROWS_AS(analysis::time_to_train(sim::Time::ms(-1), 1, 1, e), InputError);
  CHECK_THROWS_AS(analysis::time_to_train(sim::Time::ms(1), 0, 1, e), InputError);
  CHECK_THROWS_AS(analysis::time_to_train(sim::Time::ms(1), 1, 0, e), InputError);
  CHECK_THROWS_AS(analysis::time_to_train(sim::Time::ms(1), 1, 1, EpochsEstimate{0, false}), InputError);
}

// The variability model (workloads/program/variability.h): the WMT16 length distribution, the sampler's
// bins, expected padded lengths derived by hand on a tiny distribution, and the per-step draws
// (deterministic, per GPU independent of the others, with the documented moments).
#include <doctest/doctest.h>

#include <cmath>

#include "workloads/program/variability.h"

using namespace hybridsim::workloads;

namespace {

// Lengths 1..4, equally likely.
LengthModel uniform4() { return LengthModel{4, {1, 1, 1, 1}, 4}; }

}  // namespace

TEST_CASE("variability: WMT16 En-De lengths average 47.9 tokens per pair, at most 50 per side") {
  const LengthModel m = wmt16_en_de_lengths();
  CHECK(m.max_length == 50);
  REQUIRE(m.weight.size() == 50);
  std::int64_t total = 0;
  for (const auto w : m.weight) {
    CHECK(w > 0);
    total += w;
  }
  CHECK(total == m.total);
  CHECK(std::abs(2 * m.mean() - 47.9) < 1e-3);
}

TEST_CASE(
    "variability: bins of the bucketing sampler, as NVIDIA's (width ceil(50 / 5) = 10, the last takes 50)") {
  CHECK(length_bucket(1, 50, 5) == 0);
  CHECK(length_bucket(9, 50, 5) == 0);
  CHECK(length_bucket(10, 50, 5) == 1);
  CHECK(length_bucket(49, 50, 5) == 4);
  CHECK(length_bucket(50, 50, 5) == 4);
}

TEST_CASE("variability: the expected padded length, from the distribution of the maximum") {
  const LengthModel m = uniform4();
  // Random batches of 2: P(max <= l) = (l/4)^2, so E = (1·1 + 2·3 + 3·5 + 4·7) / 16 = 50/16.
  CHECK(m.expected_padded(2, Batching::Random, 1) == doctest::Approx(3.125));
  // Two bins of width 2: {1} (a quarter of the pairs, padded to 1) and {2, 3, 4}, where
  // P(max <= l) = ((l − 1)/3)^2: E = (2·1 + 3·3 + 4·5) / 9 = 31/9. Together 1/4 + 3/4 · 31/9.
  CHECK(m.expected_padded(2, Batching::Bucketed, 2) == doctest::Approx(0.25 + 0.75 * 31.0 / 9.0));
  // One pair per batch: the mean itself.
  CHECK(m.expected_padded(1, Batching::Random, 1) == doctest::Approx(2.5));
}

TEST_CASE("variability: kernel jitter is seeded, per GPU, and log-normal of mean 1 and the given spread") {
  const Variability v{.steps = 1, .seed = 42, .kernel_jitter = 0.05};
  const std::vector<int> eight = {0, 1, 2, 3, 4, 5, 6, 7}, four = {0, 1, 2, 3};
  const StepScales a = step_scales(v, {}, eight, 128, 3);
  // The same seed and step give the same factors; a GPU's factor does not depend on the others.
  CHECK(step_scales(v, {}, eight, 128, 3).compute == a.compute);
  const StepScales b = step_scales(v, {}, four, 128, 3);
  for (std::size_t g = 0; g < 4; ++g) CHECK(b.compute[g] == a.compute[g]);
  CHECK(step_scales(v, {}, eight, 128, 4).compute != a.compute);
  CHECK(step_scales({.seed = 43, .kernel_jitter = 0.05}, {}, eight, 128, 3).compute != a.compute);
  CHECK(a.sample == std::vector<double>(8, 1.0));  // no lengths
  // Unused GPUs get 1.
  CHECK(step_scales(v, {}, {0, -1}, 128, 3).compute[1] == 1.0);
  // Over 4096 GPUs × 8 steps: mean 1 and coefficient of variation 0.05 within sampling error
  // (standard errors 0.05 / 181 = 0.0003 for the mean, about 0.0002 for the spread).
  std::vector<int> many(4096);
  for (std::size_t g = 0; g < many.size(); ++g) many[g] = static_cast<int>(g);
  double sum = 0, sq = 0;
  int n = 0;
  for (int step = 0; step < 8; ++step)
    for (const double f : step_scales(v, {}, many, 128, step).compute) {
      sum += f;
      sq += f * f;
      ++n;
    }
  const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  CHECK(std::abs(mean - 1) < 0.0015);
  CHECK(std::abs(sd / mean - 0.05) < 0.0015);
}

TEST_CASE(
    "variability: bucketed batches keep a step's workers in one bin, random ones pad to the longest of all") {
  const LengthModel m = wmt16_en_de_lengths();
  const double reference = m.expected_padded(128, Batching::Bucketed, 5);
  std::vector<int> workers(64);
  for (std::size_t w = 0; w < workers.size(); ++w) workers[w] = static_cast<int>(w);
  const Variability bucketed{.steps = 1, .seed = 7, .lengths = LengthDistribution::Wmt16EnDe};
  for (int step = 0; step < 20; ++step) {
    const StepScales s = step_scales(bucketed, m, workers, 128, step);
    const int bin = length_bucket(static_cast<int>(std::lround(s.sample[0] * reference)), 50, 5);
    for (const double f : s.sample)
      CHECK(length_bucket(static_cast<int>(std::lround(f * reference)), 50, 5) == bin);
    CHECK(s.compute == std::vector<double>(64, 1.0));
  }
  // Random batches of 128 pairs are padded to nearly 50 tokens: every factor above 40 / reference.
  Variability random = bucketed;
  random.batching = Batching::Random;
  for (const double f : step_scales(random, m, workers, 128, 0).sample) CHECK(f * reference > 40);
  // The GPUs of one worker share its batch.
  const StepScales mp = step_scales(random, m, {0, 0, 1, 1, -1}, 128, 0);
  CHECK(mp.sample[0] == mp.sample[1]);
  CHECK(mp.sample[2] == mp.sample[3]);
  CHECK(mp.sample[4] == 1.0);
  // Bucketed, one worker, over many steps: the mean factor is 1 (the calibration's rule), within
  // sampling error (bins of 9 to 50 tokens: a spread of about 0.35 over sqrt(4000) = 63: 0.006).
  double sum = 0;
  for (int step = 0; step < 4000; ++step) sum += step_scales(bucketed, m, {0}, 128, step).sample[0];
  CHECK(std::abs(sum / 4000 - 1) < 0.02);
}

// What makes the workers of one synchronous data-parallel step differ, and so what makes the step
// wait for its slowest worker: (a) data — sentence pairs vary in length, a batch costs in proportion
// to its padded length (its longest pair), and how batches are formed decides how alike the workers
// of a step are; (b) noise — a seeded per-GPU, per-step factor on kernel times. A run of several
// steps (analysis/step/step_series.h) draws both for each step, deterministically from the seed.
//   Variability v{.steps = 20, .seed = 1, .kernel_jitter = 0.05};
//   StepScales s = step_scales(v, lengths, worker_of_gpu, /*batch=*/128, /*step=*/3);
// Sources and assumptions are listed in workloads/README.md ("Variability").
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace hybridsim::workloads {

enum class LengthDistribution : std::uint8_t {
  Fixed,     // every pair as long as the profile says: no data variability
  Wmt16EnDe  // WMT16 English-German as MLPerf trains it (wmt16_en_de_lengths)
};
std::string_view length_distribution_name(LengthDistribution d);  // "fixed", "wmt16-en-de"

enum class Batching : std::uint8_t {
  Bucketed,  // NVIDIA's GNMT BucketingSampler: pairs binned by length, a step's batches from one bin
  Random     // every worker's batch a uniform sample of the data set
};
std::string_view batching_name(Batching b);  // "bucketed", "random"

struct Variability {
  int steps = 1;                 // steps simulated; each draws its own lengths and noise
  std::uint64_t seed = 1;
  // Coefficient of variation (σ / mean) of a log-normal factor of mean 1 drawn per GPU per step and
  // applied to all its kernels: 0.05 is "a 5% noisy cluster". 0: off.
  double kernel_jitter = 0;
  LengthDistribution lengths = LengthDistribution::Fixed;
  Batching batching = Batching::Bucketed;
  int length_buckets = 5;        // bins of the bucketing sampler
  bool operator==(const Variability&) const = default;
  bool varies() const { return kernel_jitter > 0 || lengths != LengthDistribution::Fixed; }
};

// Tokens per side of a sentence pair, 1..max_length, as integer weights (parts of `total`).
struct LengthModel {
  int max_length = 0;
  std::vector<std::int64_t> weight;  // weight[l - 1]: how often a pair has l tokens per side
  std::int64_t total = 0;
  double mean() const;
  // The expected padded length (the longest of `batch` pairs) of one worker's batch under `batching`
  // with `buckets` bins, exactly (from the distribution of the maximum).
  double expected_padded(std::int64_t batch, Batching batching, int buckets) const;
};
// One bin of the bucketing sampler with `buckets` bins: its share of the pairs, the mean length of
// its pairs (tokens per side, what a meter counts) and the expected padded length of a batch of
// `batch` pairs drawn from it (its longest pair, what the kernels cost).
struct LengthBin {
  double share = 0, mean_length = 0, expected_padded = 0;
};
std::vector<LengthBin> length_bins(const LengthModel& lengths, std::int64_t batch, int buckets);

// Per side, l tokens with the weight of a log-normal density of shape σ = 0.5 (an assumption:
// sentence lengths are close to log-normal, Williams 1940) on 1..50 (MLPerf's and NVIDIA's
// --max-length-train 50), its location solved so that the mean is 23.95 tokens per side: 47.9
// source + target tokens per pair, as NVIDIA's MLPerf logs report (../shared/reference/calibration.md).
LengthModel wmt16_en_de_lengths();

// The bin of a pair of l tokens per side, as the sampler bins (width ceil(max / buckets), the last
// bin taking the rest).
int length_bucket(int l, int max_length, int buckets);

// Factors for one step, per GPU: `compute` on every kernel (noise), `sample` on per-sample kernels
// (the worker's padded length over the expected padded length of the calibration's rule, NVIDIA's
// bucketing with 5 bins, so that one GPU's mean step stays the calibrated one). `worker_of_gpu[g]`
// < 0: an unused GPU (factors 1). `batch`: pairs per worker.
struct StepScales {
  std::vector<double> compute;
  std::vector<double> sample;
};
StepScales step_scales(const Variability& v, const LengthModel& lengths,
                       const std::vector<int>& worker_of_gpu, std::int64_t batch, int step);

}  // namespace hybridsim::workloads

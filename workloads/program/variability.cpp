#include "workloads/program/variability.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sim/error.h"
#include "sim/hash.h"

namespace hybridsim::workloads {

namespace {

// Counter-based random numbers: every draw is a hash of (seed, step, who, what), so a GPU's draws
// do not depend on how many others there are or in which order they are drawn. splitmix64's
// finalizer (Steele, Lea and Flood 2014), applied to a running combination of the inputs.
constexpr auto mix = sim::splitmix64;
std::uint64_t draw(std::uint64_t seed, std::uint64_t step, std::uint64_t who, std::uint64_t what) {
  return mix(mix(mix(mix(seed) ^ step) ^ who) ^ what);
}
// A uniform number in (0, 1]: 53 random bits.
double uniform(std::uint64_t bits) { return static_cast<double>((bits >> 11) + 1) * 0x1.0p-53; }

enum Purpose : std::uint64_t { kJitterA = 1, kJitterB = 2, kBucket = 3, kLength = 4 };

// The first and last length (1-based) of bin b.
std::pair<int, int> bucket_range(int b, int max_length, int buckets) {
  const int width = (max_length + buckets - 1) / buckets;
  const int lo = std::max(1, b * width);
  const int hi = b == buckets - 1 ? max_length : std::min(max_length, (b + 1) * width - 1);
  return {lo, hi};
}

std::int64_t range_weight(const LengthModel& m, int lo, int hi) {
  std::int64_t w = 0;
  for (int l = lo; l <= hi; ++l) w += m.weight[static_cast<std::size_t>(l - 1)];
  return w;
}

// E[max of `batch` pairs drawn from lengths lo..hi].
double expected_max(const LengthModel& m, int lo, int hi, std::int64_t batch) {
  const double total = static_cast<double>(range_weight(m, lo, hi));
  if (total <= 0) return 0;
  double cum = 0, previous = 0, e = 0;
  for (int l = lo; l <= hi; ++l) {
    cum += static_cast<double>(m.weight[static_cast<std::size_t>(l - 1)]);
    const double p = std::pow(cum / total, static_cast<double>(batch));
    e += l * (p - previous);
    previous = p;
  }
  return e;
}

// The smallest l in lo..hi with P(max of `batch` ≤ l) ≥ u: the padded length of a batch.
int sample_max(const LengthModel& m, int lo, int hi, std::int64_t batch, double u) {
  const double total = static_cast<double>(range_weight(m, lo, hi));
  double cum = 0;
  for (int l = lo; l <= hi; ++l) {
    cum += static_cast<double>(m.weight[static_cast<std::size_t>(l - 1)]);
    if (std::pow(cum / total, static_cast<double>(batch)) >= u) return l;
  }
  return hi;
}

// The log-normal factor of mean 1 and coefficient of variation cv: exp(σ·z − σ²/2), σ² = ln(1 + cv²),
// z standard normal by Box–Muller; rounded to 10^-9 so that the factor, not the last bits of libm,
// is what the step sees.
double lognormal_factor(double cv, std::uint64_t a, std::uint64_t b) {
  const double sigma = std::sqrt(std::log1p(cv * cv));
  const double z = std::sqrt(-2.0 * std::log(uniform(a))) * std::cos(2.0 * std::numbers::pi * uniform(b));
  return std::round(std::exp(sigma * z - 0.5 * sigma * sigma) * 1e9) / 1e9;
}

}  // namespace

std::string_view length_distribution_name(LengthDistribution d) {
  return d == LengthDistribution::Fixed ? "fixed" : "wmt16-en-de";
}
std::string_view batching_name(Batching b) { return b == Batching::Bucketed ? "bucketed" : "random"; }

double LengthModel::mean() const {
  double s = 0;
  for (int l = 1; l <= max_length; ++l) s += l * static_cast<double>(weight[static_cast<std::size_t>(l - 1)]);
  return s / static_cast<double>(total);
}

double LengthModel::expected_padded(std::int64_t batch, Batching batching, int buckets) const {
  if (batching == Batching::Random) return expected_max(*this, 1, max_length, batch);
  double e = 0;
  for (int b = 0; b < buckets; ++b) {
    const auto [lo, hi] = bucket_range(b, max_length, buckets);
    if (lo > hi) continue;
    e += static_cast<double>(range_weight(*this, lo, hi)) / static_cast<double>(total) *
         expected_max(*this, lo, hi, batch);
  }
  return e;
}

std::vector<LengthBin> length_bins(const LengthModel& m, std::int64_t batch, int buckets) {
  std::vector<LengthBin> out;
  for (int b = 0; b < buckets; ++b) {
    const auto [lo, hi] = bucket_range(b, m.max_length, buckets);
    if (lo > hi) continue;
    const std::int64_t w = range_weight(m, lo, hi);
    if (w == 0) continue;
    double tokens = 0;
    for (int l = lo; l <= hi; ++l)
      tokens += l * static_cast<double>(m.weight[static_cast<std::size_t>(l - 1)]);
    out.push_back({static_cast<double>(w) / static_cast<double>(m.total), tokens / static_cast<double>(w),
                   expected_max(m, lo, hi, batch)});
  }
  return out;
}

int length_bucket(int l, int max_length, int buckets) {
  const int width = (max_length + buckets - 1) / buckets;
  return std::min(l / width, buckets - 1);
}

LengthModel wmt16_en_de_lengths() {
  constexpr int kMax = 50;              // --max-length-train 50
  constexpr double kSigma = 0.5;        // shape: an assumption (see variability.h)
  constexpr double kMean = 47.9 / 2;    // tokens per side
  auto density = [&](double mu, int l) {
    const double x = std::log(static_cast<double>(l)) - mu;
    return std::exp(-x * x / (2 * kSigma * kSigma)) / l;
  };
  auto mean_at = [&](double mu) {
    double s = 0, w = 0;
    for (int l = 1; l <= kMax; ++l) {
      s += l * density(mu, l);
      w += density(mu, l);
    }
    return s / w;
  };
  double lo = 0, hi = std::log(static_cast<double>(kMax));  // the mean grows with mu
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (mean_at(mid) < kMean ? lo : hi) = mid;
  }
  const double mu = 0.5 * (lo + hi);
  double w = 0;
  for (int l = 1; l <= kMax; ++l) w += density(mu, l);
  LengthModel m;
  m.max_length = kMax;
  for (int l = 1; l <= kMax; ++l) {
    m.weight.push_back(std::llround(density(mu, l) / w * 1e9));
    m.total += m.weight.back();
  }
  return m;
}

StepScales step_scales(const Variability& v, const LengthModel& lengths,
                       const std::vector<int>& worker_of_gpu, std::int64_t batch, int step) {
  const std::size_t gpus = worker_of_gpu.size();
  StepScales out{std::vector<double>(gpus, 1.0), std::vector<double>(gpus, 1.0)};
  const auto s = static_cast<std::uint64_t>(step);
  if (v.kernel_jitter > 0)
    for (std::size_t g = 0; g < gpus; ++g)
      if (worker_of_gpu[g] >= 0)
        out.compute[g] =
            lognormal_factor(v.kernel_jitter, draw(v.seed, s, g, kJitterA), draw(v.seed, s, g, kJitterB));
  if (v.lengths == LengthDistribution::Fixed) return out;
  if (lengths.max_length <= 0 || v.length_buckets < 1) throw InternalError("step_scales: no length model");
  // The rule behind the calibration figure (NVIDIA's sampler, 5 bins) keeps the mean step as calibrated.
  const double reference = lengths.expected_padded(batch, Batching::Bucketed, 5);
  int lo = 1, hi = lengths.max_length;
  if (v.batching == Batching::Bucketed) {
    // The step's bin, in proportion to its share of the data (global batches are formed inside bins
    // and shuffled).
    const auto pick =
        static_cast<std::int64_t>(draw(v.seed, s, 0, kBucket) % static_cast<std::uint64_t>(lengths.total));
    std::int64_t cum = 0;
    for (int b = 0; b < v.length_buckets; ++b) {
      const auto [blo, bhi] = bucket_range(b, lengths.max_length, v.length_buckets);
      if (blo > bhi) continue;
      cum += range_weight(lengths, blo, bhi);
      if (pick < cum) {
        lo = blo;
        hi = bhi;
        break;
      }
    }
  }
  std::vector<double> of_worker;
  for (std::size_t g = 0; g < gpus; ++g) {
    const int w = worker_of_gpu[g];
    if (w < 0) continue;
    if (static_cast<std::size_t>(w) >= of_worker.size())
      of_worker.resize(static_cast<std::size_t>(w) + 1, -1);
    double& f = of_worker[static_cast<std::size_t>(w)];
    if (f < 0) {
      const double u = uniform(draw(v.seed, s, static_cast<std::uint64_t>(w), kLength));
      f = sample_max(lengths, lo, hi, batch, u) / reference;
    }
    out.sample[g] = f;
  }
  return out;
}

}  // namespace hybridsim::workloads

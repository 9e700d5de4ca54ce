// Number formatting and the published projection shared by the study's report and the planner.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "analysis/study/study_report.h"
#include "topology/preset_registry.h"
#include "workloads/generators/profile_gen.h"

namespace hybridsim::analysis {

std::optional<double> published_gain(std::string_view network) {
  // Pal et al., "Optimizing Multi-GPU Parallelization Strategies for Deep Learning Training",
  // IEEE Micro 39(5), 2019: hybrid at least 26.5%, 8% and 22% faster than the best DP alone.
  if (workloads::canonical_network_name(network) == "inception-v3") return 0.265;
  if (network == "gnmt") return 0.08;
  if (network == "biglstm") return 0.22;
  return std::nullopt;
}

namespace {

// `seconds` in the unit format_duration picks for `scale` (finite).
std::string format_duration_scaled(double seconds, double scale) {
  if (scale >= 2 * 86'400) return format_fixed(seconds / 86'400, 1) + " d";
  if (scale >= 2 * 3'600) return format_fixed(seconds / 3'600, 1) + " h";
  if (scale >= 2 * 60) return format_fixed(seconds / 60, 1) + " min";
  return format_fixed_nonzero(seconds, 1) + " s";  // 1e-297 s was "0.0 s"
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return "n/a";
  return format_duration_scaled(seconds, seconds);
}

std::pair<std::string, std::string> format_durations_alike(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b)) return {format_duration(a), format_duration(b)};
  const double scale = std::max(a, b);
  return {format_duration_scaled(a, scale), format_duration_scaled(b, scale)};
}

std::string infiniband_words(const topology::ClusterSpec& spec) {
  return "InfiniBand " + sim::format_bandwidth(topology::ib_bandwidth_of(spec)) + " a NIC port, " +
         sim::format_bandwidth(topology::ib_share_per_gpu(spec)) + " a GPU";
}

std::string format_percent(double fraction) {
  const double pct = fraction * 100;
  return (pct >= 0 ? "+" : "") + format_fixed(pct, 1) + "%";
}

std::string format_count(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

std::string format_steps_per_epoch(const TimeToTrain& t) {
  if (!t.batch_over_dataset()) return format_count(std::llround(t.steps_per_epoch));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", t.steps_per_epoch);
  return buf;
}

}  // namespace hybridsim::analysis

// What the iteration fold (import_kineto_fold.h) asks of the averaged iterations: whether two are
// alike (the same ops and kernels), and their mean statistics.
#include <algorithm>
#include <array>

#include "workloads/import/import_kineto_parts.h"
#include "workloads/import/import_kineto_values.h"

namespace hybridsim::workloads::kineto_detail {

std::string structure_difference(const IterationDraft& a, const IterationDraft& b) {
  if (a.ops.size() != b.ops.size())
    return std::to_string(a.ops.size()) + " ops against " + std::to_string(b.ops.size());
  auto same = [](const auto& p, const auto& q) {
    return p.size() == q.size() && std::equal(p.begin(), p.end(), q.begin(),
                                              [](const auto& k, const auto& l) { return k.name == l.name; });
  };
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const DraftOp& x = a.ops[i];
    const DraftOp& y = b.ops[i];
    if (x.name != y.name || !same(x.forward, y.forward) || !same(x.backward, y.backward))
      return "op " + std::to_string(i) + " is " + x.name + " against " + y.name + " (or its kernels differ)";
  }
  return "";
}

namespace {

// The times mean_stats averages.
constexpr std::array<sim::Time KinetoIterationStats::*, 10> kMeanTimes{
    &KinetoIterationStats::cpu_duration, &KinetoIterationStats::span, &KinetoIterationStats::busy,
    &KinetoIterationStats::launch_gaps, &KinetoIterationStats::stream_overlap,
    &KinetoIterationStats::exposed_communication, &KinetoIterationStats::communication,
    &KinetoIterationStats::forward, &KinetoIterationStats::backward, &KinetoIterationStats::optimizer};

}  // namespace

void StatsSum::add(const KinetoIterationStats& s) {
  ++n;
  // Summed wide: each value fits sim::Time, n of them need not.
  for (std::size_t i = 0; i < kMeanTimes.size(); ++i) times[i] += (s.*kMeanTimes[i]).ps();
  largest_gap = max(largest_gap, s.largest_gap);
  gap_count += s.gap_count;
  activities += s.activities;
}

KinetoIterationStats StatsSum::mean(const std::string& first, const std::string& last) const {
  KinetoIterationStats m;
  m.name = n == 1 ? first : first + ".." + last + " (mean of " + std::to_string(n) + ")";
  for (std::size_t i = 0; i < kMeanTimes.size(); ++i) m.*kMeanTimes[i] = mean_time(times[i], n);
  m.largest_gap = largest_gap;
  m.gap_count = mean_time(gap_count, n).ps();
  m.activities = mean_time(activities, n).ps();
  return m;
}

KinetoIterationStats mean_stats(const std::vector<KinetoIterationStats>& all) {
  StatsSum sum;
  for (const auto& s : all) sum.add(s);
  return sum.mean(all.front().name, all.back().name);
}

}  // namespace hybridsim::workloads::kineto_detail

// What the iteration fold (import_kineto_fold.h) asks of the averaged iterations: whether two are
// alike (the same ops and kernels), and their mean statistics.
#include <algorithm>

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

KinetoIterationStats mean_stats(const std::vector<KinetoIterationStats>& all) {
  KinetoIterationStats m;
  const auto n = static_cast<std::int64_t>(all.size());
  m.name = all.size() == 1
               ? all.front().name
               : all.front().name + ".." + all.back().name + " (mean of " + std::to_string(n) + ")";
  // Summed wide: each value fits sim::Time, n of them need not.
  auto mean_of = [&](auto field) {
    Wide total = 0;
    for (const auto& s : all) total += field(s);
    return mean_time(total, n).ps();
  };
  for (sim::Time KinetoIterationStats::*t :
       {&KinetoIterationStats::cpu_duration, &KinetoIterationStats::span, &KinetoIterationStats::busy,
        &KinetoIterationStats::launch_gaps, &KinetoIterationStats::stream_overlap,
        &KinetoIterationStats::exposed_communication, &KinetoIterationStats::communication,
        &KinetoIterationStats::forward, &KinetoIterationStats::backward, &KinetoIterationStats::optimizer})
    m.*t =
        sim::Time::ps(mean_of([&](const KinetoIterationStats& s) { return static_cast<Wide>((s.*t).ps()); }));
  for (const auto& s : all) m.largest_gap = max(m.largest_gap, s.largest_gap);
  m.gap_count = mean_of([](const KinetoIterationStats& s) { return static_cast<Wide>(s.gap_count); });
  m.activities = mean_of([](const KinetoIterationStats& s) { return static_cast<Wide>(s.activities); });
  return m;
}

}  // namespace hybridsim::workloads::kineto_detail

// The middle steps of a Kineto import: which iterations are extracted (the last --steps with
// compute), which of them are alike and averaged, and their mean statistics and report lines.
#include <algorithm>
#include <map>

#include "sim/error.h"
#include "workloads/import/import_kineto_fold.h"
#include "workloads/import/import_kineto_parts.h"
#include "workloads/import/import_kineto_values.h"

namespace hybridsim::workloads::kineto_detail {

IterationSelection select_iterations(const KinetoTrace& t, const KinetoIndex& index,
                                     const std::vector<IterationWindow>& windows,
                                     const WindowAssignment& assignment, int device, int steps,
                                     bool keep_gaps) {
  IterationSelection sel;
  std::vector<std::string> unselected, idle;  // latest first
  for (std::size_t w = windows.size(); w-- > 0;) {
    const WindowContent& content = assignment.content[w];
    if (content.gpu.empty()) {
      idle.push_back(windows[w].name);
      continue;
    }
    ++sel.with_work;
    if (steps > 0 && sel.drafts.size() >= static_cast<std::size_t>(steps)) {
      unselected.push_back(windows[w].name);
      continue;
    }
    IterationDraft d = extract_iteration(t, index, windows[w], content, keep_gaps);
    if (d.ops.empty()) {
      sel.skipped.push_back(windows[w].name + ": no compute on the device, only communication");
      continue;
    }
    sel.drafts.push_back(std::move(d));
  }
  std::reverse(sel.drafts.begin(), sel.drafts.end());
  if (!idle.empty())
    sel.skipped.push_back(name_list(idle) + ": no GPU activity launched (profiling stopped or warm-up)");
  if (!unselected.empty())
    sel.skipped.push_back(name_list(unselected) + ": not selected (--steps " + std::to_string(steps) +
                          " averages the last complete iterations)");
  if (sel.drafts.empty())
    throw InputError(t.source + ": no complete iteration with GPU work on device " + std::to_string(device));
  if (steps > static_cast<int>(sel.drafts.size()))
    sel.notes.push_back("--steps " + std::to_string(steps) + " asked for more iterations than the " +
                        std::to_string(sel.with_work) + " with GPU work");
  return sel;
}

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

std::vector<const IterationDraft*> alike_iterations(const std::vector<IterationDraft>& drafts,
                                                    std::vector<std::string>& skipped) {
  const IterationDraft& ref = drafts.back();
  std::vector<const IterationDraft*> used;
  for (const IterationDraft& d : drafts) {
    const std::string diff = structure_difference(d, ref);
    if (diff.empty()) used.push_back(&d);
    else skipped.push_back(d.stats.name + ": its ops differ from " + ref.stats.name + "'s (" + diff + ")");
  }
  return used;
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

void merge_draft_reports(const std::vector<const IterationDraft*>& used, std::vector<std::string>& skipped,
                         std::vector<std::string>& notes) {
  DraftSums counts;
  for (const IterationDraft* d : used) {
    for (const auto& [what, count] : d->skipped) counts.skipped[what] += count;
    for (const auto& [what, count] : d->notes) counts.notes[what] += count;
  }
  report_counts(counts, skipped, notes);
}

}  // namespace hybridsim::workloads::kineto_detail

// The averaged iterations folded as they are extracted, latest first, so that an import holds one
// iteration's draft (the reference, the last) and running sums, never every iteration's draft: which
// iterations are selected (the last --steps with compute) and alike the last (averaged), and the sums
// averaged_kernels, set_optimizer, choose_gradient_source and report_counts take, in bounded memory
// (not a public API).
//   IterationFold fold(steps);
//   for (w = windows.size(); w-- > 0;) if (fold.wants(windows[w].name, launched)) fold.add(name, draft);
//   fold.finish(source, device, report);   fold.ref();  fold.sums();
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workloads/import/import_kineto_detail.h"
#include "workloads/import/import_kineto_values.h"

namespace hybridsim::workloads::kineto_detail {

// The drafts alike the reference, summed kernel by kernel (duration, idle_before), with their
// optimizer times, how many of them recorded other all-reduce sizes than the reference, and their
// skips and notes counted.
struct DraftSums {
  struct OpSums {
    std::vector<std::pair<Wide, Wide>> forward, backward;
  };
  std::int64_t n = 0;
  std::vector<OpSums> ops;
  Wide optimizer = 0, optimizer_idle = 0;
  std::int64_t nccl_differing = 0;
  std::map<std::string, std::int64_t> skipped, notes;
  // Adds `d`, alike `ref` (same ops and kernels).
  void add(const IterationDraft& d, const IterationDraft& ref);
};
// The sums mean_stats (import_kineto_parts.h) takes, an iteration at a time (in any order).
struct StatsSum {
  std::int64_t n = 0;
  std::array<Wide, 10> times{};
  sim::Time largest_gap;
  Wide gap_count = 0, activities = 0;
  void add(const KinetoIterationStats& s);
  // mean_stats of the iterations added, the first and last in trace order named.
  KinetoIterationStats mean(const std::string& first, const std::string& last) const;
};

// Window names met latest first, for a report line: the latest, the earliest and how many.
struct NameRange {
  std::string latest, earliest;
  std::int64_t n = 0;
  void add(const std::string& name);
  // "ProfilerStep#1", or "ProfilerStep#1 .. ProfilerStep#9 (9 iterations)".
  std::string text() const;
};


// The summed skips and notes as report lines: "3 × what (over the averaged iterations)", "3 × what".
void report_counts(const DraftSums& sums, std::vector<std::string>& skipped, std::vector<std::string>& notes);

// `used` summed, its last the reference.
DraftSums sum_drafts(const std::vector<const IterationDraft*>& used);

class IterationFold {
 public:
  explicit IterationFold(int steps) : steps_(steps) {}
  // The next window, latest first: whether to extract it (it launched work and --steps is not
  // reached); the others are counted for the report.
  bool wants(const std::string& window, bool launched);
  // The draft of the window `wants` accepted.
  void add(const std::string& window, IterationDraft d);
  // --steps iterations are folded: no later `wants` extracts.
  bool full() const { return steps_ > 0 && drafts_ >= static_cast<std::size_t>(steps_); }
  // The report lines in the order import_kineto lists them (selection, differing iterations,
  // summed skips into `r.skipped`; selection and summed notes into `r.notes`), the averaged
  // iterations' stats into `r.iterations` (kListedIterations of them at most) and their mean into
  // `r.average`. Throws InputError naming `source` and `device` when no
  // window had compute.
  void finish(const std::string& source, int device, KinetoImportReport& r);
  const IterationDraft& ref() const { return *ref_; }
  const DraftSums& sums() const { return sums_; }
  // The most per-iteration records held at once (listed stats, skip lines), for memory tests.
  std::int64_t records_high_water() const { return records_high_water_; }

 private:
  void note_records();
  int steps_ = 0;
  std::size_t with_work_ = 0, drafts_ = 0;
  std::optional<IterationDraft> ref_;
  DraftSums sums_;
  StatsSum averaged_;
  std::vector<KinetoIterationStats> listed_;  // latest first, kListedIterations at most
  std::optional<KinetoIterationStats> earliest_;
  NameRange unselected_, idle_;
  std::vector<std::string> only_comm_, differ_;  // latest first
  std::int64_t records_high_water_ = 0;
};

}  // namespace hybridsim::workloads::kineto_detail

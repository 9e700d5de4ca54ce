// The iteration fold: the iterations selected (the last --steps with compute) and alike the last, from
// a stream of drafts, latest first, summed into DraftSums as they come.
#include "workloads/import/import_kineto_fold.h"

#include <algorithm>

#include "sim/error.h"
#include "workloads/import/import_kineto_parts.h"

namespace hybridsim::workloads::kineto_detail {

namespace {

void add_kernels(std::vector<std::pair<Wide, Wide>>& sums, const std::vector<DraftKernel>& kernels) {
  if (sums.empty()) sums.resize(kernels.size());
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    sums[k].first += kernels[k].duration.ps();
    sums[k].second += kernels[k].idle_before.ps();
  }
}

}  // namespace

void NameRange::add(const std::string& name) {
  if (n++ == 0) latest = name;
  earliest = name;
}

std::string NameRange::text() const {
  if (n == 1) return latest;
  return earliest + " .. " + latest + " (" + std::to_string(n) + " iterations)";
}

void DraftSums::add(const IterationDraft& d, const IterationDraft& ref) {
  if (n == 0) ops.resize(ref.ops.size());
  ++n;
  bool differs = false;
  for (std::size_t i = 0; i < ref.ops.size(); ++i) {
    add_kernels(ops[i].forward, d.ops[i].forward);
    add_kernels(ops[i].backward, d.ops[i].backward);
    differs |= d.ops[i].nccl_bytes != ref.ops[i].nccl_bytes;
  }
  nccl_differing += differs ? 1 : 0;
  optimizer += d.optimizer.ps();
  optimizer_idle += d.optimizer_idle.ps();
  for (const auto& [what, count] : d.skipped) skipped[what] += count;
  for (const auto& [what, count] : d.notes) notes[what] += count;
}

DraftSums sum_drafts(const std::vector<const IterationDraft*>& used) {
  DraftSums s;
  for (const IterationDraft* d : used) s.add(*d, *used.back());
  return s;
}

void IterationFold::note_records() {
  const std::size_t held = listed_.size() + (earliest_ ? 1 : 0) + only_comm_.size() + differ_.size();
  records_high_water_ = std::max(records_high_water_, static_cast<std::int64_t>(held));
}

bool IterationFold::wants(const std::string& window, bool launched) {
  if (!launched) {
    idle_.add(window);
    return false;
  }
  ++with_work_;
  if (steps_ > 0 && drafts_ >= static_cast<std::size_t>(steps_)) {
    unselected_.add(window);
    return false;
  }
  return true;
}

void IterationFold::add(const std::string& window, IterationDraft d) {
  if (d.ops.empty()) {
    only_comm_.push_back(window + ": no compute on the device, only communication");
    return note_records();
  }
  ++drafts_;
  if (!ref_) ref_ = std::move(d);
  const IterationDraft& x = drafts_ == 1 ? *ref_ : d;
  const std::string diff = structure_difference(x, *ref_);
  if (!diff.empty()) {
    differ_.push_back(x.stats.name + ": its ops differ from " + ref_->stats.name + "'s (" + diff + ")");
    return note_records();
  }
  sums_.add(x, *ref_);
  averaged_.add(x.stats);
  // Listed: the latest kListedIterations - 1, and the earliest (which is the latest met so far).
  if (listed_.size() + 1 < kListedIterations) listed_.push_back(x.stats);
  else earliest_ = x.stats;
  note_records();
}

void IterationFold::finish(const std::string& source, int device, KinetoImportReport& r) {
  r.skipped.insert(r.skipped.end(), only_comm_.begin(), only_comm_.end());
  if (idle_.n > 0)
    r.skipped.push_back(idle_.text() + ": no GPU activity launched (profiling stopped or warm-up)");
  if (unselected_.n > 0)
    r.skipped.push_back(unselected_.text() + ": not selected (--steps " + std::to_string(steps_) +
                        " averages the last complete iterations)");
  if (!ref_)
    throw InputError(source + ": no complete iteration with GPU work on device " + std::to_string(device));
  if (steps_ > static_cast<int>(drafts_))
    r.notes.push_back("--steps " + std::to_string(steps_) + " asked for more iterations than the " +
                      std::to_string(with_work_) + " with GPU work");
  r.skipped.insert(r.skipped.end(), differ_.rbegin(), differ_.rend());
  r.iterations.clear();
  if (earliest_) r.iterations.push_back(*earliest_);
  r.iterations.insert(r.iterations.end(), listed_.rbegin(), listed_.rend());
  r.iteration_count = averaged_.n;
  r.average = averaged_.mean(r.iterations.front().name, r.iterations.back().name);
  report_counts(sums_, r.skipped, r.notes);
}

void report_counts(const DraftSums& sums, std::vector<std::string>& skipped,
                   std::vector<std::string>& notes) {
  for (const auto& [what, count] : sums.skipped)
    skipped.push_back(counted(what + " (over the averaged iterations)", count));
  for (const auto& [what, count] : sums.notes) notes.push_back(counted(what, count));
}

}  // namespace hybridsim::workloads::kineto_detail

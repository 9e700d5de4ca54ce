#include "analysis/trace/busy_fraction_bins.h"

#include <algorithm>

#include "sim/error.h"

namespace hybridsim::analysis {

BusyFractionBins::BusyFractionBins(sim::Time bin) : bin_ps_(bin.ps()) {
  if (bin_ps_ <= 0) throw InternalError("BusyFractionBins: the bin must be positive");
}

void BusyFractionBins::emit(std::int64_t bin, double fraction, std::vector<Sample>& out) {
  if (last_ && *last_ == fraction) return;
  last_ = fraction;
  out.push_back({sim::Time::ps(bin * bin_ps_), fraction});
}

void BusyFractionBins::close_bin(std::vector<Sample>& out) {
  emit(*bin_index_, static_cast<double>(busy_ps_) / static_cast<double>(bin_ps_), out);
  busy_ps_ = 0;
}

void BusyFractionBins::add(sim::Time start, sim::Time end, std::vector<Sample>& out) {
  std::int64_t s = start.ps();
  const std::int64_t e = end.ps();
  if (bin_index_) s = std::max(s, covered_until_ps_);
  if (e <= s || s < 0) return;
  covered_until_ps_ = e;
  const std::int64_t first = s / bin_ps_;
  const std::int64_t last = (e - 1) / bin_ps_;  // the bin holding the interval's last picosecond
  if (!bin_index_) {
    if (first > 0) emit(0, 0.0, out);  // the track starts idle
    bin_index_ = first;
  } else if (first > *bin_index_) {
    close_bin(out);
    if (first > *bin_index_ + 1) emit(*bin_index_ + 1, 0.0, out);  // idle bins in between
    bin_index_ = first;
  }
  if (last == first) {
    busy_ps_ += e - s;
    return;
  }
  busy_ps_ += (first + 1) * bin_ps_ - s;
  close_bin(out);
  if (last > first + 1) emit(first + 1, 1.0, out);  // whole bins busy
  bin_index_ = last;
  busy_ps_ = e - last * bin_ps_;
}

void BusyFractionBins::finish(std::vector<Sample>& out) {
  if (!bin_index_) return;
  close_bin(out);
  emit(*bin_index_ + 1, 0.0, out);
}

}  // namespace hybridsim::analysis

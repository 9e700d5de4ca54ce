// The busy fraction of one resource (a link) over fixed time bins, as counter samples that are
// written only when the value changes: busy intervals come in start order, bin k = [k·bin, (k+1)·bin)
// gets the sample (k·bin, busy time in it / bin). Memory is constant; nothing is kept per bin.
//   BusyFractionBins b(Time::us(100));  std::vector<BusyFractionBins::Sample> s;
//   b.add(Time::us(50), Time::us(250), s);  b.finish(s);
//   // s = {0 µs: 0.5, 100 µs: 1.0, 200 µs: 0.5, 300 µs: 0}
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/time.h"

namespace hybridsim::analysis {

class BusyFractionBins {
 public:
  struct Sample {
    sim::Time ts;
    double fraction;  // 0 to 1
    bool operator==(const Sample&) const = default;
  };

  // bin must be positive (InternalError otherwise).
  explicit BusyFractionBins(sim::Time bin);

  // Adds the busy interval [start, end). Intervals are expected in start order and disjoint, as a
  // FIFO link serves its messages; any part of one that lies before the end of the previous one is
  // not counted twice. Appends to `out` the samples of the bins this completes.
  void add(sim::Time start, sim::Time end, std::vector<Sample>& out);
  // Appends the samples of the bin in progress and a 0 at the end of it (nothing if no interval
  // was ever added). No add() after it.
  void finish(std::vector<Sample>& out);

  bool is_used() const { return bin_index_.has_value(); }

 private:
  void close_bin(std::vector<Sample>& out);
  void emit(std::int64_t bin, double fraction, std::vector<Sample>& out);

  std::int64_t bin_ps_;
  std::optional<std::int64_t> bin_index_;  // the bin in progress
  std::int64_t busy_ps_ = 0;               // busy time counted in it
  std::int64_t covered_until_ps_ = 0;      // end of the last interval
  std::optional<double> last_;             // last sample written
};

}  // namespace hybridsim::analysis

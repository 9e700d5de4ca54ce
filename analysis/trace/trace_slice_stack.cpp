// TraceSliceStack: a vector used as a stack whose popped entries keep their strings, so a thread's
// slices reuse the same buffers; the slices that ended at one time are kept until one ends later.
#include "analysis/trace/trace_slice_stack.h"

#include <algorithm>

namespace hybridsim::analysis {

TraceSliceStack::Open& TraceSliceStack::push(std::int64_t end_ns) {
  if (depth_ == open_.size()) open_.emplace_back();
  Open& o = open_[depth_++];
  o.end_ns = end_ns;
  o.repeat = 1;
  return o;
}

void TraceSliceStack::pop() {
  const Open& o = open_[--depth_];
  // Slices close in the order of their ends, so a later end starts a new set of "ended last".
  if (o.end_ns != ended_at_ns_) {
    ended_at_ns_ = o.end_ns;
    ended_count_ = 0;
  }
  if (ended_count_ == ended_.size()) ended_.emplace_back();
  ended_[ended_count_].first.assign(o.key);
  ended_[ended_count_].second = o.repeat;
  ++ended_count_;
}

int TraceSliceStack::repeat_for(std::string_view key, std::int64_t start_ns) const {
  if (start_ns != ended_at_ns_) return 1;
  int repeat = 1;
  for (std::size_t i = 0; i < ended_count_; ++i)
    if (ended_[i].first == key) repeat = std::max(repeat, ended_[i].second + 1);
  return repeat;
}

}  // namespace hybridsim::analysis

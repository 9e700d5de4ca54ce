// The slices of one trace thread whose end event is not written yet, innermost last, and the
// slices that ended last: what ChromeTraceWriter needs to write begin/end pairs that nest the same
// way in every viewer. Memory is the thread's nesting depth; strings keep their capacity for reuse.
//   TraceSliceStack s;
//   auto& o = s.push(/*end_ns=*/90);  o.key = "conv1";
//   while (!s.empty() && s.top().end_ns <= 100) s.pop();  // a slice starting at 100 closes it
//   s.repeat_for("conv1", 90);                             // 1: it ended at 90, not at 100
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hybridsim::analysis {

class TraceSliceStack {
 public:
  struct Open {
    std::int64_t end_ns = 0;
    std::string key;       // name and args without "repeat": what speedscope pairs ends by
    int repeat = 1;        // 1, or its place in a run of identical slices back to back
    std::string end_head;  // its end event up to the timestamp: {"name":…,"ph":"E","ts":
    std::string end_tail;  // and after it: ,"pid":…,"tid":…,"args":{…}}
  };

  bool empty() const { return depth_ == 0; }
  const Open& top() const { return open_[depth_ - 1]; }
  // A new innermost slice ending at `end_ns`; the caller fills in the rest.
  Open& push(std::int64_t end_ns);
  // Removes the innermost slice (its end event written by the caller), remembering its key and
  // repeat number if it is among the slices that ended last (those ending at the latest time).
  void pop();
  // The "repeat" number a slice with `key` that starts at `start_ns` needs: one more than that of an
  // identical slice that ended exactly at `start_ns`, else 1.
  int repeat_for(std::string_view key, std::int64_t start_ns) const;

  // The start of the last slice written on the thread (slices must come in start order).
  std::int64_t last_start_ns = std::numeric_limits<std::int64_t>::min();

 private:
  std::vector<Open> open_;  // [0, depth_) are open
  std::size_t depth_ = 0;
  std::vector<std::pair<std::string, int>> ended_;  // [0, ended_count_): key and repeat
  std::size_t ended_count_ = 0;
  std::int64_t ended_at_ns_ = std::numeric_limits<std::int64_t>::min();
};

}  // namespace hybridsim::analysis

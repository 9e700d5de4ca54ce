// TrackAllocator: first-fit lane assignment. A lane remembers only when its last slice ends, so a
// slice starting at or after that time cannot overlap anything on it, whatever order calls come in.
#include "analysis/trace/trace_track_allocator.h"

#include "sim/error.h"

namespace hybridsim::analysis {

namespace {
// Sort-index stride between tracks of one process: lanes of a track sort together below it.
constexpr std::int64_t kLanesPerTrackOrder = 1000;
}  // namespace

TrackAllocator::TrackAllocator(ChromeTraceWriter& writer, TraceTid first_tid)
    : writer_(writer), first_tid_(first_tid) {}

TrackAllocator::TrackId TrackAllocator::track(TracePid pid, std::string_view name) {
  std::pair<TracePid, std::string> key{pid, std::string(name)};
  if (const auto it = by_name_.find(key); it != by_name_.end()) return it->second;
  auto [process, inserted] = processes_.try_emplace(pid, Process{first_tid_, 0});
  const TrackId id = tracks_.size();
  tracks_.push_back({pid, key.second, process->second.tracks++, {}});
  by_name_.emplace(std::move(key), id);
  return id;
}

TraceTid TrackAllocator::lane(TrackId id, sim::Time start, sim::Time end) {
  if (end < start)
    throw InternalError("TrackAllocator: slice ends (" + sim::format_time(end) + ") before it starts (" +
                        sim::format_time(start) + ")");
  Track& t = tracks_.at(id);
  for (Lane& l : t.lanes) {
    if (l.busy_until <= start) {
      l.busy_until = end;
      return l.tid;
    }
  }
  Process& p = processes_.at(t.pid);
  const TraceTid tid = p.next_tid++;
  const auto number = static_cast<std::int64_t>(t.lanes.size());
  t.lanes.push_back({tid, end});
  writer_.thread_name(t.pid, tid, number == 0 ? t.name : t.name + " #" + std::to_string(number + 1));
  writer_.thread_sort_index(t.pid, tid, t.order * kLanesPerTrackOrder + number);
  return tid;
}

}  // namespace hybridsim::analysis

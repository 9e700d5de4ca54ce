// Lanes for overlapping slices: a logical track (a process and a base thread name, e.g. one link)
// may carry slices that overlap in time; the Trace Event Format draws one thread's slices as a
// stack, so overlapping unnested slices must go to separate threads ("lanes"): "name", "name #2", ….
//   TrackAllocator lanes(writer);
//   auto link = lanes.track(3, "NVLink 0→1");
//   writer.complete(3, lanes.lane(link, t0, t1), "msg 7", "nvlink", t0, t1);
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/trace/chrome_trace_writer.h"
#include "sim/time.h"

namespace hybridsim::analysis {

class TrackAllocator {
 public:
  using TrackId = std::size_t;

  // Thread ids are handed out per process from `first_tid` upwards, in order of lane creation; the
  // allocator owns those ids in the processes it is used for (name other threads below first_tid).
  explicit TrackAllocator(ChromeTraceWriter& writer, TraceTid first_tid = 1);

  // Finds or creates the logical track (pid, name); no thread exists until its first lane() call.
  TrackId track(TracePid pid, std::string_view name);
  // The thread of the first lane of `track` whose last slice ended at or before `start` (so
  // [start, end) overlaps nothing on it), creating a lane if none is free: its thread_name
  // ("name", then "name #2", "name #3", …) and thread_sort_index (track order × 1000 + lane, so a
  // track's lanes stay together) are written at once. end < start is an InternalError.
  TraceTid lane(TrackId track, sim::Time start, sim::Time end);
  TraceTid lane(TracePid pid, std::string_view name, sim::Time start, sim::Time end) {
    return lane(track(pid, name), start, end);
  }

  std::size_t lane_count(TrackId track) const { return tracks_.at(track).lanes.size(); }

 private:
  struct Lane {
    TraceTid tid;
    sim::Time busy_until;
  };
  struct Track {
    TracePid pid;
    std::string name;
    std::int64_t order;  // index of the track among those of its process
    std::vector<Lane> lanes;
  };
  struct Process {
    TraceTid next_tid;
    std::int64_t tracks = 0;
  };

  ChromeTraceWriter& writer_;
  TraceTid first_tid_;
  std::vector<Track> tracks_;
  std::map<std::pair<TracePid, std::string>, TrackId, std::less<>> by_name_;
  std::map<TracePid, Process> processes_;
};

}  // namespace hybridsim::analysis

// A streaming writer of the Chrome Trace Event Format (JSON object form), which ui.perfetto.dev and
// chrome://tracing open. Events go to the file as they come (memory does not grow with the trace);
// the file appears atomically on finish(). It knows nothing of GPUs: callers map their things to
// processes (pid) and threads (tid). Times are sim::Time, written as µs with 3 decimals (nearest ns).
//   ChromeTraceWriter w("run.json");
//   w.process_name(1, "GPU0");  w.thread_name(1, 1, "compute");
//   w.complete(1, 1, "conv1", "kernel", Time::us(0), Time::us(42), {{"flops", 1'000'000}});
//   w.finish();
#pragma once
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "analysis/output/atomic_file.h"
#include "sim/time.h"
#include "sim/time_window.h"

namespace hybridsim::analysis {

using TracePid = std::int64_t;
using TraceTid = std::int64_t;

// One key/value of an event's "args": a string, an integer, a double or a bool. The key and a
// string value are views: they must outlive the call that takes the argument, nothing more.
struct TraceArg {
  TraceArg(std::string_view k, std::string_view v) : key(k), value(v) {}
  TraceArg(std::string_view k, const char* v) : key(k), value(std::string_view(v)) {}
  TraceArg(std::string_view k, const std::string& v) : key(k), value(std::string_view(v)) {}
  TraceArg(std::string_view k, bool v) : key(k), value(v) {}
  TraceArg(std::string_view k, double v) : key(k), value(v) {}
  template <typename I>
  requires(std::is_integral_v<I> && !std::is_same_v<I, bool> && !std::is_same_v<I, char>)
      TraceArg(std::string_view k, I v)
      : key(k) {
    if constexpr (std::is_signed_v<I>)
      value = static_cast<std::int64_t>(v);
    else
      value = static_cast<std::uint64_t>(v);
  }

  std::string_view key;
  std::variant<std::string_view, std::int64_t, std::uint64_t, double, bool> value;
};

// A view of the arguments of one event: `{{"bytes", 512}, {"route", "nv0"}}` or a span of them.
class TraceArgs {
 public:
  TraceArgs() = default;
  TraceArgs(std::initializer_list<TraceArg> args) : args_(args.begin(), args.size()) {}
  TraceArgs(std::span<const TraceArg> args) : args_(args) {}
  auto begin() const { return args_.begin(); }
  auto end() const { return args_.end(); }
  bool empty() const { return args_.empty(); }

 private:
  std::span<const TraceArg> args_;
};

// Keep only events in [start, end). A slice that crosses a boundary is clipped to the window (so a
// long kernel still shows as busy); a zero-length slice, counter sample or flow end is kept iff
// start <= t < end; a flow is kept only if both its ends are. A counter's last value before the
// window is repeated at `start`, so the track starts at the right level.
using TraceWindow = sim::TimeWindow;  // [start, end)

struct ChromeTraceOptions {
  bool gzip = false;                                      // compress the file with gzip (zlib)
  std::optional<TraceWindow> window = std::nullopt;       // none: all times
  std::optional<std::set<TracePid>> pids = std::nullopt;  // none: all processes; else only these
};

// One end of a flow arrow: it binds to the slice that encloses `ts` on thread (pid, tid).
struct FlowEnd {
  TracePid pid = 0;
  TraceTid tid = 0;
  sim::Time ts;
};

class ChromeTraceWriter {
 public:
  // Opens `<path>.tmp-XXXXXX` (see AtomicFile); throws InputError if the window is empty or
  // reversed or the file cannot be created.
  explicit ChromeTraceWriter(std::filesystem::path path, ChromeTraceOptions options = {});

  // Metadata events (ph "M"): names and display order of processes and threads.
  void process_name(TracePid pid, std::string_view name);
  void process_sort_index(TracePid pid, std::int64_t index);
  void thread_name(TracePid pid, TraceTid tid, std::string_view name);
  void thread_sort_index(TracePid pid, TraceTid tid, std::int64_t index);
  // A string entry of the top-level "otherData" object (written at finish(), in insertion order;
  // setting a key again replaces its value).
  void other_data(std::string_view key, std::string_view value);

  // A slice [start, end) on one thread (ph "X"). Slices on one thread must not overlap unless
  // properly nested; TrackAllocator spreads overlapping ones over lanes. end < start is an
  // InternalError. ts and dur are rounded to ns as round(start) and round(end) - round(start), so
  // rounding never makes touching slices overlap.
  void complete(TracePid pid, TraceTid tid, std::string_view name, std::string_view category, sim::Time start,
                sim::Time end, TraceArgs args = {});
  // A counter sample (ph "C"): each numeric arg is one series of the counter track `name` of `pid`,
  // holding its value from `ts` until the next sample. A string arg is an InternalError.
  void counter(TracePid pid, std::string_view name, sim::Time ts, TraceArgs values);
  // A flow arrow from one slice to another: ph "s" at `from`, ph "f" with "bp":"e" at `to`, the same
  // name, category and id. Returns the id (1, 2, 3, … in call order, counted even when the filters
  // drop the flow, so ids do not depend on the filters).
  std::uint64_t flow(std::string_view name, std::string_view category, FlowEnd from, FlowEnd to);

  // Writes the closing brackets, displayTimeUnit and otherData, and renames the file into place.
  // Without finish() (an exception, an early return) the destructor leaves no file behind.
  void finish();

  // Bytes in the file so far (compressed if gzip); after finish() the size of the file.
  std::int64_t bytes_written() const { return file_.bytes_written(); }
  std::int64_t events_written() const { return events_written_; }
  std::int64_t events_dropped() const { return events_dropped_; }
  const std::filesystem::path& path() const { return file_.target(); }

 private:
  bool keeps_pid(TracePid pid) const;
  bool in_window(sim::Time t) const;
  void begin_event(std::string_view name, std::optional<std::string_view> category, char phase);
  void append_ids(TracePid pid, const TraceTid* tid);
  void end_event();
  void metadata(std::string_view name, TracePid pid, const TraceTid* tid, const TraceArg& arg);
  void write_counter(TracePid pid, std::string_view name, sim::Time ts, std::string_view args_json);
  void flow_end(char phase, std::string_view name, std::string_view category, std::uint64_t id,
                const FlowEnd& end);

  AtomicFile file_;
  ChromeTraceOptions options_;
  std::string event_;  // the event being formatted, reused
  std::string args_;   // a counter's "args" object, reused
  std::vector<std::pair<std::string, std::string>> other_data_;
  // Last sample before the window of each counter track, not yet repeated at the window's start.
  std::map<std::pair<TracePid, std::string>, std::string> pending_counters_;
  std::uint64_t next_flow_id_ = 1;
  std::int64_t events_written_ = 0;
  std::int64_t events_dropped_ = 0;
  bool finished_ = false;
};

}  // namespace hybridsim::analysis

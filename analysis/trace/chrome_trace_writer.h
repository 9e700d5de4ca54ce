// A streaming writer of the Chrome Trace Event Format (JSON object form), which ui.perfetto.dev,
// chrome://tracing and speedscope open. Events go to the file as they come (memory grows with the
// number of threads and their nesting depth, never with the trace); the file appears atomically on
// finish(). It knows nothing of GPUs: callers map their things to processes (pid) and threads (tid).
// Times are sim::Time, written as µs with 3 decimals (nearest ns). A slice is a begin and an end
// event (ph B / E), so an end and the next start are the same text, which every viewer reads as the
// same number; the rules that make slices nest alike in every viewer: analysis/README.md.
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
#include "analysis/trace/trace_slice_stack.h"
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
// window is repeated at `start`, so the track starts at the right level, and a window with an end
// carries every counter track's last value to that end (or to end_at's time, if sooner), so a track
// does not stop at its last change. A clipped slice gets the arg "clipped": "start", "end" or "both"
// (the ends the window cut off), so that a viewer shows it was longer.
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

  // Metadata events (ph "M"): names and display order of processes and threads. A thread's name
  // and sort index are written just before its first event (slice or flow end) that passes the
  // filters, so a thread the filters leave empty is not named; a process is named at once.
  void process_name(TracePid pid, std::string_view name);
  void process_sort_index(TracePid pid, std::int64_t index);
  void thread_name(TracePid pid, TraceTid tid, std::string_view name);
  void thread_sort_index(TracePid pid, TraceTid tid, std::int64_t index);
  // A string entry of the top-level "otherData" object (written at finish(), in insertion order;
  // setting a key again replaces its value).
  void other_data(std::string_view key, std::string_view value);

  // A slice [start, end) on one thread. Per thread, slices must come in the order of their starts,
  // an enclosing slice before the slices it holds (so at equal starts the longer first), and two
  // slices must be disjoint or nested; the writer checks both on the times as written (rounded to
  // ns, clipped to the window) and throws InternalError otherwise, so what it writes always nests.
  // TrackAllocator spreads overlapping slices over lanes. end < start is an InternalError too.
  // Written as a begin event (ph "B": name, cat, ts = round(start), args) at once and an end event
  // (ph "E": name, ts = round(end) and the same args, since speedscope pairs them by name and args)
  // once a later slice on the thread starts at or after its end, or at finish(). A slice whose
  // rounded length is 0 is a thread-scoped instant (ph "i", "s":"t") instead. A slice that starts
  // exactly where one with the same name and args ended on its thread gets the arg "repeat": 2 (3,
  // … along such a run): speedscope would otherwise open it before closing the other.
  void complete(TracePid pid, TraceTid tid, std::string_view name, std::string_view category, sim::Time start,
                sim::Time end, TraceArgs args = {});
  // A counter sample (ph "C"): each numeric arg is one series of the counter track `name` of `pid`,
  // holding its value from `ts` until the next sample. A string arg is an InternalError.
  void counter(TracePid pid, std::string_view name, sim::Time ts, TraceArgs values);
  // A flow arrow from one slice to another: ph "s" at `from`, ph "f" with "bp":"e" at `to`, the same
  // name, category and id. Returns the id (1, 2, 3, … in call order, counted even when the filters
  // drop the flow, so ids do not depend on the filters).
  std::uint64_t flow(std::string_view name, std::string_view category, FlowEnd from, FlowEnd to);

  // Writes the end events still open (by pid, then tid), the closing brackets, displayTimeUnit and
  // otherData, and renames the file into place. Without finish() (an exception, an early return)
  // the destructor leaves no file behind.
  void finish();
  // The end of what is traced (a step's end): counters are carried to the window's end only up to it.
  void end_at(sim::Time end) { end_ = end; }

  // Bytes in the file so far (compressed if gzip); after finish() the size of the file.
  std::int64_t bytes_written() const { return file_.bytes_written(); }
  std::int64_t events_written() const { return events_written_; }
  std::int64_t events_dropped() const { return events_dropped_; }
  const std::filesystem::path& path() const { return file_.target(); }

 private:
  struct ThreadState {
    std::string name;  // its thread_name, until written
    std::optional<std::int64_t> sort_index;
    bool has_name = false;
    bool announced = false;  // its metadata is in the file
    TraceSliceStack slices;
  };

  bool keeps_pid(TracePid pid) const;
  bool in_window(sim::Time t) const;
  ThreadState& used_thread(TracePid pid, TraceTid tid);  // writes its metadata if not yet done
  // A kept thread whose metadata waits for its first event; null if it has events or is filtered.
  ThreadState* pending_thread(TracePid pid, TraceTid tid);
  void begin_event(std::string_view name, std::optional<std::string_view> category, char phase);
  void append_ids(TracePid pid, const TraceTid* tid);
  void end_event();
  void metadata(std::string_view name, TracePid pid, const TraceTid* tid, const TraceArg& arg);
  void close_slices(TraceSliceStack& slices, std::int64_t until_ns);
  void write_counter(TracePid pid, std::string_view name, sim::Time ts, std::string_view args_json);
  void flow_end(char phase, std::string_view name, std::string_view category, std::uint64_t id,
                const FlowEnd& end);

  AtomicFile file_;
  ChromeTraceOptions options_;
  std::string event_;  // the event being formatted, reused
  std::string args_;   // a slice's or counter's "args" object, reused
  std::string key_;    // a slice's name and args, reused
  std::map<std::pair<TracePid, TraceTid>, ThreadState> threads_;
  std::vector<std::pair<std::string, std::string>> other_data_;
  // Last sample before the window of each counter track, not yet repeated at the window's start.
  std::map<std::pair<TracePid, std::string>, std::string> pending_counters_;
  // With a window that ends: each counter track's last sample written (time, args), carried to the end.
  std::map<std::pair<TracePid, std::string>, std::pair<sim::Time, std::string>> last_counters_;
  std::optional<sim::Time> end_;
  std::uint64_t next_flow_id_ = 1;
  std::int64_t events_written_ = 0;
  std::int64_t events_dropped_ = 0;
  bool finished_ = false;
};

}  // namespace hybridsim::analysis

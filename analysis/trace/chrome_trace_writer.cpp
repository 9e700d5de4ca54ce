// ChromeTraceWriter: each event is formatted into one reused string and handed to the AtomicFile,
// which buffers (and gzips) it; in memory stay only each thread's open slices (their end events,
// written once a later slice starts at or after their end), thread names not yet written and the
// counters' pre-window values. Field order is fixed (name, cat, ph, ts, pid, tid, s, id, bp, args)
// so the text is deterministic.
#include "analysis/trace/chrome_trace_writer.h"

#include <limits>

#include "analysis/output/json_text.h"
#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

void append_arg_value(std::string& out, const TraceArg& arg) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string_view>)
          append_json_string(out, v);
        else if constexpr (std::is_same_v<V, std::int64_t>)
          append_json_int(out, v);
        else if constexpr (std::is_same_v<V, std::uint64_t>)
          append_json_uint(out, v);
        else if constexpr (std::is_same_v<V, double>)
          append_json_double(out, v);
        else
          out += v ? "true" : "false";
      },
      arg.value);
}

// Appends `"args":{...}` (nothing when there are no args and `always` is false).
// Adds "key":value (value already JSON) at the end of an args object made by append_args (or
// to nothing: then it makes the object).
void add_arg(std::string& args, std::string_view key, std::string_view json_value) {
  if (args.empty()) args = ",\"args\":{}";
  std::string entry(args.size() > 10 ? "," : "");
  append_json_string(entry, key);
  entry += ':';
  entry += json_value;
  args.insert(args.size() - 1, entry);
}

void append_args(std::string& out, TraceArgs args, bool always) {
  if (args.empty() && !always) return;
  out += ",\"args\":{";
  bool first = true;
  for (const auto& a : args) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, a.key);
    out += ':';
    append_arg_value(out, a);
  }
  out += '}';
}

// Validates the window before the file is created (so a bad option leaves no temporary file).
std::filesystem::path checked_window(std::filesystem::path path, const ChromeTraceOptions& options) {
  if (options.window && !(options.window->start < options.window->end))
    throw InputError("trace window [" + sim::format_time(options.window->start) + ", " +
                     sim::format_time(options.window->end) + "): expected a start before the end");
  return path;
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::filesystem::path path, ChromeTraceOptions options)
    : file_(checked_window(std::move(path), options),
            options.gzip ? AtomicFile::Compression::gzip : AtomicFile::Compression::none),
      options_(std::move(options)) {
  event_.reserve(512);
  file_.write("{\"traceEvents\":[");
}

bool ChromeTraceWriter::keeps_pid(TracePid pid) const {
  return !options_.pids || options_.pids->contains(pid);
}

bool ChromeTraceWriter::in_window(sim::Time t) const {
  return !options_.window || (options_.window->start <= t && t < options_.window->end);
}

void ChromeTraceWriter::begin_event(std::string_view name, std::optional<std::string_view> category,
                                    char phase) {
  if (finished_) throw InternalError("ChromeTraceWriter: event after finish()");
  event_.assign(events_written_ == 0 ? "\n{\"name\":" : ",\n{\"name\":");
  append_json_string(event_, name);
  if (category) {
    event_ += ",\"cat\":";
    append_json_string(event_, *category);
  }
  event_ += ",\"ph\":\"";
  event_ += phase;
  event_ += '"';
}

void ChromeTraceWriter::end_event() {
  event_ += '}';
  file_.write(event_);
  ++events_written_;
}

void ChromeTraceWriter::append_ids(TracePid pid, const TraceTid* tid) {
  event_ += ",\"pid\":";
  append_json_int(event_, pid);
  if (tid) {
    event_ += ",\"tid\":";
    append_json_int(event_, *tid);
  }
}

void ChromeTraceWriter::metadata(std::string_view name, TracePid pid, const TraceTid* tid,
                                 const TraceArg& arg) {
  if (!keeps_pid(pid)) {
    ++events_dropped_;
    return;
  }
  begin_event(name, std::nullopt, 'M');
  append_ids(pid, tid);
  append_args(event_, {arg}, true);
  end_event();
}

void ChromeTraceWriter::process_name(TracePid pid, std::string_view name) {
  metadata("process_name", pid, nullptr, {"name", name});
}

void ChromeTraceWriter::process_sort_index(TracePid pid, std::int64_t index) {
  metadata("process_sort_index", pid, nullptr, {"sort_index", index});
}

ChromeTraceWriter::ThreadState* ChromeTraceWriter::pending_thread(TracePid pid, TraceTid tid) {
  if (!keeps_pid(pid)) return nullptr;
  ThreadState& t = threads_[{pid, tid}];
  return t.announced ? nullptr : &t;
}

void ChromeTraceWriter::thread_name(TracePid pid, TraceTid tid, std::string_view name) {
  if (ThreadState* t = pending_thread(pid, tid)) {
    t->name.assign(name);
    t->has_name = true;
  } else {
    metadata("thread_name", pid, &tid, {"name", name});  // the thread has events, or its pid is dropped
  }
}

void ChromeTraceWriter::thread_sort_index(TracePid pid, TraceTid tid, std::int64_t index) {
  if (ThreadState* t = pending_thread(pid, tid))
    t->sort_index = index;
  else
    metadata("thread_sort_index", pid, &tid, {"sort_index", index});
}

ChromeTraceWriter::ThreadState& ChromeTraceWriter::used_thread(TracePid pid, TraceTid tid) {
  ThreadState& t = threads_[{pid, tid}];
  if (t.announced) return t;
  t.announced = true;
  if (t.has_name) metadata("thread_name", pid, &tid, {"name", t.name});
  if (t.sort_index) metadata("thread_sort_index", pid, &tid, {"sort_index", *t.sort_index});
  t.name.clear();
  t.name.shrink_to_fit();
  return t;
}

void ChromeTraceWriter::other_data(std::string_view key, std::string_view value) {
  for (auto& kv : other_data_) {
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  }
  other_data_.emplace_back(key, value);
}

void ChromeTraceWriter::close_slices(TraceSliceStack& slices, std::int64_t until_ns) {
  while (!slices.empty() && slices.top().end_ns <= until_ns) {
    const TraceSliceStack::Open& o = slices.top();
    event_.assign(events_written_ == 0 ? "\n" : ",\n");
    event_ += o.end_head;
    append_trace_us(event_, o.end_ns);
    event_ += o.end_tail;
    file_.write(event_);
    ++events_written_;
    slices.pop();
  }
}

void ChromeTraceWriter::complete(TracePid pid, TraceTid tid, std::string_view name, std::string_view category,
                                 sim::Time start, sim::Time end, TraceArgs args) {
  if (end < start)
    throw InternalError("ChromeTraceWriter: slice \"" + std::string(name) + "\" ends (" +
                        sim::format_time(end) + ") before it starts (" + sim::format_time(start) + ")");
  bool keep = keeps_pid(pid);
  std::string_view clipped;  // which ends the window cut off, as the slice's "clipped" arg
  if (keep && options_.window) {
    const TraceWindow& w = *options_.window;
    keep = start == end ? in_window(start) : (start < w.end && end > w.start);
    const bool cut_start = start < w.start, cut_end = end > w.end;
    clipped = cut_start && cut_end ? "both" : cut_start ? "start" : cut_end ? "end" : "";
    start = sim::max(start, w.start);
    end = sim::max(start, sim::min(end, w.end));
  }
  if (!keep) {
    ++events_dropped_;
    return;
  }
  const std::int64_t ts_ns = round_to_ns(start);
  const std::int64_t end_ns = round_to_ns(end);
  TraceSliceStack& slices = used_thread(pid, tid).slices;
  auto where = [&] {
    return "slice \"" + std::string(name) + "\" [" + std::to_string(ts_ns) + " ns, " +
           std::to_string(end_ns) + " ns) on pid " + std::to_string(pid) + " tid " + std::to_string(tid);
  };
  if (ts_ns < slices.last_start_ns)
    throw InternalError("ChromeTraceWriter: " + where() + " starts before the slice written before it (" +
                        std::to_string(slices.last_start_ns) + " ns): a thread's slices come in start order");
  slices.last_start_ns = ts_ns;
  close_slices(slices, ts_ns);
  if (!slices.empty() && end_ns > slices.top().end_ns)
    throw InternalError("ChromeTraceWriter: " + where() + " overlaps an open slice ending at " +
                        std::to_string(slices.top().end_ns) + " ns without nesting in it");
  args_.clear();
  append_args(args_, args, false);
  if (!clipped.empty()) add_arg(args_, "clipped", "\"" + std::string(clipped) + "\"");
  if (end_ns == ts_ns) {  // nothing to nest: an instant, which no viewer can mis-nest
    begin_event(name, category, 'i');
    event_ += ",\"ts\":";
    append_trace_us(event_, ts_ns);
    append_ids(pid, &tid);
    event_ += ",\"s\":\"t\"";
    event_ += args_;
    end_event();
    return;
  }
  key_.assign(name);
  key_ += '\x1f';
  key_ += args_;
  const int repeat = slices.repeat_for(key_, ts_ns);
  if (repeat > 1) add_arg(args_, "repeat", std::to_string(repeat));
  begin_event(name, category, 'B');
  event_ += ",\"ts\":";
  append_trace_us(event_, ts_ns);
  append_ids(pid, &tid);
  event_ += args_;
  end_event();

  TraceSliceStack::Open& open = slices.push(end_ns);
  open.key.assign(key_);
  open.repeat = repeat;
  open.end_head.assign("{\"name\":");
  append_json_string(open.end_head, name);
  open.end_head += ",\"ph\":\"E\",\"ts\":";
  open.end_tail.clear();
  open.end_tail += ",\"pid\":";
  append_json_int(open.end_tail, pid);
  open.end_tail += ",\"tid\":";
  append_json_int(open.end_tail, tid);
  open.end_tail += args_;
  open.end_tail += '}';
}

void ChromeTraceWriter::write_counter(TracePid pid, std::string_view name, sim::Time ts,
                                      std::string_view args_json) {
  if (options_.window && options_.window->end != sim::Time::max())
    last_counters_[{pid, std::string(name)}] = {ts, std::string(args_json)};
  begin_event(name, std::nullopt, 'C');
  event_ += ",\"ts\":";
  append_trace_us(event_, ts);
  append_ids(pid, nullptr);
  event_ += args_json;
  end_event();
}

void ChromeTraceWriter::counter(TracePid pid, std::string_view name, sim::Time ts, TraceArgs values) {
  for (const auto& v : values)
    if (std::holds_alternative<std::string_view>(v.value))
      throw InternalError("ChromeTraceWriter: counter \"" + std::string(name) + "\" series \"" +
                          std::string(v.key) + "\" is a string; counters take numbers");
  if (!keeps_pid(pid)) {
    ++events_dropped_;
    return;
  }
  args_.clear();
  append_args(args_, values, true);
  if (options_.window) {
    const TraceWindow& w = *options_.window;
    if (ts < w.start) {  // remembered, to be repeated at the window's start
      pending_counters_[{pid, std::string(name)}] = args_;
      ++events_dropped_;
      return;
    }
    if (ts >= w.end) {
      ++events_dropped_;
      return;
    }
    const auto it = pending_counters_.find({pid, std::string(name)});
    if (it != pending_counters_.end()) {
      if (ts > w.start) write_counter(pid, name, w.start, it->second);
      pending_counters_.erase(it);
    }
  }
  write_counter(pid, name, ts, args_);
}

void ChromeTraceWriter::flow_end(char phase, std::string_view name, std::string_view category,
                                 std::uint64_t id, const FlowEnd& end) {
  used_thread(end.pid, end.tid);
  begin_event(name, category, phase);
  event_ += ",\"ts\":";
  append_trace_us(event_, end.ts);
  append_ids(end.pid, &end.tid);
  event_ += ",\"id\":";
  append_json_uint(event_, id);
  if (phase == 'f') event_ += ",\"bp\":\"e\"";
  end_event();
}

std::uint64_t ChromeTraceWriter::flow(std::string_view name, std::string_view category, FlowEnd from,
                                      FlowEnd to) {
  const std::uint64_t id = next_flow_id_++;
  if (!keeps_pid(from.pid) || !keeps_pid(to.pid) || !in_window(from.ts) || !in_window(to.ts)) {
    events_dropped_ += 2;
    return id;
  }
  flow_end('s', name, category, id, from);
  flow_end('f', name, category, id, to);
  return id;
}

void ChromeTraceWriter::finish() {
  if (finished_) throw InternalError("ChromeTraceWriter: finish() called twice");
  for (auto& [thread, state] : threads_) close_slices(state.slices, std::numeric_limits<std::int64_t>::max());
  // Counter tracks whose last change came before the window and none inside it: constant over it.
  if (options_.window)
    for (const auto& [key, args] : pending_counters_)
      write_counter(key.first, key.second, options_.window->start, args);
  pending_counters_.clear();
  // Every counter track of a window with an end is carried to it (or to the end of what is traced,
  // if sooner), so a track does not stop at its last change as if nothing followed.
  if (options_.window && options_.window->end != sim::Time::max()) {
    const sim::Time until = sim::min(options_.window->end, end_.value_or(sim::Time::max()));
    auto last = std::move(last_counters_);
    for (const auto& [key, sample] : last)
      if (sample.first < until) write_counter(key.first, key.second, until, sample.second);
  }
  finished_ = true;
  std::string tail = "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{";
  bool first = true;
  for (const auto& [key, value] : other_data_) {
    if (!first) tail += ',';
    first = false;
    append_json_string(tail, key);
    tail += ':';
    append_json_string(tail, value);
  }
  tail += "}}\n";
  file_.write(tail);
  file_.commit();
}

}  // namespace hybridsim::analysis

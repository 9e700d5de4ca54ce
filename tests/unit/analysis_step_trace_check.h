// Test helper: parses a written trace with nlohmann-json and checks it against the rules the viewers
// rely on (analysis/README.md, "How slices are written"), then hands back what the tests look at.
// Times are converted to integer nanoseconds. Every trace the tests write goes through check_trace:
// - fields per phase; per thread, begin (B), end (E) and instant (i) events in time order, each E
//   closing the innermost open B with the same name and args, nothing left open;
// - the nesting that speedscope builds (replayed by speedscope_nesting below) is the file's;
//   chrome://tracing takes B/E in file order and Perfetto sorts them stably by time, so the file's
//   nesting is theirs too;
// - every flow start has one finish with "bp":"e", each inside a slice of its own thread;
// - every process and thread with events is named, and no thread without events is;
// - counter values are finite and not negative, utilization at most 1.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/test_files.h"

namespace step_trace_test {

using TempDir = hybridsim::testing::ScratchDir;
using hybridsim::testing::read_gzip_file;
using hybridsim::testing::read_whole_file;

namespace fs = std::filesystem;
using nlohmann::json;
using Thread = std::pair<std::int64_t, std::int64_t>;  // (pid, tid)

inline std::int64_t to_ns(const json& us) { return std::llround(us.get<double>() * 1000.0); }

struct Slice {
  std::int64_t ts = 0;   // ns
  std::int64_t dur = 0;  // ns
  std::string name;
  std::string cat;
  json args;
  int depth = 0;       // 0: top level on its thread
  std::string parent;  // name of the enclosing slice ("" at top level)
  std::int64_t end() const { return ts + dur; }
};

struct CounterSample {
  std::int64_t ts = 0;  // ns
  double value = 0;
};

struct Trace {
  json doc;
  std::map<std::int64_t, std::string> process_names;
  std::map<std::int64_t, std::int64_t> process_sort;
  std::map<Thread, std::string> thread_names;
  std::map<Thread, std::vector<Slice>> slices;    // in start order, enclosing slices first
  std::map<Thread, std::vector<Slice>> instants;  // zero-length slices (ph "i"), dur 0
  std::map<std::pair<std::int64_t, std::string>, std::vector<CounterSample>> counters;  // (pid, name)
  int flows = 0;
  std::int64_t events = 0;

  std::int64_t pid_named(const std::string& name) const {
    for (const auto& [pid, n] : process_names)
      if (n == name) return pid;
    return -1;
  }
  const std::vector<Slice>& on(std::int64_t pid, std::int64_t tid) const {
    static const std::vector<Slice> none;
    const auto it = slices.find({pid, tid});
    return it == slices.end() ? none : it->second;
  }
  std::size_t slice_count() const {
    std::size_t n = 0;
    for (const auto& [thread, list] : slices) n += list.size();
    return n;
  }
};

inline bool has_number(const json& e, const char* key) { return e.contains(key) && e[key].is_number(); }

// One B or E event of a thread, in file order, for the replay of speedscope's importer.
struct DurationEvent {
  double ts = 0;      // µs, as JavaScript parses it
  std::string name;
  std::string key;    // speedscope's frame key: name, then " " and the args' JSON if there are args
  std::size_t slice;  // index of its slice on the thread (the B/E pair it belongs to)
};

// Replays speedscope 1.25's trace-event import of one thread (src/import/trace-event.ts): timestamps
// rebased on the thread's first, B and E events each stably sorted by ts, then merged: the earlier
// first; at equal ts the B first only if its key equals the first E's; an E closes the innermost
// open frame, preferring among the E events of that ts one with the frame's key, then its name.
// Returns, for each E it takes in turn, the slice it closed (or a warning text, as the viewer
// prints it to the console). `closed[i]` is the slice index that the i-th close ended.
struct SpeedscopeReplay {
  std::vector<std::size_t> closed;
  std::vector<std::size_t> opened;
  std::vector<std::string> warnings;
};

inline SpeedscopeReplay speedscope_nesting(std::vector<DurationEvent> begins,
                                           std::vector<DurationEvent> ends) {
  SpeedscopeReplay out;
  double base = 9007199254740991.0;  // Number.MAX_SAFE_INTEGER
  for (const auto* q : {&begins, &ends})
    for (const auto& e : *q) base = std::min(base, e.ts);
  for (auto* q : {&begins, &ends}) {
    for (auto& e : *q) e.ts -= base;
    std::stable_sort(q->begin(), q->end(), [](const auto& a, const auto& b) { return a.ts < b.ts; });
  }
  std::vector<const DurationEvent*> stack;
  std::size_t b = 0;
  std::vector<DurationEvent> eq(ends.begin(), ends.end());
  std::size_t e = 0;
  while (b < begins.size() || e < eq.size()) {
    bool take_begin = false;
    if (e == eq.size()) take_begin = true;
    else if (b == begins.size()) take_begin = false;
    else if (begins[b].ts < eq[e].ts) take_begin = true;
    else if (eq[e].ts < begins[b].ts) take_begin = false;
    else take_begin = begins[b].key == eq[e].key;
    if (take_begin) {
      stack.push_back(&begins[b]);
      out.opened.push_back(begins[b].slice);
      ++b;
      continue;
    }
    if (!stack.empty()) {  // prefer an E of this ts that matches the top: by key, then by name
      bool swapped = false;
      for (std::size_t u = e + 1; u < eq.size() && eq[u].ts <= eq[e].ts && !swapped; ++u)
        if (eq[u].key == stack.back()->key) std::swap(eq[e], eq[u]), swapped = true;
      for (std::size_t u = e + 1; u < eq.size() && eq[u].ts <= eq[e].ts && !swapped; ++u)
        if (eq[u].name == stack.back()->name) std::swap(eq[e], eq[u]), swapped = true;
    }
    const DurationEvent& end = eq[e++];
    if (stack.empty()) {
      out.warnings.push_back("Tried to end frame \"" + end.key + "\", but the stack was empty");
      continue;
    }
    if (end.name != stack.back()->name) {
      out.warnings.push_back("Tried to end \"" + end.key + "\" when \"" + stack.back()->key +
                             "\" was on top");
      continue;
    }
    if (end.key != stack.back()->key)
      out.warnings.push_back("Tried to end \"" + end.key + "\" when \"" + stack.back()->key +
                             "\" was on top; ending it");
    out.closed.push_back(stack.back()->slice);
    stack.pop_back();
  }
  for (const auto* open : stack)
    out.warnings.push_back("Frame \"" + open->key + "\" was still open at end of profile");
  return out;
}

// Parses and checks; the CHECKs report any rule broken.
inline Trace check_trace(const std::string& text) {
  Trace t;
  t.doc = json::parse(text);  // throws on invalid JSON (a truncated file)
  REQUIRE(t.doc.is_object());
  REQUIRE(t.doc["traceEvents"].is_array());
  CHECK(t.doc["displayTimeUnit"] == "ns");
  CHECK(t.doc["otherData"].is_object());
  std::map<std::uint64_t, std::vector<json>> flow_ends;
  struct ThreadEvents {
    std::vector<std::size_t> open;  // indices into the thread's slices
    std::vector<DurationEvent> begins, ends;
    std::int64_t last_ts = INT64_MIN;
    std::vector<std::int64_t> end_ns;  // per slice
  };
  std::map<Thread, ThreadEvents> threads;
  std::set<std::int64_t> pids_used;
  std::set<Thread> threads_used;
  for (const json& e : t.doc["traceEvents"]) {
    ++t.events;
    REQUIRE(e["name"].is_string());
    REQUIRE(e["ph"].is_string());
    REQUIRE(e["pid"].is_number_integer());
    const std::string ph = e["ph"];
    const std::int64_t pid = e["pid"];
    INFO("event " << t.events << ": " << e.dump());
    if (ph != "M") pids_used.insert(pid);
    if (ph == "B" || ph == "E" || ph == "i") {
      REQUIRE(has_number(e, "ts"));
      REQUIRE(e["tid"].is_number_integer());
      const Thread thread{pid, e["tid"].get<std::int64_t>()};
      threads_used.insert(thread);
      ThreadEvents& te = threads[thread];
      const std::int64_t ts = to_ns(e["ts"]);
      CHECK_MESSAGE(ts >= te.last_ts, "events of a thread must come in time order");
      te.last_ts = std::max(te.last_ts, ts);
      const json args = e.value("args", json());
      const std::string key = e["name"].get<std::string>() + (args.is_null() ? "" : " " + args.dump());
      auto& list = t.slices[thread];
      if (ph == "B") {
        REQUIRE(e["cat"].is_string());
        Slice s;
        s.ts = ts;
        s.name = e["name"];
        s.cat = e["cat"];
        s.args = args.is_null() ? json::object() : args;
        s.depth = static_cast<int>(te.open.size());
        if (!te.open.empty()) s.parent = list[te.open.back()].name;
        te.open.push_back(list.size());
        te.begins.push_back({e["ts"].get<double>(), s.name, key, list.size()});
        list.push_back(std::move(s));
      } else if (ph == "E") {
        REQUIRE_MESSAGE(!te.open.empty(), "an end event with no slice open");
        Slice& s = list[te.open.back()];
        CHECK(e["name"] == s.name);
        CHECK(args == (s.args.empty() ? json() : s.args));  // the same key, as speedscope pairs them
        s.dur = ts - s.ts;
        CHECK(s.dur > 0);  // zero-length slices are instants
        te.ends.push_back({e["ts"].get<double>(), s.name, key, te.open.back()});
        te.open.pop_back();
      } else {
        CHECK(e["s"] == "t");
        Slice s;
        s.ts = ts;
        s.name = e["name"];
        s.cat = e.value("cat", "");
        s.args = args.is_null() ? json::object() : args;
        t.instants[thread].push_back(std::move(s));
      }
    } else if (ph == "C") {
      REQUIRE(has_number(e, "ts"));
      REQUIRE(e["args"].is_object());
      for (const auto& [k, v] : e["args"].items()) {
        REQUIRE(v.is_number());
        const double x = v.get<double>();
        CHECK(std::isfinite(x));
        CHECK(x >= 0.0);
        if (k == "utilization") CHECK(x <= 1.0);
        t.counters[{pid, e["name"].get<std::string>()}].push_back({to_ns(e["ts"]), x});
      }
    } else if (ph == "M") {
      REQUIRE(e["args"].is_object());
      const std::string name = e["name"];
      if (name == "process_name") {
        CHECK(t.process_names.count(pid) == 0);
        t.process_names[pid] = e["args"]["name"];
      } else if (name == "process_sort_index") {
        t.process_sort[pid] = e["args"]["sort_index"];
      } else if (name == "thread_name") {
        REQUIRE(e["tid"].is_number_integer());
        const Thread thread{pid, e["tid"].get<std::int64_t>()};
        CHECK(t.thread_names.count(thread) == 0);
        t.thread_names[thread] = e["args"]["name"];
      } else {
        CHECK(name == "thread_sort_index");
        REQUIRE(e["tid"].is_number_integer());
        CHECK(e["args"]["sort_index"].is_number_integer());
      }
    } else if (ph == "s" || ph == "f") {
      REQUIRE(has_number(e, "ts"));
      REQUIRE(e["tid"].is_number_integer());
      REQUIRE(e["id"].is_number_integer());
      REQUIRE(e["cat"].is_string());
      threads_used.insert({pid, e["tid"].get<std::int64_t>()});
      if (ph == "f") CHECK(e["bp"] == "e");
      flow_ends[e["id"].get<std::uint64_t>()].push_back(e);
    } else {
      FAIL("unexpected phase " << ph);
    }
  }
  for (auto& entry : threads) {  // not a structured binding: clang 14 cannot capture one in CAPTURE
    const auto& thread = entry.first;
    auto& te = entry.second;
    CAPTURE(thread.first);
    CAPTURE(thread.second);
    CHECK_MESSAGE(te.open.empty(), "slices left open at the end of the file");
    // speedscope's nesting is the file's: it closes every slice at its own end, in file order.
    const SpeedscopeReplay r = speedscope_nesting(te.begins, te.ends);
    CHECK_MESSAGE(r.warnings.empty(), (r.warnings.empty() ? "" : r.warnings.front()) << " ("
                                          << r.warnings.size() << " warnings)");
    std::vector<std::size_t> file_order;
    for (const auto& e : te.ends) file_order.push_back(e.slice);
    CHECK_MESSAGE(r.closed == file_order, "speedscope nests this thread's slices differently");
    std::vector<std::size_t> begin_order;
    for (const auto& b : te.begins) begin_order.push_back(b.slice);
    CHECK(r.opened == begin_order);
  }
  for (auto it = t.slices.begin(); it != t.slices.end();)  // instants alone make no slice list
    it = it->second.empty() ? t.slices.erase(it) : std::next(it);
  // Names: every process and thread with events, and no thread without.
  for (const std::int64_t pid : pids_used)
    CHECK_MESSAGE(t.process_names.count(pid) == 1, "pid " << pid << " unnamed");
  for (const Thread& th : threads_used)
    CHECK_MESSAGE(t.thread_names.count(th) == 1, "pid " << th.first << " tid " << th.second << " unnamed");
  for (const auto& named : t.thread_names)
    CHECK_MESSAGE(threads_used.count(named.first) == 1,
                  "thread \"" << named.second << "\" is named but has no events");
  // Flows: one start and one finish per id, each inside a slice of its own thread.
  for (const auto& flow : flow_ends) {
    const std::uint64_t id = flow.first;
    const auto& ends = flow.second;
    REQUIRE(ends.size() == 2);
    CHECK(ends[0]["ph"] == "s");
    CHECK(ends[1]["ph"] == "f");
    CHECK(ends[0]["name"] == ends[1]["name"]);
    CHECK(ends[0]["cat"] == ends[1]["cat"]);
    for (const json& e : ends) {
      const auto& list = t.on(e["pid"], e["tid"]);
      const std::int64_t ts = to_ns(e["ts"]);
      const bool bound = std::any_of(list.begin(), list.end(), [&](const Slice& s) {
        return s.dur >= 2 ? s.ts < ts && ts < s.end() : s.ts <= ts && ts <= s.end();
      });
      CHECK_MESSAGE(bound, "flow " << id << " end at " << ts << " ns binds to no slice");
    }
    ++t.flows;
  }
  return t;
}

// Sum of the durations (ns) of the top-level slices of one thread.
inline std::int64_t busy_ns(const std::vector<Slice>& list, int depth = 0) {
  std::int64_t sum = 0;
  for (const Slice& s : list)
    if (s.depth == depth) sum += s.dur;
  return sum;
}

}  // namespace step_trace_test

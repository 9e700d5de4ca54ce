// Test helper: parses a written step trace with nlohmann-json and checks it against the Trace Event
// Format rules the viewers rely on (fields per phase; on each thread, slices disjoint or properly
// nested; every flow start has one finish with "bp":"e", both ends inside a slice of their thread),
// then hands back what the tests look at. Times are converted to integer nanoseconds.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
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
  int depth = 0;               // 0: top level on its thread
  std::string parent;          // name of the enclosing slice ("" at top level)
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
  std::map<Thread, std::vector<Slice>> slices;  // sorted by (ts, longer first)
  std::map<std::pair<std::int64_t, std::string>, std::vector<CounterSample>> counters;  // (pid, name)
  int flows = 0;
  std::int64_t events = 0;

  std::int64_t pid_named(const std::string& name) const {
    for (const auto& [pid, n] : process_names)
      if (n == name) return pid;
    return -1;
  }
  std::int64_t tid_named(std::int64_t pid, const std::string& name) const {
    for (const auto& [t, n] : thread_names)
      if (t.first == pid && n == name) return t.second;
    return -1;
  }
  const std::vector<Slice>& on(std::int64_t pid, std::int64_t tid) const {
    static const std::vector<Slice> none;
    const auto it = slices.find({pid, tid});
    return it == slices.end() ? none : it->second;
  }
};

inline bool has_number(const json& e, const char* key) { return e.contains(key) && e[key].is_number(); }

// Parses and checks; the CHECKs report any rule broken.
inline Trace check_trace(const std::string& text) {
  Trace t;
  t.doc = json::parse(text);  // throws on invalid JSON (a truncated file)
  REQUIRE(t.doc.is_object());
  REQUIRE(t.doc["traceEvents"].is_array());
  CHECK(t.doc["displayTimeUnit"] == "ns");
  CHECK(t.doc["otherData"].is_object());
  std::map<std::uint64_t, std::vector<json>> flow_ends;
  for (const json& e : t.doc["traceEvents"]) {
    ++t.events;
    REQUIRE(e["name"].is_string());
    REQUIRE(e["ph"].is_string());
    REQUIRE(e["pid"].is_number_integer());
    const std::string ph = e["ph"];
    const std::int64_t pid = e["pid"];
    if (ph == "X") {
      REQUIRE(has_number(e, "ts"));
      REQUIRE(has_number(e, "dur"));
      REQUIRE(e["tid"].is_number_integer());
      REQUIRE(e["cat"].is_string());
      CHECK(e["dur"].get<double>() >= 0);
      Slice s;
      s.ts = to_ns(e["ts"]);
      s.dur = to_ns(e["dur"]);
      s.name = e["name"];
      s.cat = e["cat"];
      s.args = e.value("args", json::object());
      t.slices[{pid, e["tid"].get<std::int64_t>()}].push_back(std::move(s));
    } else if (ph == "C") {
      REQUIRE(has_number(e, "ts"));
      REQUIRE(e["args"].is_object());
      for (const auto& [k, v] : e["args"].items()) {
        CHECK(v.is_number());
        t.counters[{pid, e["name"].get<std::string>()}].push_back({to_ns(e["ts"]), v.get<double>()});
      }
    } else if (ph == "M") {
      REQUIRE(e["args"].is_object());
      const std::string name = e["name"];
      if (name == "process_name") {
        t.process_names[pid] = e["args"]["name"];
      } else if (name == "process_sort_index") {
        t.process_sort[pid] = e["args"]["sort_index"];
      } else if (name == "thread_name") {
        REQUIRE(e["tid"].is_number_integer());
        t.thread_names[{pid, e["tid"].get<std::int64_t>()}] = e["args"]["name"];
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
      if (ph == "f") CHECK(e["bp"] == "e");
      flow_ends[e["id"].get<std::uint64_t>()].push_back(e);
    } else {
      FAIL("unexpected phase " << ph);
    }
  }
  // Per thread: disjoint or properly nested (touching counts as disjoint).
  for (auto& [thread, list] : t.slices) {
    std::stable_sort(list.begin(), list.end(), [](const Slice& a, const Slice& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
    });
    std::vector<const Slice*> open;
    for (Slice& s : list) {
      while (!open.empty() && open.back()->end() <= s.ts) open.pop_back();
      if (!open.empty()) {
        CHECK_MESSAGE(s.end() <= open.back()->end(), "slice \"" << s.name << "\" at " << s.ts
                                                                  << " ns overlaps \"" << open.back()->name
                                                                  << "\" on pid " << thread.first
                                                                  << " tid " << thread.second);
        s.parent = open.back()->name;
      }
      s.depth = static_cast<int>(open.size());
      open.push_back(&s);
    }
  }
  // Flows: one start and one finish per id, each inside a slice of its own thread.
  for (const auto& [id, ends] : flow_ends) {
    REQUIRE(ends.size() == 2);
    CHECK(ends[0]["ph"] == "s");
    CHECK(ends[1]["ph"] == "f");
    CHECK(ends[0]["name"] == ends[1]["name"]);
    for (const json& e : ends) {
      const auto& list = t.on(e["pid"], e["tid"]);
      const std::int64_t ts = to_ns(e["ts"]);
      const bool bound = std::any_of(list.begin(), list.end(),
                                     [&](const Slice& s) { return s.ts <= ts && ts <= s.end(); });
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

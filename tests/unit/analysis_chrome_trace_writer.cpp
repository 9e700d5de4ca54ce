// ChromeTraceWriter and TrackAllocator: the written file is parsed back with nlohmann-json and checked
// against the Trace Event Format (fields per phase, µs timestamps, flows, lanes, filters, gzip) and
// against the rules that make every viewer nest slices alike (check_trace, which replays speedscope).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "analysis/trace/chrome_trace_writer.h"
#include "analysis/trace/trace_track_allocator.h"
#include "analysis_step_trace_check.h"
#include "sim/error.h"
#include "tests/unit/test_files.h"

using namespace hybridsim;
using analysis::ChromeTraceOptions;
using analysis::ChromeTraceWriter;
using analysis::FlowEnd;
using analysis::TraceArg;
using analysis::TrackAllocator;
using nlohmann::json;
using sim::Time;
namespace fs = std::filesystem;

using hybridsim::testing::read_whole_file;
using TempDir = hybridsim::testing::ScratchDir;
using hybridsim::testing::read_gzip_file;

namespace {

// Timestamps are µs with 3 decimals: back to integer nanoseconds.
std::int64_t ns(const json& v) { return std::llround(v.get<double>() * 1000.0); }

// The fields each phase requires in the Trace Event Format.
void check_event_fields(const json& e) {
  INFO(e.dump());
  REQUIRE(e.contains("ph"));
  REQUIRE(e.contains("name"));
  REQUIRE(e.contains("pid"));
  const std::string ph = e["ph"];
  if (ph == "B" || ph == "E" || ph == "i") {
    CHECK(e.contains("ts"));
    CHECK(e.contains("tid"));
    if (ph != "E") CHECK(e.contains("cat"));
    if (ph == "i") CHECK(e["s"] == "t");
  } else if (ph == "C") {
    CHECK(e.contains("ts"));
    REQUIRE(e.contains("args"));
    for (const auto& [k, v] : e["args"].items()) CHECK(v.is_number());
  } else if (ph == "s" || ph == "f") {
    CHECK(e.contains("ts"));
    CHECK(e.contains("tid"));
    CHECK(e.contains("cat"));
    CHECK(e.contains("id"));
    if (ph == "f") CHECK(e["bp"] == "e");
  } else if (ph == "M") {
    const std::string n = e["name"];
    CHECK(
        (n == "process_name" || n == "thread_name" || n == "process_sort_index" || n == "thread_sort_index"));
    if (n.rfind("thread_", 0) == 0) CHECK(e.contains("tid"));
    REQUIRE(e.contains("args"));
    CHECK(e["args"].contains(n.ends_with("_name") ? "name" : "sort_index"));
  } else {
    FAIL("unexpected phase " << ph);
  }
}

// A small trace touching every kind of event: two GPUs, a link with lanes, counters and a flow.
void write_sample(ChromeTraceWriter& w) {
  w.process_name(1, "GPU0");
  w.process_name(2, "GPU1");
  w.process_sort_index(1, 0);
  w.thread_name(1, 1, "compute");
  w.thread_name(2, 1, "compute");
  w.thread_sort_index(1, 1, 5);
  w.other_data("scenario", "dgx1 \"8 GPUs\"");
  w.other_data("version", "0.1.0");
  w.complete(1, 1, "conv1", "kernel", Time::ns(1'000), Time::ns(5'000),
             {{"flops", 123'456'789}, {"note", "fwd"}});
  w.complete(1, 1, "conv2", "kernel", Time::ns(5'000), Time::ns(9'000));
  w.complete(2, 1, "conv1", "kernel", Time::ns(9'500), Time::ns(12'000), {{"ratio", 0.25}, {"last", true}});
  w.counter(1, "link GB/s", Time::ns(0), {{"up", 0.0}, {"down", 0}});
  w.counter(1, "link GB/s", Time::ns(4'000), {{"up", 12.5}, {"down", 3}});
  const auto id = w.flow("send grads", "nvlink", {1, 1, Time::ns(8'999)}, {2, 1, Time::ns(9'501)});
  CHECK(id == 1);
}

}  // namespace

TEST_CASE("analysis: a Chrome trace parses and every event has its phase's fields") {
  TempDir dir;
  const fs::path file = dir.path / "run.json";
  ChromeTraceWriter w(file);
  write_sample(w);
  w.finish();
  const std::string text = read_whole_file(file);
  CHECK(w.bytes_written() == static_cast<std::int64_t>(text.size()));
  CHECK(w.events_written() == 16);  // 6 metadata + 3 slices of 2 events + 2 counter samples + 2 flow ends
  const json doc = json::parse(text);
  CHECK(doc["displayTimeUnit"] == "ns");
  CHECK(doc["otherData"]["scenario"] == "dgx1 \"8 GPUs\"");
  CHECK(doc["otherData"]["version"] == "0.1.0");
  const auto& events = doc["traceEvents"];
  REQUIRE(events.size() == 16);
  for (const auto& e : events) check_event_fields(e);
  // conv1 on GPU0: begins at 1,000 ns → "ts":1.000 with its args, ends at 5,000 ns → "ts":5.000
  // with the same name and args; conv2 begins at that same text.
  CHECK(text.find(R"({"name":"conv1","cat":"kernel","ph":"B","ts":1.000,"pid":1,"tid":1,)"
                  R"("args":{"flops":123456789,"note":"fwd"}})") != std::string::npos);
  CHECK(text.find(R"({"name":"conv1","ph":"E","ts":5.000,"pid":1,"tid":1,)"
                  R"("args":{"flops":123456789,"note":"fwd"}})") != std::string::npos);
  CHECK(text.find(R"({"name":"conv2","cat":"kernel","ph":"B","ts":5.000,"pid":1,"tid":1})") !=
        std::string::npos);
  CHECK(text.find(R"("args":{"ratio":0.25,"last":true})") != std::string::npos);
  CHECK(text.find(R"({"name":"link GB/s","ph":"C","ts":4.000,"pid":1,"args":{"up":12.5,"down":3}})") !=
        std::string::npos);
  CHECK(text.find(
            R"({"name":"send grads","cat":"nvlink","ph":"f","ts":9.501,"pid":2,"tid":1,"id":1,"bp":"e"})") !=
        std::string::npos);
  const step_trace_test::Trace t = step_trace_test::check_trace(text);
  CHECK(t.slice_count() == 3);
  CHECK(t.flows == 1);
}

TEST_CASE("analysis: slice times round to the nearest ns without creating overlaps") {
  TempDir dir;
  const fs::path file = dir.path / "r.json";
  ChromeTraceWriter w(file);
  w.thread_name(1, 1, "a");
  w.thread_name(1, 2, "b");
  w.process_name(1, "p");
  // [1,234,567 ps, 2,000,000 ps): begins at round(1,234.567 ns) = 1,235 ns, ends at 2,000 ns.
  w.complete(1, 1, "a", "k", Time::ps(1'234'567), Time::ps(2'000'000));
  // [600, 1,400) and [1,400, 2,000) ps: ends rounded as points, [1, 1) ns and [1, 2) ns; the first
  // has no length left, so it is an instant, which no viewer can nest wrongly.
  w.complete(1, 2, "b", "k", Time::ps(600), Time::ps(1'400));
  w.complete(1, 2, "c", "k", Time::ps(1'400), Time::ps(2'000));
  w.finish();
  const std::string text = read_whole_file(file);
  CHECK(text.find(R"({"name":"a","cat":"k","ph":"B","ts":1.235,"pid":1,"tid":1})") != std::string::npos);
  CHECK(text.find(R"({"name":"a","ph":"E","ts":2.000,"pid":1,"tid":1})") != std::string::npos);
  CHECK(text.find(R"({"name":"b","cat":"k","ph":"i","ts":0.001,"pid":1,"tid":2,"s":"t"})") !=
        std::string::npos);
  CHECK(text.find(R"({"name":"c","cat":"k","ph":"B","ts":0.001,"pid":1,"tid":2})") != std::string::npos);
  const step_trace_test::Trace t = step_trace_test::check_trace(text);
  CHECK(t.instants.at({1, 2}).size() == 1);
  CHECK(t.on(1, 2).size() == 1);
}

TEST_CASE("analysis: names are escaped and UTF-8 passes through") {
  TempDir dir;
  const fs::path file = dir.path / "e.json";
  const std::string weird = "quote\" back\\slash\nnew\x01 µs GPU0→GPU1";
  ChromeTraceWriter w(file);
  w.process_name(1, weird);
  w.complete(1, 1, weird, "c\"at", Time::ns(1), Time::ns(2), {{"k\"ey", weird}});
  w.other_data("k\\", weird);
  w.finish();
  const json doc = json::parse(read_whole_file(file));
  CHECK(doc["traceEvents"][0]["args"]["name"] == weird);
  CHECK(doc["traceEvents"][1]["name"] == weird);
  CHECK(doc["traceEvents"][1]["cat"] == "c\"at");
  CHECK(doc["traceEvents"][1]["args"]["k\"ey"] == weird);
  CHECK(doc["otherData"]["k\\"] == weird);
}

TEST_CASE("analysis: overlapping slices on one track go to lanes that never overlap") {
  TempDir dir;
  const fs::path file = dir.path / "lanes.json";
  ChromeTraceWriter w(file);
  w.process_name(7, "network");
  TrackAllocator lanes(w);
  const auto link = lanes.track(7, "NVLink 0→1");
  const auto other = lanes.track(7, "NVLink 1→0");
  CHECK(lanes.track(7, "NVLink 0→1") == link);
  // 300 transfers with random starts (sorted, as a simulation produces them) and lengths.
  std::mt19937_64 rng(42);
  std::vector<std::pair<std::int64_t, std::int64_t>> slices;
  std::int64_t t = 0;
  for (int i = 0; i < 300; ++i) {
    t += static_cast<std::int64_t>(rng() % 1'000);
    slices.emplace_back(t, t + 1 + static_cast<std::int64_t>(rng() % 5'000));
  }
  for (const auto& [s, e] : slices) {
    const auto tid = lanes.lane(link, Time::ns(s), Time::ns(e));
    w.complete(7, tid, "msg", "nvlink", Time::ns(s), Time::ns(e));
  }
  // Touching slices [0, 10) and [10, 20) share the first lane of the other track.
  const auto first = lanes.lane(other, Time::ns(0), Time::ns(10));
  w.complete(7, first, "msg", "nvlink", Time::ns(0), Time::ns(10));
  CHECK(lanes.lane(other, Time::ns(10), Time::ns(20)) == first);
  w.complete(7, first, "msg", "nvlink", Time::ns(10), Time::ns(20));
  w.finish();
  // First fit over slices sorted by start uses exactly as many lanes as the most slices in flight
  // at once (interval-graph colouring), computed here by a sweep.
  std::vector<std::pair<std::int64_t, int>> edges;
  for (const auto& [s, e] : slices) {
    edges.emplace_back(s, +1);
    edges.emplace_back(e, -1);
  }
  std::sort(edges.begin(), edges.end());  // at equal times, ends (-1) before starts (+1)
  int depth = 0, max_depth = 0;
  for (const auto& [time, d] : edges) max_depth = std::max(max_depth, depth += d);
  CHECK(lanes.lane_count(link) == static_cast<std::size_t>(max_depth));
  CHECK(max_depth > 2);

  const std::string text = read_whole_file(file);
  const json parsed = json::parse(text);
  for (const auto& e : parsed["traceEvents"]) check_event_fields(e);
  const step_trace_test::Trace trace = step_trace_test::check_trace(text);
  std::map<std::int64_t, std::string> names;
  for (const auto& [thread, name] : trace.thread_names) names[thread.second] = name;
  for (const auto& [thread, list] : trace.slices)
    for (const auto& s : list) CHECK(s.depth == 0);  // a lane never nests or overlaps
  // Lanes are named "name", "name #2", …; the other track got its own thread id after them.
  CHECK(names[1] == "NVLink 0→1");
  CHECK(names[2] == "NVLink 0→1 #2");
  CHECK(names.size() == static_cast<std::size_t>(max_depth) + 1);
  CHECK_THROWS_AS(lanes.lane(link, Time::ns(5), Time::ns(4)), InternalError);
}

TEST_CASE("analysis: flows have one start and one finish per id") {
  TempDir dir;
  const fs::path file = dir.path / "flows.json";
  ChromeTraceWriter w(file);
  for (const int pid : {1, 2}) {
    w.process_name(pid, "GPU" + std::to_string(pid));
    w.thread_name(pid, 1, "stream");
  }
  for (int i = 0; i < 50; ++i) {
    w.complete(1, 1, "send", "k", Time::ns(10 * i), Time::ns(10 * i + 5));
    w.complete(2, 1, "recv", "k", Time::ns(10 * i + 6), Time::ns(10 * i + 9));
    CHECK(w.flow("m", "net", {1, 1, Time::ns(10 * i + 4)}, {2, 1, Time::ns(10 * i + 7)}) ==
          static_cast<std::uint64_t>(i + 1));
  }
  w.finish();
  std::map<std::uint64_t, std::pair<int, int>> seen;  // id → (starts, finishes)
  CHECK(step_trace_test::check_trace(read_whole_file(file)).flows == 50);
  const json doc = json::parse(read_whole_file(file));
  for (const auto& e : doc["traceEvents"]) {
    check_event_fields(e);
    if (e["ph"] == "s") ++seen[e["id"].get<std::uint64_t>()].first;
    if (e["ph"] == "f") ++seen[e["id"].get<std::uint64_t>()].second;
  }
  CHECK(seen.size() == 50);
  for (const auto& [id, c] : seen) CHECK(c == std::pair{1, 1});
}

TEST_CASE("analysis: a gzip trace decompresses to the same JSON") {
  TempDir dir;
  ChromeTraceWriter plain(dir.path / "a.json");
  ChromeTraceWriter gz(dir.path / "a.json.gz", {.gzip = true});
  for (auto* w : {&plain, &gz}) {
    write_sample(*w);
    w->process_name(3, "GPU2");
    w->thread_name(3, 1, "compute");
    for (int i = 0; i < 2'000; ++i) w->complete(3, 1, "k", "kernel", Time::ns(i * 10), Time::ns(i * 10 + 7));
    w->finish();
  }
  const std::string text = read_whole_file(dir.path / "a.json");
  CHECK(read_gzip_file(dir.path / "a.json.gz") == text);
  CHECK(step_trace_test::check_trace(text).slice_count() == 3 + 2'000);
  CHECK(gz.bytes_written() == static_cast<std::int64_t>(fs::file_size(dir.path / "a.json.gz")));
  CHECK(gz.bytes_written() < plain.bytes_written() / 5);
}

TEST_CASE("analysis: an unfinished trace leaves no file, a bad window no file either") {
  TempDir dir;
  {
    ChromeTraceWriter w(dir.path / "x.json");
    for (int i = 0; i < 10'000; ++i) w.complete(1, 1, "k", "c", Time::ns(i), Time::ns(i + 1));
  }  // destroyed without finish(), as when an exception unwinds a run
  CHECK(dir.entries().empty());
  CHECK_THROWS_AS(
      ChromeTraceWriter(dir.path / "y.json", {.window = analysis::TraceWindow{Time::us(2), Time::us(2)}}),
      InputError);
  CHECK(dir.entries().empty());
  ChromeTraceWriter w(dir.path / "z.json");
  CHECK_THROWS_AS(w.complete(1, 1, "k", "c", Time::ns(2), Time::ns(1)), InternalError);
  CHECK_THROWS_AS(w.counter(1, "c", Time::ns(1), {{"s", "text"}}), InternalError);
  w.finish();
  CHECK_THROWS_AS(w.finish(), InternalError);
}

TEST_CASE("analysis: the time window drops, clips, marks the clipped and carries counters across it") {
  TempDir dir;
  const fs::path all = dir.path / "all.json";
  const fs::path win = dir.path / "win.json";
  ChromeTraceWriter full(all);
  ChromeTraceWriter w(win, {.window = analysis::TraceWindow{Time::ns(1'000), Time::ns(2'000)}});
  for (auto* t : {&full, &w}) {
    t->process_name(1, "GPU0");                                             // metadata: always kept
    t->thread_name(1, 1, "compute");
    t->thread_name(1, 2, "copy");
    t->thread_name(1, 3, "idle");                                           // no event in the window
    t->complete(1, 1, "before", "k", Time::ns(100), Time::ns(1'000));       // ends at the start: dropped
    t->complete(1, 1, "after", "k", Time::ns(2'000), Time::ns(2'100));      // starts at the end: dropped
    t->complete(1, 2, "spanning", "k", Time::ns(500), Time::ns(5'000));     // clipped to [1,000, 2,000)
    t->complete(1, 2, "crossing", "k", Time::ns(900), Time::ns(1'100));     // clipped to [1,000, 1,100)
    t->complete(1, 2, "inside", "k", Time::ns(1'200), Time::ns(1'300));     // kept as is
    t->complete(1, 3, "early", "k", Time::ns(0), Time::ns(10));             // dropped: "idle" stays unnamed
    t->counter(1, "queue", Time::ns(200), {{"depth", 3}});                  // last value before: at 1,000
    t->counter(1, "queue", Time::ns(1'500), {{"depth", 4}});                // kept
    t->counter(1, "idle", Time::ns(300), {{"v", 1}});                       // only pre-window: at 1,000
    t->flow("f", "net", {1, 2, Time::ns(1'250)}, {1, 2, Time::ns(1'290)});  // kept
    t->flow("g", "net", {1, 2, Time::ns(950)}, {1, 2, Time::ns(1'050)});    // one end outside: dropped
    t->finish();
  }
  CHECK(w.bytes_written() < full.bytes_written());
  CHECK(w.events_dropped() == 3 + 2 + 2);  // three slices, two pre-window samples, one flow
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> slices;
  std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> counters;  // name, ns, value
  std::map<std::string, std::string> clipped;  // slice name → its "clipped" arg on B and on E
  int flow_ends = 0;
  const std::string text = read_whole_file(win);
  const step_trace_test::Trace t = step_trace_test::check_trace(text);  // "idle" is not named
  CHECK(t.thread_names.size() == 1);
  CHECK(step_trace_test::check_trace(read_whole_file(all)).thread_names.size() == 3);
  for (const auto& [thread, list] : t.slices)
    for (const auto& s : list) slices[s.name] = {s.ts, s.dur};
  const json doc = json::parse(text);
  for (const auto& e : doc["traceEvents"]) {
    check_event_fields(e);
    if (e["ph"] == "C")
      counters.emplace_back(e["name"].get<std::string>(), ns(e["ts"]),
                            e["args"].begin()->get<std::int64_t>());
    if (e["ph"] == "s" || e["ph"] == "f") {
      ++flow_ends;
      CHECK(e["name"] == "f");
    }
    if ((e["ph"] == "B" || e["ph"] == "E") && e.contains("args") && e["args"].contains("clipped"))
      clipped[e["name"].get<std::string>()] += e["args"]["clipped"].get<std::string>() + "/";
  }
  // Each clipped slice says which ends the window cut off, on its begin and its end alike.
  CHECK(clipped ==
        std::map<std::string, std::string>{{"crossing", "start/start/"}, {"spanning", "both/both/"}});
  CHECK(slices.size() == 3);
  CHECK(slices["crossing"] == std::pair<std::int64_t, std::int64_t>{1'000, 100});
  CHECK(slices["inside"] == std::pair<std::int64_t, std::int64_t>{1'200, 100});
  CHECK(slices["spanning"] == std::pair<std::int64_t, std::int64_t>{1'000, 1'000});
  using C = std::tuple<std::string, std::int64_t, std::int64_t>;
  // Every counter track runs to the window's end (2,000 ns) with its last value, in (pid, name) order.
  CHECK(counters == std::vector<C>{C{"queue", 1'000, 3}, C{"queue", 1'500, 4}, C{"idle", 1'000, 1},
                                   C{"idle", 2'000, 1}, C{"queue", 2'000, 4}});
  CHECK(flow_ends == 2);
}

TEST_CASE("analysis: the process filter keeps only the chosen pids") {
  TempDir dir;
  ChromeTraceWriter full(dir.path / "all.json");
  ChromeTraceWriter some(dir.path / "gpu1.json", {.pids = std::set<analysis::TracePid>{2}});
  for (auto* w : {&full, &some}) {
    write_sample(*w);
    w->finish();
  }
  CHECK(some.bytes_written() < full.bytes_written());
  const json doc = json::parse(read_whole_file(dir.path / "gpu1.json"));
  // GPU1 (pid 2) has its process_name, thread_name and one slice (its begin and end events); the
  // flow from GPU0 is dropped too.
  CHECK(doc["traceEvents"].size() == 4);
  for (const auto& e : doc["traceEvents"]) CHECK(e["pid"] == 2);
  CHECK(doc["otherData"]["version"] == "0.1.0");
}

TEST_CASE("analysis: the same events give the same bytes") {
  TempDir dir;
  for (bool gzip : {false, true}) {
    ChromeTraceWriter a(dir.path / "1", {.gzip = gzip});
    ChromeTraceWriter b(dir.path / "2", {.gzip = gzip});
    write_sample(a);
    write_sample(b);
    a.finish();
    b.finish();
    CHECK(read_whole_file(dir.path / "1") == read_whole_file(dir.path / "2"));
  }
}

TEST_CASE("analysis: counters carried to a window's end stop at the end of what is traced") {
  TempDir dir;
  const fs::path path = dir.path / "t.json";
  ChromeTraceWriter w(path, {.window = analysis::TraceWindow{Time::ns(1'000), Time::ns(9'000)}});
  w.process_name(1, "GPU0");
  w.counter(1, "memory", Time::ns(1'200), {{"GiB", 2.5}});
  w.counter(1, "memory", Time::ns(3'000), {{"GiB", 1.5}});
  w.counter(1, "last at the end", Time::ns(4'000), {{"v", 7}});  // already at the end: not repeated
  w.end_at(Time::ns(4'000));                                      // the step ends before the window does
  w.finish();
  std::vector<std::tuple<std::string, std::int64_t, double>> counters;
  const json doc = json::parse(read_whole_file(path));
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "C")
      counters.emplace_back(e["name"].get<std::string>(), ns(e["ts"]), e["args"].begin()->get<double>());
  using C = std::tuple<std::string, std::int64_t, double>;
  CHECK(counters == std::vector<C>{C{"memory", 1'200, 2.5}, C{"memory", 3'000, 1.5},
                                   C{"last at the end", 4'000, 7}, C{"memory", 4'000, 1.5}});
}

// How ChromeTraceWriter keeps slices from overlapping or mis-nesting in any viewer: ends that are
// the same text as the next start, enclosing slices first, "repeat" for identical slices back to
// back, and the errors for calls that would break nesting. The replay of speedscope's importer that
// check_trace relies on is tested here too, on traces it must reject.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "analysis/trace/chrome_trace_writer.h"
#include "analysis_step_trace_check.h"
#include "sim/error.h"

using namespace hybridsim;
using analysis::ChromeTraceWriter;
using nlohmann::json;
using sim::Time;
using step_trace_test::check_trace;
using step_trace_test::DurationEvent;
using step_trace_test::read_whole_file;
using step_trace_test::speedscope_nesting;
using step_trace_test::TempDir;

TEST_CASE("trace nesting: an end is the same number as the next start in floating point") {
  // Two kernels touching at 197.391 µs. Written as a start and a duration (ph X), the viewer adds
  // 83.887 + 113.504 in doubles and gets 197.39100000000002, past the next start: speedscope then
  // nests the second kernel in the first. As begin/end events both are the text "197.391".
  CHECK(83.887 + 113.504 != 197.391);
  TempDir dir;
  ChromeTraceWriter w(dir.path / "t.json");
  w.process_name(1, "GPU 0");
  w.thread_name(1, 1, "compute");
  w.complete(1, 1, "a", "k", Time::ns(83'887), Time::ns(197'391));
  w.complete(1, 1, "b", "k", Time::ns(197'391), Time::ns(200'000));
  w.finish();
  const std::string text = read_whole_file(dir.path / "t.json");
  std::vector<double> ts;
  const json doc = json::parse(text);
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "B" || e["ph"] == "E") ts.push_back(e["ts"].get<double>());
  REQUIRE(ts.size() == 4);  // B a, E a, B b, E b
  CHECK(ts[1] == ts[2]);
  const auto t = check_trace(text);
  CHECK(t.on(1, 1).size() == 2);
  CHECK(t.on(1, 1)[1].depth == 0);
}

TEST_CASE("trace nesting: enclosing slices first, ends innermost first and deferred") {
  TempDir dir;
  ChromeTraceWriter w(dir.path / "t.json");
  w.process_name(1, "GPU 0");
  w.thread_name(1, 2, "communication");
  // A collective [0, 10) µs with two steps, the first starting with it, the second ending with it.
  w.complete(1, 2, "all-reduce", "collective", Time::us(0), Time::us(10));
  w.complete(1, 2, "step 1", "ring-step", Time::us(0), Time::us(4));
  w.complete(1, 2, "step 2", "ring-step", Time::us(4), Time::us(10));
  w.complete(1, 2, "all-reduce", "collective", Time::us(10), Time::us(12), {{"bucket", 1}});
  w.finish();
  std::vector<std::string> order;
  const json doc = json::parse(read_whole_file(dir.path / "t.json"));
  for (const json& e : doc["traceEvents"])
    if (e.contains("tid") && e["ph"] != "M")
      order.push_back(e["ph"].get<std::string>() + " " + e["name"].get<std::string>());
  // Each end is written when the next slice starts at or after it: step 2 and then the collective
  // close at 10 µs before the next collective opens there.
  CHECK(order == std::vector<std::string>{"B all-reduce", "B step 1", "E step 1", "B step 2", "E step 2",
                                          "E all-reduce", "B all-reduce", "E all-reduce"});
  const auto t = check_trace(read_whole_file(dir.path / "t.json"));
  CHECK(t.on(1, 2)[1].parent == "all-reduce");
  CHECK(t.on(1, 2)[2].parent == "all-reduce");
  CHECK(t.on(1, 2)[3].depth == 0);
}

TEST_CASE("trace nesting: calls that would mis-nest are errors") {
  TempDir dir;
  ChromeTraceWriter w(dir.path / "t.json");
  w.complete(1, 1, "a", "k", Time::us(0), Time::us(10));
  // Overlapping a without nesting in it.
  CHECK_THROWS_WITH_AS(w.complete(1, 1, "b", "k", Time::us(5), Time::us(15)),
                       doctest::Contains("without nesting"), InternalError);
  w.complete(1, 1, "c", "k", Time::us(5), Time::us(6));
  // A child before its parent (at equal starts the enclosing slice must come first), or any slice
  // starting before the one written before it.
  CHECK_THROWS_WITH_AS(w.complete(1, 1, "d", "k", Time::us(4), Time::us(5)), doctest::Contains("start order"),
                       InternalError);
  w.complete(1, 2, "child", "k", Time::us(0), Time::us(1));
  CHECK_THROWS_AS(w.complete(1, 2, "parent", "k", Time::us(0), Time::us(3)), InternalError);
  // Other threads are independent, and rounding is checked as written: [0.4, 1.4) ns and
  // [1.4, 2) ns touch at 1 ns.
  w.complete(2, 1, "x", "k", Time::ps(400), Time::ps(1'400));
  w.complete(2, 1, "y", "k", Time::ps(1'400), Time::ps(2'000));
  w.finish();
}

TEST_CASE("trace nesting: identical slices back to back are numbered so speedscope keeps them apart") {
  TempDir dir;
  ChromeTraceWriter w(dir.path / "t.json");
  w.process_name(1, "network");
  w.thread_name(1, 1, "NVLink GPU0→GPU1");
  // Four messages of one collective, the same bytes and tag: the first three back to back, the
  // fourth after a gap.
  for (const auto& [s, e] : {std::pair{0, 10}, {10, 20}, {20, 30}, {35, 45}})
    w.complete(1, 1, "message", "message", Time::ns(s), Time::ns(e), {{"bytes", 512}, {"tag", 7}});
  w.finish();
  const auto t = check_trace(read_whole_file(dir.path / "t.json"));
  const auto& m = t.on(1, 1);
  REQUIRE(m.size() == 4);
  CHECK_FALSE(m[0].args.contains("repeat"));
  CHECK(m[1].args["repeat"] == 2);
  CHECK(m[2].args["repeat"] == 3);
  CHECK_FALSE(m[3].args.contains("repeat"));  // not touching: nothing to tell apart
  for (const auto& s : m) CHECK(s.depth == 0);
}

namespace {
DurationEvent ev(double ts, const std::string& name, const std::string& key, std::size_t slice) {
  return {ts, name, key, slice};
}
}  // namespace

TEST_CASE("speedscope replay: identical slices back to back nest, which check_trace rejects") {
  // Without the "repeat" arg: at 10 µs the begin of the second message has the key of the first's
  // end, and speedscope takes the begin first: the second opens inside the first.
  const auto r = speedscope_nesting({ev(0, "m", "m {}", 0), ev(10, "m", "m {}", 1)},
                                    {ev(10, "m", "m {}", 0), ev(20, "m", "m {}", 1)});
  CHECK(r.warnings.empty());  // silently wrong
  CHECK(r.closed == std::vector<std::size_t>{1, 0});  // the second closes first: it was nested
  // Different keys: the end first, as written.
  const auto ok = speedscope_nesting({ev(0, "m", "m 1", 0), ev(10, "m", "m 2", 1)},
                                     {ev(10, "m", "m 1", 0), ev(20, "m", "m 2", 1)});
  CHECK(ok.closed == std::vector<std::size_t>{0, 1});
}

TEST_CASE("speedscope replay: an end a hair after the next start leaves a slice open") {
  // What X events gave: a ends at 197.39100000000002 (83.887 + 113.504), b starts at 197.391 and
  // ends before a's end... speedscope opens b inside a, then a's end finds b on top.
  const auto r = speedscope_nesting({ev(83.887, "a", "a", 0), ev(197.391, "b", "b", 1)},
                                    {ev(83.887 + 113.504, "a", "a", 0), ev(197.391 + 0.0005, "b", "b", 1)});
  CHECK(r.closed != std::vector<std::size_t>{0, 1});
  CHECK_FALSE(r.warnings.empty());
  // A zero-length slice nested at its parent's start: its end sorts before its begin.
  const auto z =
      speedscope_nesting({ev(5, "p", "p", 0), ev(5, "z", "z", 1)}, {ev(5, "z", "z", 1), ev(9, "p", "p", 0)});
  CHECK_FALSE(z.warnings.empty());
}

// Bad Kineto traces the importer must reject with the exact error that names the file, the event
// (its index in traceEvents, byte offset, name and ts) and what was expected, or — where the input
// is legitimate — import with the right answer and a note: the files make_traces.py writes
// (negative_dur.json, huge_dur.json, time_reversed.json), small hand-written documents, and
// hand-made traces (tests/unit/import_kineto_maker.h).
#include <doctest/doctest.h>
#include <unistd.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "sim/error.h"
#include "tests/unit/import_kineto_files.h"
#include "tests/unit/import_kineto_maker.h"
#include "tests/unit/test_files.h"
#include "workloads/import/import_kineto.h"

using namespace hybridsim;
using hybridsim::testing::read_whole_file;
using hybridsim::testing::TraceMaker;
using workloads::import_kineto;
using workloads::KinetoCpuKind;

namespace {

std::string data(const std::string& name) { return hybridsim::testing::kineto_data(name); }

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string import_error(const std::string& path) {
  return error_of([&] { import_kineto(path, {}); });
}

// The text parsed as a trace named "doc.json", imported.
std::string doc_error(const std::string& text) {
  return error_of([&] {
    std::istringstream in(text);
    import_kineto(workloads::parse_kineto_trace(in, "doc.json"), {});
  });
}

// The byte offset of the opening brace of the first event that contains `fragment`.
std::string byte_of(const std::string& text, const std::string& fragment) {
  const auto at = text.find(fragment);
  REQUIRE(at != std::string::npos);
  return std::to_string(text.rfind('{', at));
}

const std::string kClamp =
    "void at::native::vectorized_elementwise_kernel<4, at::native::launch_clamp_scalar>(int, float, "
    "at::detail::Array<char*, 2>)";

}  // namespace

TEST_CASE("kineto bad input: a kernel with \"dur\": -100 is an error naming it") {
  // make_traces.py's one_kernel: two metadata events, ProfilerStep#1, aten::relu, the launch, then
  // the kernel: traceEvents[5].
  const std::string path = data("negative_dur.json");
  const std::string at = byte_of(read_whole_file(path), "\"dur\": -100");
  CHECK(import_error(path) ==
        path + ": traceEvents[5] at byte " + at + ", kernel \"" + kClamp +
            "\" (\"ts\": 1020.000): \"dur\" is -100 us; expected a duration of 0 us or more");
}

TEST_CASE("kineto bad input: a kernel of \"dur\": 9.3e12 (107 days) is an error naming it") {
  // The trace starts at ProfilerStep#1's 1000 us; the kernel ends 1020 us + 9.3e12 us after 0:
  // (9.3e18 + 2e7 ps) / 8.64e16 ps a day = 107.6 days, past 2^62 ps = 53.4 days.
  const std::string path = data("huge_dur.json");
  const std::string at = byte_of(read_whole_file(path), "\"dur\": 9.3e12");
  CHECK(import_error(path) ==
        path + ": traceEvents[5] at byte " + at + ", kernel \"" + kClamp +
            "\" (\"ts\": 1020.000): \"dur\" is 9.3e12 us: the event ends 107.6 days after the "
            "trace's first timestamp (\"ts\": 1000); expected every event within 2^62 ps "
            "(53.4 days) of it");
}

TEST_CASE("kineto bad input: a time-reversed trace is an error naming the first activity before its launch") {
  // ProfilerStep#1 of single_gpu.json mirrored around 2500 us: the batch copy (launched at
  // 1012..1014, run 1015..1035) becomes a launch at 3986 and a copy at 3965, 21 us before it. All 15
  // launched activities start before their launch (before: a wrong profile, forward and optimizer
  // swapped, exit 0).
  const std::string path = data("time_reversed.json");
  const std::string text = read_whole_file(path);
  const std::string copy = byte_of(text, "\"Memcpy HtoD (Pageable -> Device)\"");
  const std::string launch = byte_of(text, "\"cudaMemcpyAsync\"");
  CHECK(import_error(path) == path + ": traceEvents[9] at byte " + copy +
                                  ", gpu_memcpy \"Memcpy HtoD (Pageable -> Device)\" (\"ts\": 3965) "
                                  "starts 21 us before its launch, traceEvents[8] at byte " +
                                  launch +
                                  ", cuda_runtime \"cudaMemcpyAsync\" "
                                  "(\"ts\": 3986); 15 of the 15 launched GPU activities of device 0 start "
                                  "before their launch; expected GPU "
                                  "work to start after it (is the trace's time reversed?)");
}

TEST_CASE("kineto bad input: the command's first error line, its exit status, and no profile left") {
  const auto out =
      std::filesystem::temp_directory_path() / ("hybridsim_bad_kineto-" + std::to_string(getpid()) + ".yaml");
  std::filesystem::remove(out);
  const std::string path = data("negative_dur.json");
  const std::string cmd =
      std::string(HYBRIDSIM_CLI) + " import kineto " + path + " --out " + out.string() + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string text;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) text += buf;
  const int status = pclose(pipe);
  CHECK(status != 0);
  CHECK(text.substr(0, text.find('\n')) == "hybridsim import: error: " + import_error(path));
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("kineto bad input: a few activities just before their launch are clock skew: a note") {
  // single_gpu.json with ProfilerStep#2's batch copy moved from 2015 to 2011.5 us, 0.5 us before
  // its launch at 2012: 1 of the 31 launched activities, so the clocks are slightly apart, not
  // reversed. The copy is still attributed by its launch, to aten::to#0.
  std::string text = read_whole_file(data("single_gpu.json"));
  const std::string from = "\"ts\": 2015.000, \"dur\": 20.000";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "\"ts\": 2011.500, \"dur\": 20.000");
  std::istringstream in(text);
  const auto r = import_kineto(workloads::parse_kineto_trace(in, "skew.json"), {.steps = 1});
  REQUIRE_FALSE(r.report.notes.empty());
  CHECK(r.report.notes[0] ==
        "1 of the 31 launched GPU activities of device 0 start before their launch (by at most "
        "500 ns: the CPU and GPU clocks slightly apart); they are attributed by their launch as "
        "usual");
  CHECK(r.profile.ops[0].name == "aten::to#0");
  CHECK(r.profile.ops[0].forward[0].name == "Memcpy HtoD");
}

TEST_CASE("kineto bad input: hand-written documents") {
  const std::string head = R"({"traceEvents": [)";
  // Two kernels of 3e12 us (34.7 days each, each within 53.4 days of the start) on two streams:
  // together 6e18 ps = 69.4 days of GPU time, more than 2^62 ps. The second is traceEvents[1].
  const std::string two =
      head + R"({"ph": "X", "cat": "kernel", "name": "k1", "ts": 0, "dur": 3e12, "args": {"stream": 7}},)"
             R"( {"ph": "X", "cat": "kernel", "name": "k2", "ts": 0, "dur": 3e12, "args": {"stream": 8}}]})";
  CHECK(doc_error(two) ==
        "doc.json: traceEvents[1] at byte " + byte_of(two, "\"k2\"") +
            ", kernel \"k2\" (\"ts\": 0): with it the GPU activities of device 0 add up to 69.4 days; "
            "expected at most 2^62 ps (53.4 days) of GPU time");
  // An all-reduce of 10^15 floats: 4000 TB, more than any GPU holds.
  const std::string huge =
      head + R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "ts": 0, "dur": 3, )"
             R"("args": {"Collective name": "allreduce", "In msg nelems": 1e15, "dtype": "Float"}}]})";
  CHECK(doc_error(huge) ==
        "doc.json: traceEvents[0] at byte 17, kernel \"ncclDevKernel_AllReduce\" (\"ts\": 0): "
        "\"In msg nelems\" is 1000000000000000 Float elements (4000 TB); expected a message of at "
        "most 1 TiB (no GPU holds more)");
  // An unsigned ts beyond int64 µs.
  const std::string far =
      head + R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 18446744073709551615, "dur": 1}]})";
  CHECK(doc_error(far) ==
        "doc.json: traceEvents[0] at byte 17, kernel \"k\" (\"ts\": 18446744073709551615): \"ts\" is "
        "18446744073709551615 us; expected microseconds that fit 64 bits (Kineto writes about 1.7e15, "
        "us since 1970)");
  // fwdbwd flow ends without an id cannot be paired: left out, and said so.
  const std::string flows = head +
                            R"({"ph": "s", "cat": "fwdbwd", "name": "fwdbwd", "pid": 1, "tid": 1, "ts": 0},)"
                            R"( {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}]})";
  std::istringstream in(flows);
  const auto r = import_kineto(workloads::parse_kineto_trace(in, "doc.json"), {});
  CHECK(r.report.skipped.at(0) == "1 × fwdbwd flow ends without an id");
}

TEST_CASE("kineto bad input: an optimizer time per GiB that sim::Time cannot hold") {
  // One forward op, its own backward op (no flows) with an AccumulateGrad of one float (4 B) after
  // it, and an optimizer kernel of 1 s: 10^12 ps × 2^30 / 4 B = 2.7·10^20 ps per GiB, more than 2^63.
  TraceMaker m;
  m.annotation("ProfilerStep#1", 0, 3e6);
  m.op("aten::mul", 0, 1, 5);
  m.launch(0, 2, 10, 5, "mul");
  m.op("autograd::engine::evaluate_function: MulBackward0", 1, 20, 10);
  m.launch(1, 22, 30, 10, "mul_bwd");
  const auto shapes = m.op("torch::autograd::AccumulateGrad", 1, 25, 2);
  m.trace.cpu[shapes].input_elements = 1;
  m.trace.cpu[shapes].input_element_bytes = 4;
  m.op("aten::add_", 0, 50, 5);
  m.launch(0, 51, 60, 1e6, "add");
  CHECK(error_of([&] { import_kineto(m.trace, {}); }) ==
        "made.json: ProfilerStep#1: the optimizer's 1 s over 4 B of parameters is more than 2^63 ps per GiB; "
        "expected "
        "an optimizer time a profile can hold per GiB of parameters (is the gradients' size right?)");
  // With a 1 ms optimizer: 10^9 × 2^30 / 4 = 2.7·10^17 ps per GiB, which fits.
  m.trace.gpu.back().duration = sim::Time::ms(1);
  CHECK(import_kineto(m.trace, {}).profile.optimizer.time_per_gib == sim::Time::ps(268'435'456'000'000'000));
}

TEST_CASE("kineto bad input: kernels overlapping on one stream are a measurement that is off: a note") {
  // Two launches 10 µs apart on one stream; the first kernel, 8 µs long, starts at 10 µs: the second
  // (at 15 µs) starts before it ends. On another stream the same times are ordinary overlap.
  for (const std::int64_t second_stream : {7, 8}) {
    TraceMaker m;
    m.annotation("ProfilerStep#1", 0, 100);
    m.op("aten::mul", 0, 1, 20);
    m.launch(0, 2, 10, 8, "mul");
    m.launch(0, 4, 15, 5, "add", second_stream);
    const auto r = import_kineto(m.trace, {});
    const std::string note = "1 × GPU activities starting before the previous one on their stream ends (a "
                             "stream runs one at a time: the trace's times are off; the overlap is clipped)";
    CHECK((std::find(r.report.notes.begin(), r.report.notes.end(), note) != r.report.notes.end()) ==
          (second_stream == 7));
    CHECK(r.report.average.stream_overlap == sim::Time::us(3));  // 15..18 µs, clipped either way
  }
}

TEST_CASE("kineto bad input: a gzip file and an empty traceEvents are named as such") {
  const std::string gz = std::string("\x1f\x8b\x08\x00", 4) + "rest";
  std::istringstream in(gz);
  CHECK(
      error_of([&] { workloads::parse_kineto_trace(in, "t.json.gz"); }) ==
      "t.json.gz: a gzip-compressed file (as tensorboard_trace_handler(use_gzip=True) writes); expected the "
      "JSON trace itself: decompress it first (gunzip -k FILE)");
  std::istringstream empty(R"({"traceEvents": []})");
  CHECK(error_of([&] { import_kineto(workloads::parse_kineto_trace(empty, "e.json"), {}); }) ==
        "e.json: \"traceEvents\" is empty: the profiler recorded nothing (was the trace exported before a "
        "profiled step ran?)");
  // A file cut short: the byte it ends at is its size (3 bytes here), not one past it.
  std::istringstream cut(R"({"t)");
  CHECK(error_of([&] { workloads::parse_kineto_trace(cut, "c.json"); }).starts_with("c.json: truncated: the "
                                                                                     "file ends at byte 3 "));
}

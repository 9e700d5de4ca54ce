// The streamed Kineto import in bounded memory: the launch table (import_kineto_launches.h) answers
// as the whole trace's index would, or says it cannot; and what a streamed import holds at once
// (launches, a batch's events, per-iteration records, ProfilerStep windows) is the same for a trace
// twice as long.
#include <doctest/doctest.h>

#include <string>

#include "tests/unit/import_kineto_files.h"
#include "workloads/import/import_kineto.h"
#include "workloads/import/import_kineto_launches.h"
#include "workloads/import/import_kineto_stream.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using hybridsim::testing::TempFile;
using workloads::kineto_detail::import_kineto_streamed;
using workloads::kineto_detail::LaunchTable;
using workloads::kineto_detail::StreamedImportCounts;
using Status = LaunchTable::Status;

namespace {

sim::Time us(std::int64_t v) { return sim::Time::us(v); }

LaunchTable::Activity activity(std::int64_t start_us) { return {us(start_us), {}, -1, true, false}; }

std::string x_event(const std::string& cat, const std::string& name, int tid, std::int64_t ts,
                    std::int64_t dur, const std::string& args = "") {
  return "{\"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + name +
         "\", \"pid\": " + (cat == "kernel" ? "0" : "1") + ", \"tid\": " + std::to_string(tid) +
         ", \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) +
         (args.empty() ? "" : ", \"args\": {" + args + "}") + "}";
}

// `n` iterations 1 ms apart, each four ops with a kernel each, launched on thread 1 (the first
// iteration's first kernel written before its launch, as a trace may).
std::string repeated_trace(int n) {
  std::string events;
  std::int64_t correlation = 1;
  auto add = [&](const std::string& e) { events += (events.empty() ? "" : ",\n") + e; };
  for (int k = 1; k <= n; ++k) {
    const std::int64_t t = 1'000'000 + 1000 * k;
    add(x_event("user_annotation", "ProfilerStep#" + std::to_string(k), 1, t, 900));
    for (int op = 0; op < 4; ++op) {
      const std::int64_t at = t + 10 + 50 * op, c = correlation++;
      add(x_event("cpu_op", op % 2 ? "aten::relu" : "aten::linear", 1, at, 20));
      const std::string launch =
          x_event("cuda_runtime", "cudaLaunchKernel", 1, at + 2, 2, "\"correlation\": " + std::to_string(c));
      const std::string kernel =
          x_event("kernel", op % 2 ? "relu_kernel" : "gemm", 7, at + 5, 10 + op,
                  "\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(c));
      if (k == 1 && op == 0) add(kernel), add(launch);
      else add(launch), add(kernel);
    }
  }
  return "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-40GB\"}],\n\"traceEvents\": [\n" +
         events + "\n]}\n";
}

std::string text_of(const workloads::KinetoImport& r) {
  return workloads::profile_to_yaml(r.profile) + workloads::describe_kineto_import(r);
}

}  // namespace

TEST_CASE("kineto launches: the first launch of an id, before or after its GPU work") {
  LaunchTable t;
  CHECK(t.launch(5, us(10)).empty());
  const auto found = t.find(5, activity(12));
  CHECK(found.status == Status::Found);
  CHECK(found.launch == us(10));
  CHECK(t.launch(5, us(99)).empty());  // a second launch with the id: the first counts
  CHECK(t.find(5, activity(13)).launch == us(10));
  CHECK(t.find(-1, activity(1)).status == Status::None);
  // GPU work met before its launch waits for it; work whose launch never comes has none.
  CHECK(t.find(8, activity(20)).status == Status::Pending);
  CHECK(t.find(9, activity(21)).status == Status::Pending);
  const auto waited = t.launch(8, us(18));
  REQUIRE(waited.size() == 1);
  CHECK(waited[0].start == us(20));
  const auto never = t.finish();
  REQUIRE(never.size() == 1);
  CHECK(never[0].start == us(21));
  CHECK(t.exact());
  CHECK(t.high_water() == 3);  // 5, 8 and 9's work
}

TEST_CASE("kineto launches: held while GPU work may still come, and unsure once forgotten") {
  LaunchTable t;
  // A CUDA graph: one launch, several kernels, each finding it while it is among the recent ones.
  t.launch(1, us(1));
  for (int k = 0; k < 3; ++k) CHECK(t.find(1, activity(2 + k)).status == Status::Found);
  // kMatched more launches matched: launch 1 is forgotten, and so is what launched its next kernel.
  for (std::int64_t c = 2; c <= 1 + static_cast<std::int64_t>(LaunchTable::kMatched); ++c) {
    t.launch(c, us(c));
    t.find(c, activity(c));
  }
  CHECK(t.high_water() == static_cast<std::int64_t>(LaunchTable::kMatched) + 1);  // and the one just met
  CHECK(t.exact());
  CHECK(t.find(1, activity(400)).status == Status::Unknown);
  CHECK_FALSE(t.exact());
  // A launch met after one with a smaller id was forgotten may repeat a forgotten one: unsure.
  LaunchTable u;
  for (std::int64_t c = 10; c < 10 + static_cast<std::int64_t>(LaunchTable::kUnmatched) + 1; ++c)
    u.launch(c, us(c));
  u.launch(3, us(1));
  CHECK(u.exact());
  CHECK(u.find(3, activity(2)).status == Status::Found);
  CHECK_FALSE(u.exact());
  CHECK(u.high_water() == static_cast<std::int64_t>(LaunchTable::kUnmatched) + 1);
}

TEST_CASE("kineto stream: what a streamed import holds does not grow with the trace") {
  const TempFile shorter("bounded_100.json", repeated_trace(100)),
      longer("bounded_200.json", repeated_trace(200));
  StreamedImportCounts a, b;
  const auto r100 = import_kineto_streamed(shorter.path, {}, 10, &a);
  const auto r200 = import_kineto_streamed(longer.path, {}, 10, &b);
  REQUIRE(r100);
  REQUIRE(r200);
  // The same import as the whole one, every iteration averaged (listed: the first and the last 63).
  CHECK(text_of(*r200) == text_of(workloads::import_kineto(workloads::read_kineto_trace(longer.path), {})));
  CHECK(r200->report.iteration_count == 200);
  REQUIRE(r200->report.iterations.size() == workloads::kListedIterations);
  CHECK(r200->report.iterations.front().name == "ProfilerStep#1");
  CHECK(r200->report.iterations[1].name == "ProfilerStep#138");
  CHECK(r200->report.iterations.back().name == "ProfilerStep#200");
  CHECK(a.windows == 100);  // one segment each: every window
  CHECK(b.windows == 200);
  // 4 launches an iteration (400 and 800): the recently matched ones held, and the one just met.
  CHECK(a.launches == b.launches);
  CHECK(a.launches == static_cast<std::int64_t>(LaunchTable::kMatched) + 1);
  // A batch of 10 activities: 2 iterations (4 kernels each), their ops, launches and annotations.
  CHECK(a.events == b.events);
  CHECK(a.events > 0);
  CHECK(a.iteration_records == b.iteration_records);
  CHECK(a.iteration_records == static_cast<std::int64_t>(workloads::kListedIterations));
}

TEST_CASE("kineto stream: a trace of more iterations than a segment holds is imported segment by segment") {
  // 10 and 20 segments of 64 windows, the earliest batch of each read from the file's start.
  const TempFile shorter("segments_640.json", repeated_trace(640)),
      longer("segments_1280.json", repeated_trace(1280));
  StreamedImportCounts a, b;
  // Progress is told how many reads of the file there will be: the windows', then one a segment, then
  // the batches' parts (about one in all): 2 + 10 for 640 iterations.
  workloads::KinetoImportOptions told;
  int passes = 0;
  told.passes_known = [&passes](int n) { passes = n; };
  const auto r640 = import_kineto_streamed(shorter.path, told, 40, &a, 64);
  CHECK(passes == 12);
  const auto r1280 = import_kineto_streamed(longer.path, {}, 40, &b, 64);
  REQUIRE(r640);
  REQUIRE(r1280);
  CHECK(text_of(*r1280) == text_of(workloads::import_kineto(workloads::read_kineto_trace(longer.path), {})));
  CHECK(r1280->report.iteration_count == 1280);
  CHECK(r1280->report.iterations.front().name == "ProfilerStep#1");
  CHECK(r1280->report.iterations.back().name == "ProfilerStep#1280");
  // The windows held at once: one segment's, whatever the number of iterations.
  CHECK(a.windows == 64);
  CHECK(b.windows == 64);
  CHECK(a.launches == b.launches);
  CHECK(a.events == b.events);
  CHECK(a.iteration_records == b.iteration_records);
  // --steps: the last iterations of the latest segment, the earlier ones counted as not selected.
  workloads::KinetoImportOptions last;
  last.steps = 100;
  const auto selected = import_kineto_streamed(longer.path, last, 40, nullptr, 64);
  REQUIRE(selected);
  CHECK(text_of(*selected) ==
        text_of(workloads::import_kineto(workloads::read_kineto_trace(longer.path), last)));
  CHECK(selected->report.iteration_count == 100);
}

TEST_CASE("kineto stream: a segment cut through windows that begin together goes whole") {
  // Two windows with one begin on either side of a one-window segment: no segment can hold the
  // pair, so the import goes whole (nullopt) rather than split what window_at cannot tell apart.
  std::string events =
      x_event("user_annotation", "ProfilerStep#1", 1, 1'000'000, 900) + ",\n" +
      x_event("user_annotation", "ProfilerStep#2", 1, 1'000'000, 900) + ",\n" +
      x_event("cuda_runtime", "cudaLaunchKernel", 1, 1'000'010, 2, "\"correlation\": 1") + ",\n" +
      x_event("kernel", "gemm", 7, 1'000'020, 10, "\"device\": 0, \"stream\": 7, \"correlation\": 1");
  const TempFile tied("tied.json", "{\"traceEvents\": [\n" + events + "\n]}\n");
  CHECK_FALSE(import_kineto_streamed(tied.path, {}, 10, nullptr, 1));
  CHECK(import_kineto_streamed(tied.path, {}, 10, nullptr, 2));
}

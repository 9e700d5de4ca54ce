// The steps of the Kineto importer's driver (workloads/import/import_kineto_parts.h), each on hand-made
// traces and drafts (tests/unit/import_kineto_maker.h): the device, the iteration windows and what
// each launched, the selection, the averaging, the gradient source and the profile.
#include <doctest/doctest.h>

#include <algorithm>

#include "sim/error.h"
#include "tests/unit/import_kineto_maker.h"
#include "workloads/import/import_kineto_fold.h"
#include "workloads/import/import_kineto_parts.h"

using namespace hybridsim;
using namespace hybridsim::workloads::kineto_detail;
using hybridsim::testing::TraceMaker;
using sim::Bytes;
using sim::Time;
using workloads::KinetoCpuKind;

namespace {

Time us(double v) { return TraceMaker::us(v); }

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A draft op with one forward and one backward kernel.
DraftOp draft_op(const std::string& name, double fwd_us, double bwd_us) {
  DraftOp op;
  op.name = name;
  op.forward = {{"f", us(fwd_us), 7, {}}};
  op.backward = {{"b", us(bwd_us), 7, {}}};
  return op;
}

}  // namespace

TEST_CASE("kineto steps: check_options") {
  CHECK(error_of([] { check_options({.steps = -1}); }) == "--steps must be 0 (all) or positive");
  CHECK(error_of([] { check_options({.batch = 0}); }) == "--batch must be at least 1");
  CHECK(error_of([] { check_options({.units_per_step = -2}); }) == "--units-per-step must be positive");
  CHECK(error_of([] { check_options({.steps = 3, .batch = 64}); }) == "(no error)");
  // --unit samples (the default) counts a step's batch: 5 samples a step of batch 1 was written, and
  // run printed 1 sample a step beside a results.csv of 5 (issue 31). Another unit takes any count.
  CHECK(error_of([] { check_options({.units_per_step = 5}); }) ==
        "--units-per-step 5: under --unit samples a step counts its --batch, 1; expected 0 or 1, or the "
        "--unit a "
        "step counts 5 of (tokens, ...)");
  CHECK(error_of([] { check_options({.batch = 5, .units_per_step = 5}); }) == "(no error)");
  CHECK(error_of([] { check_options({.throughput_unit = "tokens", .units_per_step = 5}); }) == "(no error)");
}

TEST_CASE("kineto steps: choose_device takes the lowest device with GPU work, or the one asked for") {
  TraceMaker m;
  m.gpu("a", 0, 1, 7, 5);
  m.gpu("b", 1, 1, 7, 2);
  m.gpu("c", 2, 1, 7, 5);
  m.trace.devices.push_back({5, "NVIDIA H100", 0});
  const DeviceChoice lowest = choose_device(m.trace, std::nullopt);
  CHECK(lowest.device == 2);
  CHECK(lowest.gpu == "unknown");  // no deviceProperties entry for device 2
  CHECK(lowest.skipped ==
        std::vector<std::string>{"2 × GPU activities on device 5 (this import reads device 2)"});
  CHECK(lowest.notes ==
        std::vector<std::string>{"no deviceProperties entry for the device: gpu recorded as unknown"});
  const DeviceChoice five = choose_device(m.trace, 5);
  CHECK(five.gpu == "NVIDIA H100");
  CHECK(five.notes.empty());
  CHECK(five.skipped ==
        std::vector<std::string>{"1 × GPU activities on device 2 (this import reads device 5)"});
  CHECK(error_of([&] { choose_device(m.trace, 7); }) == "made.json: no GPU activity on device 7");
  m.trace.gpu.clear();
  CHECK(error_of([&] { choose_device(m.trace, std::nullopt); })
            .starts_with("made.json: no GPU activity (kernels, memcpys, memsets) in the trace"));
}

TEST_CASE("kineto steps: check_time_order tells clock skew from time running backwards") {
  // Four launches on device 0; the third kernel starts 1 us before its launch (at 20, run at 19).
  TraceMaker m;
  m.launch(0, 0, 5, 2, "a");
  m.launch(0, 10, 12, 2, "b");
  m.launch(0, 20, 19, 2, "c");
  m.launch(0, 30, 31, 2, "d");
  m.gpu("no launch", 40, 1);   // not counted: nothing to compare with
  m.launch(0, 50, 40, 1, "other", 7, 1);  // another device's
  const KinetoIndex index(m.trace);
  // 1 of 4: a note, with the largest lead.
  CHECK(check_time_order(m.trace, index, 0) ==
        std::vector<std::string>{
            "1 of the 4 launched GPU activities of device 0 start before their launch (by at most "
            "1 us: the CPU and GPU clocks slightly apart); they are attributed by their launch as "
            "usual"});
  // 2 of 4 (half): time runs backwards; the first of them in the trace is named.
  m.trace.gpu[1].start = us(9);
  CHECK(error_of([&] { check_time_order(m.trace, KinetoIndex(m.trace), 0); }) ==
        "made.json: traceEvents[-1] at byte -1, kernel \"b\" (\"ts\": 9) starts 1 us before its launch, "
        "traceEvents[-1] at byte -1, cuda_runtime \"cudaLaunchKernel\" (\"ts\": 10); 2 of the 4 launched GPU "
        "activities of device 0 start before their launch; expected GPU work to start after it (is the "
        "trace's time "
        "reversed?)");
  // Device 1's one activity started before its launch: alone, it is reversed.
  CHECK(error_of([&] { check_time_order(m.trace, KinetoIndex(m.trace), 1); }).find("1 of the 1 launched") !=
        std::string::npos);
  // In order: nothing to say.
  TraceMaker ok;
  ok.launch(0, 0, 5, 2, "a");
  CHECK(check_time_order(ok.trace, KinetoIndex(ok.trace), 0).empty());
  // The device's GPU time: 2^61 ps twice is 2^62, the most; a third ps more is too much (53.4 days).
  TraceMaker busy;
  busy.gpu("x", 0, 1, 7);
  busy.gpu("y", 0, 1, 8);
  busy.trace.gpu[0].duration = Time::ps(std::int64_t{1} << 61);
  busy.trace.gpu[1].duration = Time::ps(std::int64_t{1} << 61);
  CHECK(check_time_order(busy.trace, KinetoIndex(busy.trace), 0).empty());
  busy.gpu("z", 0, 0, 9);
  busy.trace.gpu[2].duration = Time::ps(1);
  CHECK(error_of([&] { check_time_order(busy.trace, KinetoIndex(busy.trace), 0); }) ==
        "made.json: traceEvents[-1] at byte -1, kernel \"z\" (\"ts\": 0): with it the GPU activities of "
        "device 0 add "
        "up to 53.4 days; expected at most 2^62 ps (53.4 days) of GPU time");
}

TEST_CASE("kineto steps: find_iteration_windows and window_at") {
  TraceMaker m;
  m.annotation("ProfilerStep#2", 100, 50);
  m.annotation("ProfilerStep#1", 0, 100);
  m.annotation("Optimizer.step#SGD.step", 10, 5);  // not an iteration
  m.op("ProfilerStep#9", 0, 300, 10);              // a CPU op, not an annotation
  const IterationWindows w = find_iteration_windows(m.trace);
  CHECK_FALSE(w.whole_trace);
  REQUIRE(w.windows.size() == 2);
  CHECK(w.windows[0].name == "ProfilerStep#1");
  CHECK(w.windows[0].begin == us(0));
  CHECK(w.windows[0].end == us(100));
  CHECK(w.windows[0].cpu_duration == us(100));
  CHECK(w.windows[1].name == "ProfilerStep#2");
  // Half-open windows [0, 100) and [100, 150).
  CHECK(window_at(w.windows, us(0)) == 0u);
  CHECK(window_at(w.windows, us(100) - Time::ps(1)) == 0u);
  CHECK(window_at(w.windows, us(100)) == 1u);
  CHECK(window_at(w.windows, us(150)) == std::nullopt);
  CHECK(window_at(w.windows, us(-1)) == std::nullopt);

  TraceMaker none;
  none.op("aten::add", 0, 0, 1);
  const IterationWindows whole = find_iteration_windows(none.trace);
  CHECK(whole.whole_trace);
  REQUIRE(whole.windows.size() == 1);
  CHECK(whole.windows[0].name == "whole trace");
  CHECK(window_at(whole.windows, us(-1e9)) == 0u);
}

TEST_CASE("kineto steps: assign_to_windows puts activities in the window that launched them") {
  TraceMaker m;
  const std::vector<IterationWindow> windows{{"ProfilerStep#1", us(0), us(100), us(100)},
                                             {"ProfilerStep#2", us(100), us(200), us(100)}};
  const auto late = m.launch(0, 90, 130, 5, "late");  // launched in #1, ran during #2: stays in #1
  const auto second = m.launch(0, 110, 115, 5, "second");
  m.gpu("after", 250, 5);                             // no launch record, after both: outside
  m.launch(0, 20, 25, 5, "other device", 7, 1);       // not the imported device: neither
  const auto shapes = m.op("torch::autograd::AccumulateGrad", 1, 120, 2);
  m.trace.cpu[shapes].input_elements = 10;
  const auto step = m.annotation("Optimizer.step#SGD.step", 50, 10);
  m.op("aten::add", 0, 30, 2);  // needed by neither
  const WindowAssignment a = assign_to_windows(m.trace, KinetoIndex(m.trace), windows, 0);
  REQUIRE(a.content.size() == 2);
  CHECK(a.content[0].gpu == std::vector<std::uint32_t>{late});
  CHECK(a.content[1].gpu == std::vector<std::uint32_t>{second});
  CHECK(a.outside == 1);
  CHECK(a.content[0].cpu == std::vector<std::uint32_t>{step});
  CHECK(a.content[1].cpu == std::vector<std::uint32_t>{shapes});
}

namespace {

// Four windows of 100 µs: #1 and #2 each run one kernel, #3 only an NCCL kernel, #4 nothing.
struct FourWindows {
  TraceMaker m;
  std::vector<IterationWindow> windows;
  WindowAssignment assignment;
  FourWindows() {
    for (int i = 0; i < 4; ++i)
      windows.push_back({"ProfilerStep#" + std::to_string(i + 1), us(100 * i), us(100 * i + 100), us(100)});
    assignment.content.resize(4);
    assignment.content[0].gpu = {m.gpu("k", 10, 5)};
    assignment.content[1].gpu = {m.gpu("k", 110, 7)};
    const auto nccl = m.gpu("ncclDevKernel_AllReduce", 210, 5, 30);
    m.collective(nccl, "allreduce", 10);
    assignment.content[2].gpu = {nccl};
  }
};

}  // namespace

// The import's own loop (import_kineto.cpp): the windows latest first, each wanted one extracted and
// folded; the report as finish() writes it.
workloads::KinetoImportReport fold_windows(const FourWindows& f, int steps) {
  const KinetoIndex index(f.m.trace);
  IterationFold fold(steps);
  for (std::size_t w = f.windows.size(); w-- > 0;)
    if (fold.wants(f.windows[w].name, !f.assignment.content[w].gpu.empty()))
      fold.add(f.windows[w].name,
               extract_iteration(f.m.trace, index, f.windows[w], f.assignment.content[w], false));
  workloads::KinetoImportReport r;
  fold.finish(f.m.trace.source, 0, r);
  return r;
}

std::vector<std::string> names(const std::vector<workloads::KinetoIterationStats>& iterations) {
  std::vector<std::string> out;
  for (const auto& s : iterations) out.push_back(s.name);
  return out;
}

TEST_CASE("kineto steps: the iteration fold takes the last --steps iterations with compute") {
  FourWindows f;
  // From the end: #4 launched nothing, #3 only communication, #2 is the one, #1 is not selected.
  const workloads::KinetoImportReport one = fold_windows(f, 1);
  CHECK(names(one.iterations) == std::vector<std::string>{"ProfilerStep#2"});
  CHECK(one.skipped == std::vector<std::string>{
                           "ProfilerStep#3: no compute on the device, only communication",
                           "ProfilerStep#4: no GPU activity launched (profiling stopped or warm-up)",
                           "ProfilerStep#1: not selected (--steps 1 averages the last complete iterations)"});
  // The selection's own note comes first, before the drafts' summed notes (none here about --steps).
  CHECK(std::none_of(one.notes.begin(), one.notes.end(),
                     [](const std::string& n) { return n.starts_with("--"); }));
  // All (0): #1 and #2, in trace order.
  CHECK(names(fold_windows(f, 0).iterations) == std::vector<std::string>{"ProfilerStep#1", "ProfilerStep#2"});
  // More than there are: a note counting the 3 windows with GPU work (#3's communication too).
  CHECK(fold_windows(f, 5).notes.at(0) == "--steps 5 asked for more iterations than the 3 with GPU work");
  // Several idle windows are listed as a range.
  f.assignment.content[0].gpu.clear();
  CHECK(fold_windows(f, 0).skipped.at(1) ==
        "ProfilerStep#1 .. ProfilerStep#4 (2 iterations): no GPU activity launched (profiling stopped or "
        "warm-up)");
  // Nothing with compute: an error naming the file and the device.
  f.assignment.content[1].gpu.clear();
  CHECK(error_of([&] { fold_windows(f, 0); }) ==
        "made.json: no complete iteration with GPU work on device 0");
}

TEST_CASE("kineto steps: the iteration fold averages those with the last one's ops and kernels") {
  std::vector<IterationDraft> drafts(3);
  drafts[0].stats.name = "ProfilerStep#1";
  drafts[0].ops = {draft_op("aten::add#0", 1, 1)};
  drafts[1].stats.name = "ProfilerStep#2";
  drafts[1].ops = {draft_op("aten::add#0", 2, 3), draft_op("aten::mul#0", 1, 1)};
  drafts[2].stats.name = "ProfilerStep#3";
  drafts[2].ops = {draft_op("aten::add#0", 4, 5), draft_op("aten::mul#0", 1, 1)};
  CHECK(structure_difference(drafts[1], drafts[2]).empty());  // durations may differ
  CHECK(structure_difference(drafts[0], drafts[2]) == "1 ops against 2");
  IterationDraft renamed = drafts[1];
  renamed.ops[1].backward[0].name = "other";
  CHECK(structure_difference(renamed, drafts[2]) ==
        "op 1 is aten::mul#0 against aten::mul#0 (or its kernels differ)");
  IterationFold fold(0);
  for (std::size_t i = drafts.size(); i-- > 0;) {  // latest first, the reference the first folded
    REQUIRE(fold.wants(drafts[i].stats.name, true));
    fold.add(drafts[i].stats.name, drafts[i]);
  }
  workloads::KinetoImportReport r;
  fold.finish("made.json", 0, r);
  CHECK(fold.ref().stats.name == "ProfilerStep#3");
  CHECK(fold.sums().n == 2);
  // #2 and #3 summed kernel by kernel: add's forward kernel 2 + 4.
  CHECK(fold.sums().ops.at(0).forward.at(0).first == drafts[1].ops[0].forward[0].duration.ps() +
                                                         drafts[2].ops[0].forward[0].duration.ps());
  CHECK(names(r.iterations) == std::vector<std::string>{"ProfilerStep#2", "ProfilerStep#3"});
  CHECK(r.skipped ==
        std::vector<std::string>{"ProfilerStep#1: its ops differ from ProfilerStep#3's (1 ops against 2)"});
}

TEST_CASE("kineto steps: mean_stats rounds each mean to the nearest ps, halves up") {
  workloads::KinetoIterationStats a, b;
  a.name = "ProfilerStep#1";
  b.name = "ProfilerStep#2";
  a.span = Time::ps(3);  // (3 + 4) / 2 = 3.5 → 4
  b.span = Time::ps(4);
  a.busy = Time::ps(2);  // (2 + 2) / 2 = 2
  b.busy = Time::ps(2);
  a.gap_count = 1;       // 1.5 → 2
  b.gap_count = 2;
  a.largest_gap = Time::ps(9);  // the largest, not a mean
  b.largest_gap = Time::ps(5);
  a.activities = 10;
  b.activities = 11;
  const auto m = mean_stats({a, b});
  CHECK(m.name == "ProfilerStep#1..ProfilerStep#2 (mean of 2)");
  CHECK(m.span == Time::ps(4));
  CHECK(m.busy == Time::ps(2));
  CHECK(m.gap_count == 2);
  CHECK(m.largest_gap == Time::ps(9));
  CHECK(m.activities == 11);
  CHECK(mean_stats({a}).name == "ProfilerStep#1");
  CHECK(mean_time(7, 3) == Time::ps(2));  // 2.33 → 2
  CHECK(mean_time(8, 3) == Time::ps(3));  // 2.67 → 3
  // Three spans of 2^62 ps: their sum passes int64, their mean does not.
  const Wide big = Wide{1} << 62;
  CHECK(mean_time(3 * big, 3) == Time::ps(std::int64_t{1} << 62));
  CHECK(counted("things", 4) == "4 × things");
}

TEST_CASE("kineto steps: report_counts sums the averaged iterations' skips and notes") {
  IterationDraft a, b;
  a.skipped["NCCL broadcast kernels: not gradient all-reduces"] = 1;
  b.skipped["NCCL broadcast kernels: not gradient all-reduces"] = 2;
  b.notes["GPU activities without a launch record, attributed by their start time"] = 5;
  std::vector<std::string> skipped{"earlier"}, notes;
  report_counts(sum_drafts({&a, &b}), skipped, notes);
  CHECK(
      skipped ==
      std::vector<std::string>{
          "earlier", "3 × NCCL broadcast kernels: not gradient all-reduces (over the averaged iterations)"});
  CHECK(notes == std::vector<std::string>{
                     "5 × GPU activities without a launch record, attributed by their start time"});
}

TEST_CASE("kineto steps: choose_gradient_source prefers the all-reduces to the AccumulateGrad shapes") {
  IterationDraft ref;
  ref.stats.name = "ProfilerStep#2";
  ref.ops = {draft_op("a#0", 1, 1), draft_op("b#0", 1, 1)};
  CHECK(choose_gradient_source(ref, {&ref}).name == "none");
  ref.ops[0].accumulate_bytes = Bytes::of(100);
  ref.ops[1].accumulate_bytes = Bytes::of(20);
  const GradientSource shapes = choose_gradient_source(ref, {&ref});
  CHECK(shapes.name == "AccumulateGrad shapes");
  CHECK(shapes.accumulate);
  CHECK_FALSE(shapes.nccl);
  CHECK(shapes.accumulate_bytes == Bytes::of(120));
  ref.ops[1].nccl_bytes = Bytes::of(480);
  IterationDraft other = ref;
  other.ops[1].nccl_bytes = Bytes::of(400);
  const GradientSource nccl = choose_gradient_source(ref, {&other, &ref});
  CHECK(nccl.name == "nccl all-reduce");
  CHECK(nccl.accumulate_bytes == Bytes::of(120));
  CHECK(nccl.notes ==
        std::vector<std::string>{"all-reduce sizes differ between iterations: ProfilerStep#2's are used"});
}

TEST_CASE("kineto steps: network_name and precision_of") {
  CHECK(network_name("/traces/resnet.json.gz") == "resnet");
  CHECK(network_name("x.trace.json") == "x");
  CHECK(network_name("dir/.json") == "imported");
  CHECK(precision_of("Float") == "fp32");
  CHECK(precision_of("c10::Half") == "fp16");
  CHECK(precision_of("BFloat16") == "bf16");
  CHECK(precision_of("double") == "fp64");
  CHECK(precision_of("") == "unknown");
}

namespace {

// Two alike iterations of two ops; the second op's gradient came from one recorded all-reduce.
struct TwoDrafts {
  std::vector<IterationDraft> drafts = std::vector<IterationDraft>(2);
  workloads::KinetoImportReport report;
  workloads::KinetoImportOptions options{.batch = 32};
  TwoDrafts() {
    drafts[0].ops = {draft_op("aten::to#0", 10, 0), draft_op("aten::linear#0", 100, 200)};
    drafts[1].ops = {draft_op("aten::to#0", 10, 0), draft_op("aten::linear#0", 101, 204)};
    drafts[0].ops[1].backward[0].idle_before = us(3);  // kept gaps: 3 and 0 → 1.5 µs
    for (auto& d : drafts) {
      d.ops[1].nccl_bytes = Bytes::of(1 << 20);
      d.optimizer = us(40);
      d.optimizer_idle = us(2);
    }
    drafts[1].optimizer = us(50);
    drafts[1].stats.name = "ProfilerStep#2";
    drafts[1].buckets = {{1, Bytes::of(1 << 20), "Float", 2, us(30), "0", "[0, 1]"}};
    drafts[1].dtype = "Float";
    drafts[1].optimizer_name = "SGD";
    report.source = "/x/ddp.json";
    report.device = 0;
    report.gpu = "NVIDIA A100";
    report.rank = 1;
    report.world_size = 2;
    report.average.name = "ProfilerStep#1..ProfilerStep#2 (mean of 2)";
    report.gradient_source = "nccl all-reduce";
  }
};

}  // namespace

TEST_CASE("kineto steps: assemble_profile averages kernels, keeps the buckets and spreads the optimizer") {
  TwoDrafts t;
  const std::vector<const IterationDraft*> used{&t.drafts[0], &t.drafts[1]};
  const GradientSource g = choose_gradient_source(t.drafts[1], used);
  std::vector<std::string> notes;
  const workloads::Profile p =
      assemble_profile({t.options, t.report, t.drafts[1], sum_drafts(used), g}, notes);
  CHECK(p.meta.network == "ddp");
  CHECK(p.meta.gpu == "NVIDIA A100");
  CHECK(p.meta.precision == "fp32");
  CHECK(p.meta.batch_per_gpu == 32);
  CHECK(p.meta.units_per_step == 32);
  CHECK(p.meta.source ==
        "Kineto trace ddp.json: ProfilerStep#1..ProfilerStep#2 (mean of 2), device 0, rank 1 of 2");
  REQUIRE(p.ops.size() == 2);
  // Means: forward (100 + 101) / 2 = 100.5 µs, backward (200 + 204) / 2 = 202 µs, idle 1.5 µs.
  CHECK(p.ops[1].forward == std::vector<workloads::Kernel>{{"f", us(100.5)}});
  CHECK(p.ops[1].backward == std::vector<workloads::Kernel>{{"b", us(202), us(1.5)}});
  CHECK(p.ops[1].gradient_bytes == Bytes::of(1 << 20));
  CHECK(p.ops[1].exchange == workloads::GradientExchange::DenseAllReduce);
  CHECK(p.ops[1].buckets == std::vector<Bytes>{Bytes::of(1 << 20)});
  CHECK_FALSE(p.ops[0].has_gradient());
  // Optimizer: (40 + 50) / 2 = 45 µs over 1 MiB = 2^-10 GiB: 45 × 1024 µs per GiB; idle 2 µs.
  CHECK(p.optimizer.name == "SGD");
  CHECK(p.optimizer.time_per_gib == us(45 * 1024));
  CHECK(p.optimizer.idle_before == us(2));
  CHECK(notes.empty());
  CHECK(averaged_kernels(used, 0, &DraftOp::backward) == std::vector<workloads::Kernel>{{"b", Time::zero()}});

  // Without gradient sizes the optimizer's time is a backward kernel of the first op.
  for (auto& d : t.drafts) d.ops[1].nccl_bytes = Bytes{};
  t.drafts[1].buckets.clear();
  t.drafts[1].optimizer_name.clear();
  const GradientSource none = choose_gradient_source(t.drafts[1], used);
  const workloads::Profile q =
      assemble_profile({t.options, t.report, t.drafts[1], sum_drafts(used), none}, notes);
  CHECK(q.optimizer.name == "measured");
  CHECK(q.optimizer.time_per_gib == Time::zero());
  CHECK(q.ops[0].backward.back() == workloads::Kernel{"optimizer", us(45), us(2)});
  CHECK(notes ==
        std::vector<std::string>{
            "no gradient sizes recorded (no NCCL all-reduce, no AccumulateGrad shapes): the optimizer's 45 "
            "us are kept as a backward kernel of aten::to#0, whose backward runs last"});
  // The metadata's own options.
  t.options.network = "mine";
  t.options.units_per_step = 7;
  t.report.rank.reset();
  const auto meta = profile_metadata({t.options, t.report, t.drafts[1], sum_drafts(used), none});
  CHECK(meta.network == "mine");
  CHECK(meta.units_per_step == 7);
  CHECK(meta.source == "Kineto trace ddp.json: ProfilerStep#1..ProfilerStep#2 (mean of 2), device 0");
  CHECK(meta.notes.find("CPU launch gaps dropped; gradients from nccl all-reduce") != std::string::npos);
}

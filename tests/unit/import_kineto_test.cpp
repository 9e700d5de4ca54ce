// The Kineto importer on small traces in the real format (tests/data/kineto, written by
// make_traces.py there): a single-GPU run of two iterations on two streams, a 2-rank DDP iteration
// with NCCL all-reduces, and broken files. Every time below is read off make_traces.py. Also: kept
// launch gaps replay as idle time. (Recorded all-reduces replayed as the buckets, in a scenario too:
// import_kineto_replay_test.cpp.)
#include <doctest/doctest.h>
#include <unistd.h>
#include "tests/paths/paths.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/step/step_runner.h"
#include "sim/error.h"
#include "tests/unit/import_kineto_files.h"
#include "tests/unit/test_files.h"
#include "topology/presets.h"
#include "workloads/import/import_kineto.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using sim::Bytes;
using sim::Time;
using workloads::import_kineto;
using workloads::KinetoImportOptions;

using hybridsim::testing::read_whole_file;
using hybridsim::testing::replace_nth;
using hybridsim::testing::TempFile;

namespace {

std::string data(const std::string& name) { return hybridsim::testing::kineto_data(name); }

// ns with three decimals of µs: Time of "640.345 us".
Time us(double v) { return Time::ps(static_cast<std::int64_t>(v * 1e6 + (v >= 0 ? 0.5 : -0.5))); }

analysis::StepResult replay_step(const workloads::Profile& p) { return analysis::simulate_on_one_gpu(p); }

Time replay_one_gpu(const workloads::Profile& p) { return replay_step(p).step_time; }

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

std::string error_of(const std::string& path) {
  try {
    import_kineto(path, {});
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_of(const TempFile& file) { return error_of(file.path); }

}  // namespace

TEST_CASE("kineto: one iteration of one GPU becomes ops with their kernels") {
  const auto r = import_kineto(data("single_gpu.json"), {.steps = 1, .batch = 64});
  const workloads::Profile& p = r.profile;
  // The last complete iteration, ProfilerStep#2 (ProfilerStep#3 launched nothing).
  REQUIRE(r.report.iterations.size() == 1);
  CHECK(r.report.iterations[0].name == "ProfilerStep#2");
  CHECK(r.report.events_read == 216);
  // Six outermost forward CPU ops launched GPU work, in launch order; aten::t and the zero_grad
  // annotation launched none, record_function ranges are not ops.
  REQUIRE(p.ops.size() == 6);
  const std::vector<std::string> names{"aten::to#0",       "aten::linear#0",   "aten::relu#0",
                                       "aten::linear#1",   "aten::mse_loss#0", "aten::ones_like#0"};
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(p.ops[i].name == names[i]);
  // Forward: the batch copy on stream 20, then stream 7; kernels named without templates.
  CHECK(p.ops[0].forward == std::vector<workloads::Kernel>{{"Memcpy HtoD", Time::us(20)}});
  CHECK(p.ops[1].forward == std::vector<workloads::Kernel>{{"ampere_sgemm_128x64_tn", Time::us(100)}});
  CHECK(p.ops[2].forward[0].name == "at::native::vectorized_elementwise_kernel");
  // The loss: two kernels and the memset it launched inside ProfilerStep#2 (253.5 → 254 us).
  CHECK(p.ops[4].forward == std::vector<workloads::Kernel>{
                                {"at::native::vectorized_elementwise_kernel", Time::us(10)},
                                {"at::native::reduce_kernel", us(6.5)},
                                {"Memset", us(0.5)}});
  // Backward through the fwdbwd flows. AddmmBackward0 of linear#1 ran its weight gradient on
  // stream 20 from 400 to 480 us while the data gradient ran on stream 7 until 434 us: the 34 us of
  // overlap are clipped, 46 us remain.
  CHECK(p.ops[3].backward == std::vector<workloads::Kernel>{
                                 {"ampere_sgemm_64x32_sliced1x4_nn", Time::us(160)},
                                 {"ampere_sgemm_128x64_nt", Time::us(46)}});
  CHECK(p.ops[1].backward == std::vector<workloads::Kernel>{{"ampere_sgemm_128x64_nt", Time::us(100)}});
  CHECK(p.ops[4].backward.size() == 1);
  CHECK(p.ops[0].backward.empty());
  // Dependencies: stream order; linear#0 is the first op on stream 7, so it follows the copy.
  for (std::uint32_t i = 1; i < 6; ++i) CHECK(p.ops[i].inputs == std::vector<std::uint32_t>{i - 1});
  CHECK(p.ops[0].inputs.empty());
  // No NCCL: gradients from the AccumulateGrad shapes, on the op whose backward ran before them:
  // 512 × 1024 + 512 floats for linear#0, 256 × 512 + 256 for linear#1.
  CHECK(r.report.gradient_source == "AccumulateGrad shapes");
  CHECK(p.ops[1].gradient_bytes == Bytes::of((512 * 1024 + 512) * 4));
  CHECK(p.ops[3].gradient_bytes == Bytes::of((256 * 512 + 256) * 4));
  CHECK(p.ops[3].exchange == workloads::GradientExchange::DenseAllReduce);
  CHECK(p.parameter_bytes() == Bytes::of(2624512));
  CHECK_FALSE(p.ops[2].has_gradient());
  // Metadata.
  CHECK(p.meta.gpu == "NVIDIA A100-SXM4-40GB");
  CHECK(p.meta.precision == "fp32");
  CHECK(p.meta.network == "single_gpu");
  CHECK(p.meta.batch_per_gpu == 64);
  CHECK(p.optimizer.name == "SGD");
  // What was left out.
  CHECK(mentions(r.report.skipped, "ProfilerStep#1: not selected"));
  CHECK(mentions(r.report.skipped, "ProfilerStep#3: no GPU activity"));
  CHECK(mentions(r.report.skipped, "1 × GPU activities launched outside the ProfilerStep iterations"));
}

TEST_CASE("kineto: measured span, gaps and overlap, replay within 5%, exact with gaps kept") {
  const auto r = import_kineto(data("single_gpu.json"), {.steps = 1});
  const auto& m = r.report.average;
  // ProfilerStep#2: the copy starts at 2015 us, the last optimizer kernel ends at 2639 + 16.345.
  CHECK(m.span == us(640.345));
  // Idle GPU: 35→37 (before the first GEMM), 256→259, 500→504, 604→609 us (the memset fills
  // 253.5→254).
  CHECK(m.launch_gaps == Time::us(14));
  CHECK(m.gap_count == 4);
  CHECK(m.largest_gap == Time::us(5));
  CHECK(m.stream_overlap == Time::us(34));
  CHECK(m.busy == us(626.345));
  CHECK(m.busy + m.launch_gaps == m.span);
  // Phases: forward 20+100+20+80+10+6.5+0.5+2, backward 15+160+46+20+100, optimizer 30+16.345.
  CHECK(m.forward == Time::us(239));
  CHECK(m.backward == Time::us(341));
  CHECK(m.optimizer == us(46.345));
  CHECK(m.cpu_duration == Time::ms(1));
  const workloads::Profile& p = r.profile;
  CHECK(p.forward_time() == Time::us(239));
  CHECK(p.backward_time() == Time::us(341));
  CHECK(p.idle_time() == Time::zero());
  // The optimizer's 46.345 us are spread over the 2,624,512 parameter bytes; rounding up per op
  // adds at most 1 ps for each of the two ops with gradients.
  CHECK(p.optimizer_time(1) >= us(46.345));
  CHECK(p.optimizer_time(1) <= us(46.345) + Time::ps(2));

  // Replay on one simulated GPU: the busy time, 14 us (2.19%) short of the span.
  const Time dropped = replay_one_gpu(p);
  CHECK(dropped >= us(626.345));
  CHECK(dropped <= us(626.345) + Time::ps(2));
  const double off = (m.span - dropped).to_seconds() / m.span.to_seconds();
  CHECK(off > 0.02);
  CHECK(off < 0.05);

  // --keep-gaps: each gap is kept as idle time before the activity after it; the kernels keep
  // their measured durations, and replay gives the span itself.
  const auto kept = import_kineto(data("single_gpu.json"), {.steps = 1, .keep_gaps = true});
  const workloads::Profile& k = kept.profile;
  // The 2 us gap before the first GEMM; 3 us before the loss gradient; 4 us before linear#0's
  // weight gradient; 5 us before the optimizer.
  CHECK(k.ops[1].forward[0] == workloads::Kernel{"ampere_sgemm_128x64_tn", Time::us(100), Time::us(2)});
  CHECK(k.ops[4].backward[0].idle_before == Time::us(3));
  CHECK(k.ops[1].backward[0].idle_before == Time::us(4));
  CHECK(k.optimizer.idle_before == Time::us(5));
  CHECK(k.forward_time() == Time::us(239));
  CHECK(k.backward_time() == Time::us(341));
  CHECK(k.idle_time() == Time::us(14));
  CHECK(k.step_time_1gpu() == k.forward_time() + k.backward_time() + k.optimizer_time(1) + Time::us(14));
  const analysis::StepResult exact = replay_step(k);
  CHECK(exact.step_time >= us(640.345));
  CHECK(exact.step_time <= us(640.345) + Time::ps(2));
  CHECK(exact.step_time == k.step_time_1gpu());
  // The breakdown: compute is the kernels alone, the kept gaps are idle.
  CHECK(exact.mean.compute == k.forward_time() + k.backward_time() + k.optimizer_time(1));
  CHECK(exact.mean.idle == Time::us(14));
  CHECK(exact.critical_path.launch_gaps == Time::us(14));
  CHECK(exact.critical_path.compute == exact.mean.compute);
  CHECK(exact.mean.exposed_communication == Time::zero());
  CHECK(exact.mean.kernels == replay_step(p).mean.kernels);
  // Gaps kept or not, the kernels are the same; the gaps round-trip through the YAML form.
  CHECK(k.ops[1].forward[0].duration == p.ops[1].forward[0].duration);
  CHECK(workloads::parse_profile(workloads::profile_to_yaml(k), "<memory>") == k);
  CHECK(workloads::profile_to_yaml(k).find("idle_before: 2 us") != std::string::npos);
  CHECK(workloads::profile_to_yaml(p).find("idle_before") == std::string::npos);
}

TEST_CASE("kineto: --steps averages whole iterations with the same ops") {
  // Both iterations are alike except the last optimizer kernel: 12.345 us, then 16.345 us.
  const auto r = import_kineto(data("single_gpu.json"), {.steps = 0});
  REQUIRE(r.report.iterations.size() == 2);
  CHECK(r.report.iterations[0].span == us(636.345));
  CHECK(r.report.iterations[1].span == us(640.345));
  CHECK(r.report.average.span == us(638.345));
  CHECK(r.report.average.optimizer == us(44.345));
  CHECK(r.report.average.name == "ProfilerStep#1..ProfilerStep#2 (mean of 2)");
  CHECK_FALSE(mentions(r.report.skipped, "not selected"));
  const auto one = import_kineto(data("single_gpu.json"), {.steps = 1});
  CHECK(r.profile.ops == one.profile.ops);  // every other kernel took the same time twice
  // Replayed as measured, to the ps: the floor of 44.345 us x 2^30 / 2,624,512 B = 18,142,451,314 ps
  // a GiB replayed as 44,345,001 ps (ceil(rate x 2,099,200 B / 2^30) + ceil(rate x 525,312 B /
  // 2^30), one up-rounded ps each), which the report printed as "44.345001 us".
  CHECK(r.profile.optimizer_time(1) == us(44.345));
  const std::string text = workloads::describe_kineto_import(r);
  CHECK(text.find("  optimizer                 44.345 us (SGD)\n") != std::string::npos);
  CHECK(text.find("  one-GPU step              624.345 us (") != std::string::npos);
  CHECK(text.find("iterations: ProfilerStep#1, ProfilerStep#2 (averaged)") != std::string::npos);
}

TEST_CASE("kineto: a 2-rank DDP iteration gives gradient buckets from its NCCL all-reduces") {
  for (const char* file : {"ddp_rank0.json", "ddp_rank1.json"}) {
    CAPTURE(file);
    // Rank 0 records the collective arguments on the NCCL kernels, rank 1 only on the
    // record_param_comms CPU ops that launched them.
    const auto r = import_kineto(data(file), {});
    const workloads::Profile& p = r.profile;
    CHECK(r.report.world_size == 2);
    CHECK(r.report.rank == (std::string(file) == "ddp_rank0.json" ? 0 : 1));
    CHECK(r.report.gradient_source == "nccl all-reduce");
    REQUIRE(p.ops.size() == 6);
    // Bucket 0 (In msg nelems 131,328 floats) was launched from the hook after linear#1's
    // gradients, bucket 1 (524,800 floats) after linear#0's.
    REQUIRE(r.report.buckets.size() == 2);
    CHECK(r.report.buckets[0].bytes == Bytes::of(131328 * 4));
    CHECK(p.ops[r.report.buckets[0].op].name == "aten::linear#1");
    CHECK(r.report.buckets[0].group_size == 2);
    CHECK(r.report.buckets[0].duration == Time::us(50));
    CHECK(r.report.buckets[1].bytes == Bytes::of(524800 * 4));
    CHECK(p.ops[r.report.buckets[1].op].name == "aten::linear#0");
    CHECK(p.ops[3].gradient_bytes == Bytes::of(525312));
    CHECK(p.ops[1].gradient_bytes == Bytes::of(2099200));
    CHECK(r.report.accumulate_grad_bytes == p.parameter_bytes());  // the shapes agree
    // The recorded all-reduces are the ops' buckets, and the report names their process group.
    CHECK(p.has_recorded_buckets());
    CHECK(p.ops[3].buckets == std::vector<Bytes>{Bytes::of(525312)});
    CHECK(p.ops[1].buckets == std::vector<Bytes>{Bytes::of(2099200)});
    CHECK(r.report.buckets[0].group_name == "0");
    CHECK(r.report.buckets[0].group_ranks == "[0, 1]");
    CHECK(workloads::describe_kineto_import(r).find(
              "all-reduce 0: 525312 B Float over 2 ranks (process group 0 [0, 1]), 50 us, after the "
              "backward of aten::linear#1") != std::string::npos);
    CHECK(workloads::parse_profile(workloads::profile_to_yaml(p), "<memory>") == p);
    // DDP's buffer broadcast in forward is not a gradient.
    CHECK(mentions(r.report.skipped, "1 × NCCL broadcast kernels: not gradient all-reduces"));
    // The optimizer waited for bucket 1 (606 → 706 us): 100 us of exposed communication, plus the
    // 4 us before linear#0's weight gradient, while bucket 0 ran; launch gaps 2 + 0.5 + 3 + 5 us.
    const auto& m = r.report.average;
    CHECK(m.span == us(736.345));
    CHECK(m.communication == Time::us(152));
    CHECK(m.exposed_communication == Time::us(104));
    CHECK(m.launch_gaps == us(10.5));
    CHECK(m.busy == us(621.845));
  }
  // Replayed data-parallel on two GPUs the buckets are all-reduced: slower than compute alone.
  const auto r = import_kineto(data("ddp_rank0.json"), {});
  const auto t = topology::presets::fully_connected({.gpus = 2});
  analysis::StepSetup s;
  s.profile = &r.profile;
  s.topology = &t;
  s.placement = workloads::place_all_on_first(r.profile, 1);
  s.mapping = workloads::default_mapping(t, 2, 1);
  // As recorded: one collective per recorded all-reduce, of its size, in its order.
  s.step.recorded_buckets = true;
  const auto program = analysis::build_program(s);
  REQUIRE(program.collectives.size() == r.report.buckets.size());
  for (std::size_t i = 0; i < r.report.buckets.size(); ++i) {
    CAPTURE(i);
    CHECK(program.collectives[i].role == workloads::CollectiveRole::GradientAllReduce);
    CHECK(program.collectives[i].size == r.report.buckets[i].bytes);
    CHECK(program.collectives[i].op_index == r.report.buckets[i].op);
    CHECK(program.collectives[i].bucket == static_cast<int>(i));
  }
  const auto step = analysis::simulate_step(s);
  CHECK(step.collectives == 2);
  CHECK(step.step_time > r.profile.step_time_1gpu());
  // With a bucket size chosen instead, the gradients are packed: 2.6 MB fit one 25 MB bucket.
  s.step.recorded_buckets = false;
  const auto packed = analysis::build_program(s);
  REQUIRE(packed.collectives.size() == 1);
  CHECK(packed.collectives[0].size == Bytes::of(525312 + 2099200));
}

TEST_CASE("kineto: an all-reduce over a subgroup is not a gradient bucket, and is reported") {
  // Rank 1's trace with its second all-reduce (524,800 floats) moved to a process group of its own:
  // the third record_param_comms (after the broadcast and bucket 0) gets group "1", ranks [1].
  std::string text = read_whole_file(data("ddp_rank1.json"));
  text = replace_nth(text, "\"Group size\": 2", "\"Group size\": 1", 2);
  text = replace_nth(text, "\"Process Group Name\": \"0\"", "\"Process Group Name\": \"1\"", 2);
  text = replace_nth(text, "\"Process Group Ranks\": \"[0, 1]\"", "\"Process Group Ranks\": \"[1]\"", 2);
  const TempFile file("subgroup.json", text);
  const auto r = import_kineto(file.path, {});
  CHECK(r.report.gradient_source == "nccl all-reduce");
  REQUIRE(r.report.buckets.size() == 1);
  CHECK(r.report.buckets[0].bytes == Bytes::of(525312));
  CHECK(r.profile.ops[3].gradient_bytes == Bytes::of(525312));
  CHECK_FALSE(r.profile.ops[1].has_gradient());
  CHECK(mentions(r.report.skipped, "1 × NCCL all-reduces over process group 1 [1] (1 of 2 ranks): not the "
                                   "whole world, so not data-parallel gradient buckets"));
  CHECK(workloads::describe_kineto_import(r).find("process group 1 [1] (1 of 2 ranks)") != std::string::npos);
}

TEST_CASE("kineto: timestamps are exact decimals, traces without annotations are one iteration") {
  // Absolute µs timestamps beyond double precision at ps: 1 ns of gap must survive.
  const std::string trace = R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "void k1<float>(float*)", "pid": 0, "tid": 7,
     "ts": 1700000000123.456, "dur": 10.001, "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7,
     "ts": 1700000000133.458, "dur": 0.999, "args": {"device": 0, "stream": 7}}]})json";
  const TempFile file("exact.json", trace);
  const auto r = import_kineto(file.path, {});
  CHECK(r.report.average.span == Time::ns(11001));
  CHECK(r.report.average.launch_gaps == Time::ns(1));
  REQUIRE(r.profile.ops.size() == 2);
  CHECK(r.profile.ops[0].name == "(no cpu op)#0");
  CHECK(r.profile.ops[0].forward[0] == workloads::Kernel{"k1", Time::ns(10001)});
  CHECK(r.profile.meta.gpu == "unknown");
  CHECK(mentions(r.report.notes, "no ProfilerStep# annotations"));
  CHECK(mentions(r.report.notes, "2 × GPU activities without a launch record"));
}

TEST_CASE("kineto: files that are not traces, or are cut short, fail with a clear message") {
  CHECK(error_of(data("no_such.json")).find("cannot open") != std::string::npos);
  CHECK(error_of(TempFile("text.json", "hello world")).find("not a JSON document") != std::string::npos);
  CHECK(error_of(TempFile("empty.json", "")).find("not a JSON document") != std::string::npos);
  CHECK(error_of(TempFile("array.json", R"([{"ph": "X"}])")).find("top level is a JSON array") !=
        std::string::npos);
  CHECK(error_of(TempFile("scalar.json", "42")).find("single JSON value") != std::string::npos);
  CHECK(error_of(TempFile("noevents.json", R"({"schemaVersion": 1})")).find("no top-level \"traceEvents\"") !=
        std::string::npos);
  CHECK(error_of(TempFile("nogpu.json", R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a",
        "pid": 1, "tid": 1, "ts": 1, "dur": 2}]})")).find("no GPU activity") != std::string::npos);
  CHECK(error_of(TempFile("bad.json", R"({"traceEvents": [{"ph": "X",, }]})")).find("malformed JSON") !=
        std::string::npos);
  // Cut anywhere: in the header, inside an event, inside a string, just before the final brace.
  const std::string full = read_whole_file(data("single_gpu.json"));
  for (const std::size_t cut : {std::size_t{1}, std::size_t{200}, full.size() / 2, full.size() / 2 + 7,
                                full.size() - 3}) {
    CAPTURE(cut);
    const TempFile file("cut.json", full.substr(0, cut));
    const std::string e = error_of(file);
    CHECK(e.find("truncated") != std::string::npos);
    CHECK(e.find(file.path) != std::string::npos);
  }
  CHECK(error_of(TempFile("cut.json", full.substr(0, full.size() / 2))).find("inside traceEvents") !=
        std::string::npos);
}

TEST_CASE("hybridsim import kineto writes a loadable profile and reports the replay check") {
  const auto out =
      std::filesystem::temp_directory_path() / ("hybridsim_import_cli-" + std::to_string(getpid()) + ".yaml");
  std::filesystem::remove(out);
  const std::string cmd = std::string(HYBRIDSIM_CLI) + " import kineto " + data("single_gpu.json") +
                          " --steps 1 --keep-gaps --batch 64 --out " + out.string() + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string text;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) text += buf;
  CHECK(pclose(pipe) == 0);
  CHECK(text.find("replay on one simulated GPU") != std::string::npos);
  CHECK(text.find("within 5%") != std::string::npos);
  CHECK(text.find("CPU launch gaps") != std::string::npos);
  const auto expected = import_kineto(data("single_gpu.json"), {.steps = 1, .keep_gaps = true, .batch = 64});
  CHECK(workloads::load_profile(out.string()) == expected.profile);
  std::filesystem::remove(out);

  const std::string bad = std::string(HYBRIDSIM_CLI) + " import kineto " + data("make_traces.py") + " 2>&1";
  FILE* p2 = popen(bad.c_str(), "r");
  std::string err;
  while (std::fgets(buf, sizeof buf, p2)) err += buf;
  CHECK(pclose(p2) != 0);
  CHECK(err.find("hybridsim import: error:") != std::string::npos);
  CHECK(err.find("not a JSON document") != std::string::npos);
}

TEST_CASE("kineto: without fwdbwd flows each backward op is an op of its own, in measured order") {
  // The same trace without its fwdbwd flows (older PyTorch versions record none).
  std::istringstream in(read_whole_file(data("single_gpu.json")));
  std::string text, line;
  while (std::getline(in, line))
    if (line.find("\"cat\": \"fwdbwd\"") == std::string::npos) text += line + "\n";
  const TempFile file("noflows.json", text);
  const auto r = import_kineto(file.path, {.steps = 1});
  const workloads::Profile& p = r.profile;
  // 6 forward ops, then the 4 backward ops that launched kernels, latest first: replay runs
  // backward in reverse op order, so MseLossBackward0 still runs first.
  REQUIRE(p.ops.size() == 10);
  CHECK(p.ops[6].name == "AddmmBackward0#0");  // of linear#0, the last to run
  CHECK(p.ops[7].name == "ReluBackward0#0");
  CHECK(p.ops[8].name == "AddmmBackward0#1");
  CHECK(p.ops[9].name == "MseLossBackward0#0");
  CHECK(p.ops[9].forward.empty());
  CHECK(p.ops[8].backward.size() == 2);
  for (std::size_t i = 0; i < 6; ++i) CHECK(p.ops[i].backward.empty());
  // The same kernels and gradients, attached differently: the totals do not change.
  CHECK(p.backward_time() == Time::us(341));
  CHECK(p.ops[8].gradient_bytes == Bytes::of(525312));
  CHECK(p.ops[6].gradient_bytes == Bytes::of(2099200));
}

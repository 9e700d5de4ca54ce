// A pipeline step's trace (analysis/trace/step_trace_pipeline.cpp) and its parts
// (GpuStepMetrics::pipeline_bubble, ::optimizer): each stage's compute thread has one forward and
// one backward slice per micro-batch around that micro-batch's kernels, a recompute slice inside a
// backward around each recomputed forward, and "bubble" slices that add up to the stage's idle
// time; for a uniform 1F1B pipeline with free communication that is (p − 1)(forward + backward)
// of one micro-batch on every stage (Narayanan et al. 2021, §2.2).
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "analysis/trace/step_trace.h"
#include "analysis_step_trace_check.h"
#include "tests/unit/toy_profile.h"
#include "topology/presets.h"

using namespace hybridsim;
using sim::Time;
using step_trace_test::check_trace;
using step_trace_test::Slice;

namespace {

constexpr int kLayersPerStage = 2;

// `stages` × 2 layers: forward 1 ms; backward 2 ms, after a 1 ms recomputed forward
// ("recompute_f") if `recompute`; 1 GiB of gradients each (1 ms of the toy's SGD per GiB).
workloads::Profile stage_layers(int stages, bool recompute) {
  workloads::Profile p = testing::toy_profile();
  for (int i = 0; i < stages * kLayersPerStage; ++i) {
    workloads::Op op = testing::toy_op(
        "layer." + std::to_string(i),
        i == 0 ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>{std::uint32_t(i - 1)}, Time::ms(1),
        Time::ms(2), sim::Bytes::gib(1), sim::Bytes::of(1));
    if (recompute) op.backward.insert(op.backward.begin(), {"recompute_f", Time::ms(1)});
    p.ops.push_back(std::move(op));
  }
  workloads::validate_profile(p);
  return p;
}

struct Run {
  analysis::StepResult result;
  step_trace_test::Trace trace;
};

// One 1F1B step of p stages and m micro-batches on links as good as free, every GPU traced; with
// `virtual_stages` above 1, interleaved 1F1B of that many model chunks a stage.
Run run(const workloads::Profile& profile, int p, int m, const std::filesystem::path& file,
        int virtual_stages = 1) {
  const topology::Topology t = topology::presets::fully_connected(
      {.gpus = p, .bandwidth = sim::Bandwidth::gb_per_second(1e9), .latency = Time::zero()});
  analysis::StepSetup s;
  s.profile = &profile;
  s.topology = &t;
  s.mapping = workloads::default_mapping(t, 1, p);
  s.step.pipeline = {.pp = p};
  if (virtual_stages > 1)
    s.step.pipeline = {
        .pp = p, .schedule = workloads::PipelineSchedule::Interleaved, .virtual_stages = virtual_stages};
  s.step.accumulation = m;
  s.placement = {p, {}, "pipeline stages"};  // what the trace's memory counter reads
  for (std::size_t v = 0; v < profile.ops.size(); ++v)
    s.placement.gpu_of_op.push_back(static_cast<std::uint32_t>(v / kLayersPerStage));
  analysis::StepTraceOptions options;
  options.all_gpus = true;
  Run r;
  r.result = analysis::simulate_step_with_trace(s, file, options);
  r.trace = check_trace(hybridsim::testing::read_whole_file(file));
  return r;
}

std::int64_t ns(Time t) { return t.ps() / 1000; }

// Equal but for the transfers' picoseconds (a 1-byte transfer on the near-free links).
doctest::Approx about(Time t) { return doctest::Approx(t.to_seconds()).epsilon(1e-9); }

}  // namespace

TEST_CASE("pipeline trace: a 1F1B stage shows each micro-batch once each way, and its bubble as its idle") {
  hybridsim::testing::ScratchDir dir;
  constexpr int p = 4, m = 8;
  const Run r = run(stage_layers(p, false), p, m, dir.path / "1f1b.json");
  const Time forward = Time::ms(1) * kLayersPerStage, backward = Time::ms(2) * kLayersPerStage;
  for (int g = 0; g < p; ++g) {
    CAPTURE(g);
    std::map<std::string, int> groups;
    std::int64_t bubble = 0, bubbles = 0;
    for (const Slice& s : r.trace.on(g + 1, 1)) {
      if (s.depth == 0 && s.cat == "micro-batch") {
        ++groups[s.name];
        CHECK(s.args["micro_batch"].get<int>() == std::stoi(s.name.substr(s.name.rfind(' ') + 1)));
        CHECK(s.args["stage"].get<int>() == g);
        CHECK(s.dur == ns(s.name.starts_with("forward") ? forward : backward));
      }
      if (s.name == "bubble") {
        CHECK(s.depth == 0);
        bubble += s.dur;
        ++bubbles;
      }
      if (s.depth == 1) {  // a kernel, in its own micro-batch's slice
        CHECK(s.parent == std::string(s.cat == "forward" ? "forward" : "backward") + " · micro-batch " +
                              std::to_string(s.args["micro_batch"].get<int>()));
      }
    }
    CHECK(groups.size() == 2u * m);
    for (int j = 0; j < m; ++j) {
      CHECK(groups["forward · micro-batch " + std::to_string(j)] == 1);
      CHECK(groups["backward · micro-batch " + std::to_string(j)] == 1);
    }
    const analysis::GpuStepMetrics& gpu = r.result.per_gpu[static_cast<std::size_t>(g)];
    CHECK(std::abs(bubble - ns(gpu.pipeline_bubble)) <= bubbles);  // each slice rounded to the ns
    CHECK(gpu.pipeline_bubble.to_seconds() == about(gpu.idle));
    CHECK(gpu.pipeline_bubble.to_seconds() == about((forward + backward) * (p - 1)));
    // Two layers of 1 GiB each: 2 ms of SGD, the rest of the stage's compute its micro-batches'.
    CHECK(gpu.optimizer == Time::ms(2));
    CHECK(gpu.compute - gpu.optimizer == (forward + backward) * m);
    CHECK(gpu.tp_communication == Time::zero());
    CHECK(gpu.dp_communication == Time::zero());
  }
  // The step ends with the first stage's update, on the critical path as its own part.
  CHECK(r.result.critical_path.optimizer == Time::ms(2));
  CHECK(r.result.mean.pipeline_bubble.to_seconds() == about((forward + backward) * (p - 1)));
}

TEST_CASE("pipeline trace: a recomputed forward is its own slice inside its micro-batch's backward") {
  hybridsim::testing::ScratchDir dir;
  constexpr int p = 2, m = 4;
  const Run r = run(stage_layers(p, true), p, m, dir.path / "recompute.json");
  for (int g = 0; g < p; ++g) {
    CAPTURE(g);
    int recomputes = 0, backwards = 0;
    for (const Slice& s : r.trace.on(g + 1, 1)) {
      if (s.cat == "recompute") {
        ++recomputes;
        CHECK(s.depth == 1);
        CHECK(s.name == "recompute · micro-batch " + std::to_string(s.args["micro_batch"].get<int>()));
        CHECK(s.parent == "backward · micro-batch " + std::to_string(s.args["micro_batch"].get<int>()));
        CHECK(s.dur == ns(Time::ms(1)));  // one layer's forward again
      }
      if (s.name.starts_with("layer.") && s.name.find("recompute_f") != std::string::npos) {
        CHECK(s.depth == 2);
        CHECK(s.parent.starts_with("recompute · "));
      }
      if (s.cat == "micro-batch" && s.name.starts_with("backward")) ++backwards;
    }
    CHECK(backwards == m);
    CHECK(recomputes == kLayersPerStage * m);  // each layer's backward recomputes its forward first
    const analysis::GpuStepMetrics& gpu = r.result.per_gpu[static_cast<std::size_t>(g)];
    CHECK(gpu.pipeline_bubble.to_seconds() == about(gpu.idle));
  }
}

TEST_CASE("pipeline trace: an interleaved stage names the model chunk of each micro-batch's slices") {
  // hunt12: under interleaved 1F1B a stage runs each micro-batch once per chunk it holds, and its
  // slices read "forward · micro-batch 0" twice, with nothing to tell chunk 0 from chunk 2. p 2 × v 2
  // over the 4 layers: chunk c is layer c, on stage c mod 2; each (micro-batch, chunk) of a stage
  // once each way, named and argued with the chunk its kernels are of.
  hybridsim::testing::ScratchDir dir;
  constexpr int p = 2, v = 2, m = 4;
  const Run r = run(stage_layers(p, false), p, m, dir.path / "interleaved.json", v);
  for (int g = 0; g < p; ++g) {
    CAPTURE(g);
    std::map<std::string, int> groups;
    for (const Slice& s : r.trace.on(g + 1, 1)) {
      if (s.depth == 0 && s.cat == "micro-batch") {
        ++groups[s.name];
        CAPTURE(s.name);
        REQUIRE(s.args.contains("chunk"));
        const int chunk = s.args["chunk"].get<int>();
        CHECK(chunk % p == g);
        CHECK(s.name.ends_with(" · micro-batch " + std::to_string(s.args["micro_batch"].get<int>()) +
                               " · chunk " + std::to_string(chunk)));
      }
      if (s.depth == 1 && s.name.starts_with("layer.")) {  // a kernel of layer c, in chunk c's slice
        CAPTURE(s.name);
        CHECK(s.parent.ends_with(" · chunk " + s.name.substr(6, s.name.find(' ') - 6)));
      }
    }
    CHECK(groups.size() == 2u * m * v);
    for (int j = 0; j < m; ++j)
      for (const int chunk : {g, g + p})
        for (const char* way : {"forward", "backward"}) {
          CAPTURE(way);
          CHECK(groups[std::string(way) + " · micro-batch " + std::to_string(j) + " · chunk " +
                       std::to_string(chunk)] == 1);
        }
  }
}

// A transformer run's trace says what the run says (hunt44, issue 31): its otherData names the
// strategy as the run's strategy line does (tp, pp, ep, ZeRO; never "dp 1 × mp 4" for 32 GPUs), and
// each GPU's memory counter peaks at what the run's memory model gives that GPU (analysis/README.md,
// "What the tracks mean": its highest sample is the run's peak memory), a pipeline stage's at its
// own stage's; and each collective's name and args say what ran (ring, tree, point-to-point, and the
// protocol), not the scenario's "auto".
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis_step_trace_check.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "workloads/memory/memory_model.h"

using namespace hybridsim;
using step_trace_test::check_trace;
using step_trace_test::read_whole_file;
using step_trace_test::TempDir;

namespace {

const std::string kLlm = std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/llm/";

double gib(sim::Bytes b) {
  return static_cast<double>(b.count()) / static_cast<double>(std::int64_t{1} << 30);
}

struct Traced {
  analysis::ScenarioRun run;
  scenarios::ResolvedScenario resolved;
  step_trace_test::Trace trace;
};

// `all_gpus`: every GPU simulated in full and shown (--trace-gpus all); else the trace's default, one
// GPU per class of alike GPUs, on the fold the untraced run takes.
Traced traced(const std::string& file, const std::vector<std::string>& sets, const TempDir& dir,
              bool all_gpus = true) {
  const scenarios::Scenario s = scenarios::load_scenario(kLlm + file, sets);
  scenarios::ResolvedScenario resolved = scenarios::resolve(s);
  analysis::ScenarioRunOptions options;
  options.trace = dir.path / "t.json";
  options.trace_options.all_gpus = all_gpus;
  analysis::ScenarioRun run = analysis::run_scenario(resolved, options);
  return {std::move(run), std::move(resolved), check_trace(read_whole_file(dir.path / "t.json"))};
}

// The highest sample of GPU `gpu`'s memory counter, in GiB (its process is GPU + 1).
double counter_peak(const step_trace_test::Trace& t, int gpu) {
  const auto& samples = t.counters.at({gpu + 1, "memory"});
  double peak = 0;
  for (const auto& s : samples) peak = std::max(peak, s.value);
  return peak;
}

}  // namespace

TEST_CASE("transformer trace: the strategy in otherData is the run's strategy line") {
  TempDir dir;
  // GPT-3 175B's pipeline cut to tp 8 × pp 2 on 2 DGX A100, 4 layers, 2 micro-batches: 16 GPUs, no
  // data parallelism. Main wrote "dp 1 × mp 2 (16 GPUs)" (1 × 2 is not 16).
  const Traced pp = traced("gpt3-175b-pp8-dgx-a100.yaml",
                           {"parallelism.pp=2", "cluster.nodes=2", "workload.model.layers_simulated=4",
                            "training.global_batch=2"},
                           dir);
  CHECK(pp.trace.doc["otherData"]["strategy"] == "tp 8 × pp 2 = 16 GPUs");
  CHECK(pp.trace.doc["otherData"]["parallelism"] == "tp 8 × pp 2 = 16 GPUs, global batch 2");
  // Mixtral's experts over 8 of 16 replicas, 1 layer: main wrote "dp 16 × mp 1 (16 GPUs)", no ep.
  TempDir dir2;
  const Traced ep = traced("mixtral-8x7b-2x-dgx-h100-ep8.yaml", {"workload.model.layers_simulated=1"}, dir2);
  CHECK(ep.trace.doc["otherData"]["strategy"] == "dp 16 = 16 GPUs, ep 8");
}

TEST_CASE("transformer trace: each GPU's memory counter peaks at the run's memory for it") {
  SUBCASE("ZeRO-3: the sharded peak, not the whole model's") {
    TempDir dir;
    // Llama 2 7B, 2 layers, ZeRO-3 over the 8 A100 of one machine, micro-batch 2, 2 micro-batches.
    // Main's counter read the generated profile with the 2017 model: 12.7 GiB on every GPU, the
    // run's peak line 5.10 GiB.
    const Traced z = traced("llama2-7b-zero3-dgx-a100.yaml",
                            {"cluster.nodes=1", "parallelism.dp=8", "workload.model.layers_simulated=2",
                             "training.global_batch=32"},
                            dir);
    REQUIRE(z.run.memory.ranks.size() == 1);
    const double peak = gib(z.run.memory.ranks[0].peak.total());
    // By hand: (2 layers × 202,383,360 + 2 × 32,000 × 4,096 embedding and head) = 667,910,144
    // parameters / 8 = 83,488,768 a GPU; 16 B a parameter (2 weights, 2 gradients, 12 Adam) without
    // the activations and the two gathered layers in flight: at least 1.24 GiB, at most the 80 GiB.
    CHECK(peak > 83'488'768.0 * 16 / (1 << 30));
    CHECK(peak < 6.0);
    for (int gpu = 0; gpu < 8; ++gpu) {
      CAPTURE(gpu);
      CHECK(counter_peak(z.trace, gpu) == doctest::Approx(peak).epsilon(1e-9));
    }
  }
  SUBCASE("a pipeline: each stage's GPUs at their own stage's peak, the largest the run's") {
    TempDir dir;
    const Traced pp = traced("gpt3-175b-pp8-dgx-a100.yaml",
                             {"parallelism.pp=2", "cluster.nodes=2", "workload.model.layers_simulated=4",
                              "training.global_batch=2"},
                             dir);
    const auto& stages = pp.resolved.transformer->memory_by_stage.ranks;
    REQUIRE(stages.size() == 2);
    // Stage 0 holds the embedding, stage 1 the LM head and the FP32 logits: two different peaks.
    CHECK(stages[0].peak.total() != stages[1].peak.total());
    REQUIRE(pp.run.memory.ranks.size() == 2);  // the run's memory: one rank per stage, as the trace's
    const double largest = gib(workloads::largest_peak(pp.run.memory.peaks()));
    CHECK(std::max(gib(stages[0].peak.total()), gib(stages[1].peak.total())) == doctest::Approx(largest));
    for (int gpu = 0; gpu < 16; ++gpu) {  // stage s on GPUs s × 8 onwards (dp 1, tp 8)
      CAPTURE(gpu);
      CHECK(counter_peak(pp.trace, gpu) == doctest::Approx(gib(stages[gpu / 8].peak.total())).epsilon(1e-9));
    }
  }
}

TEST_CASE("transformer trace: a collective is named by what ran, not by the scenario's auto") {
  TempDir dir;
  // ZeRO-3 under communication.algorithm auto: NCCL runs all-gathers and reduce-scatters only as
  // rings (sim/nccl_model.cpp: a tree is for all-reduce); main named every one "· auto".
  const Traced z = traced("llama2-7b-zero3-dgx-a100.yaml",
                          {"cluster.nodes=1", "parallelism.dp=8", "workload.model.layers_simulated=2",
                           "training.global_batch=32"},
                          dir);
  int collectives = 0;
  for (const auto& [thread, slices] : z.trace.slices)
    for (const auto& s : slices) {
      if (s.cat != "collective") continue;
      CAPTURE(s.name);
      ++collectives;
      CHECK(s.name.ends_with(" · ring"));
      CHECK(s.args["algorithm"] == "ring");
      const std::string protocol = s.args["protocol"];
      CHECK((protocol == "Simple" || protocol == "LL" || protocol == "LL128"));
    }
  // 8 GPUs × (4 ops' gathers × 2 micro-batches × forward and backward + 4 buckets' reduce-scatters × 2).
  CHECK(collectives == 8 * (4 * 2 * 2 + 4 * 2));
  // Mixtral's dispatch and combine: pairwise sends on Simple, NCCL's only protocol for them.
  TempDir dir2;
  const Traced ep = traced("mixtral-8x7b-2x-dgx-h100-ep8.yaml", {"workload.model.layers_simulated=1"}, dir2);
  int all_to_all = 0;
  for (const auto& [thread, slices] : ep.trace.slices)
    for (const auto& s : slices) {
      if (s.cat != "collective" || !s.name.starts_with("all-to-all")) continue;
      CAPTURE(s.name);
      ++all_to_all;
      CHECK(s.name.ends_with(" · point-to-point"));
      CHECK(s.args["protocol"] == "Simple");
    }
  CHECK(all_to_all > 0);
}

TEST_CASE("transformer trace: one GPU per class names its collectives as the trace of every GPU does") {
  // The default trace runs the step as the untraced run does and is told the plans of that run
  // (FoldObserver::observe_fold's plan observer); --trace-gpus all is told them as every GPU runs. The
  // two runs plan the same collectives over the same topology and options, so GPU 0 (shown in both)
  // has the same collectives under the same names, algorithm and protocol. The scenario's 8 DGX A100
  // (dp 64), 2 layers, 2 micro-batches of 2: its GPUs fall in classes, and the step runs every GPU
  // (a ring they share would run in full), told to the trace through observe_fold. (On one machine
  // no GPUs are alike and the default trace is the every-GPU one, which would not tell the two apart.)
  const std::vector<std::string> sets = {"workload.model.layers_simulated=2", "training.global_batch=256"};
  TempDir all_dir, class_dir;
  const Traced all = traced("llama2-7b-zero3-dgx-a100.yaml", sets, all_dir);
  const Traced by_class = traced("llama2-7b-zero3-dgx-a100.yaml", sets, class_dir, false);
  CHECK(by_class.trace.doc["otherData"]["gpus_shown"].get<std::string>().starts_with("one GPU per class"));
  const auto gpu0 = [](const step_trace_test::Trace& t) {
    std::vector<std::string> out;
    for (const auto& [thread, slices] : t.slices)
      for (const auto& s : slices)
        if (thread.first == 1 && s.cat == "collective")
          out.push_back(s.name + " | " + s.args["algorithm"].get<std::string>() + " | " +
                        s.args["protocol"].get<std::string>());
    return out;
  };
  const std::vector<std::string> expected = gpu0(all.trace);
  // GPU 0's gathers and reduce-scatters (the count of the test above, for one GPU).
  CHECK(expected.size() == 4 * 2 * 2 + 4 * 2);
  CHECK(gpu0(by_class.trace) == expected);
}

TEST_CASE("transformer trace: a collective of one GPU says nothing was sent, with no algorithm or protocol") {
  TempDir dir;
  // GPT-3's tp 8 × pp 2 with dp 1: each GPU's gradients are all-reduced over itself alone, which
  // sends nothing and ends as it starts (an instant). Before, it was named "· 1 GPUs · ring" with the
  // protocol NCCL's model picks for its size, as if a ring had run.
  const Traced pp = traced(
      "gpt3-175b-pp8-dgx-a100.yaml",
      {"parallelism.pp=2", "cluster.nodes=2", "workload.model.layers_simulated=4", "training.global_batch=2"},
      dir);
  std::set<std::int64_t> gpus;
  for (const auto& [thread, instants] : pp.trace.instants)
    for (const auto& s : instants) {
      if (s.cat != "collective") continue;
      CAPTURE(s.name);
      CHECK(s.args["gpus"] == 1);
      CHECK(s.name.ends_with(" · 1 GPU, nothing sent"));
      CHECK_FALSE(s.args.contains("algorithm"));
      CHECK_FALSE(s.args.contains("protocol"));
      CHECK(s.args["op"] == "all-reduce");
      gpus.insert(thread.first);
    }
  CHECK(gpus.size() == 16);  // every GPU's (processes 1 to 16), dp 1 everywhere
  // The tensor-parallel collectives, over 8 GPUs, ran and say how.
  int tp = 0;
  for (const auto& [thread, slices] : pp.trace.slices)
    for (const auto& s : slices)
      if (s.cat == "collective") {
        CAPTURE(s.name);
        CHECK(s.args["gpus"] == 8);
        CHECK(s.args.contains("protocol"));
        ++tp;
      }
  CHECK(tp > 0);
}

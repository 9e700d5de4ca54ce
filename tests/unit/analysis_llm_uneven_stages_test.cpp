// The transformer planner searches pipeline depths that do not divide the layers (GPipe and 1F1B), with
// the stages split as `run` splits them when pipeline.stages is left out (workloads::balanced_layers):
// Llama 3 405B's 126 layers over pp 16 are 7, 8 x14, 7, the split Meta trained it with, which plan
// could not find while pp had to divide the layers. Its closed forms count each stage's own layers,
// as the run's memory model does, and its rows say the split.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "analysis/plan/llm_dimensions.h"
#include "analysis/plan/llm_planner.h"
#include "workloads/memory/pipeline_memory.h"
#include "workloads/memory/transformer_memory.h"

using namespace hybridsim;
using analysis::LlmLayout;
using analysis::PipelineSchedule;

TEST_CASE("llm closed forms: uneven stages hold the run's split, byte for byte") {
  // Llama 3 70B (80 layers; its vocabulary needs no padding at tp 2) over pp 32 and pp 3: stages of 2
  // and 3 layers, and of 26, 27, 27. Every stage's memory, the planner's closed form against the
  // memory model the run checks.
  const analysis::LlmSetting s{.model = workloads::named_transformer("llama3-70b")};
  for (const int pp : {3, 32}) {
    for (const PipelineSchedule schedule : {PipelineSchedule::OneFOneB, PipelineSchedule::GPipe}) {
      CAPTURE(pp);
      CAPTURE(static_cast<int>(schedule));
      const LlmLayout l{.dp = 8, .tp = 2, .pp = pp, .zero = 1, .schedule = schedule, .global_batch = 8 * 32};
      CHECK(analysis::llm_layout_problem(s, l, 8).empty());  // main: "80 layers do not split ..."
      const workloads::TransformerMemoryInput in{
          .model = s.model, .micro_batch = 1, .tp = 2, .value_bytes = 2, .zero = 1, .dp = 8};
      const auto stages = workloads::pipeline_memory(in, {.pp = pp, .schedule = schedule},
                                                     static_cast<int>(l.micro_batches()));
      REQUIRE(stages.size() == static_cast<std::size_t>(pp));
      const std::vector<int> split = workloads::balanced_layers(80, pp);
      sim::Bytes peak;
      for (int st = 0; st < pp; ++st) {
        CAPTURE(st);
        CHECK(analysis::llm_stage_layers(s, l, st) == split[static_cast<std::size_t>(st)]);
        const analysis::LlmMemory planned = analysis::llm_stage_memory(s, l, st);
        const workloads::TransformerMemory& model = stages[static_cast<std::size_t>(st)].memory;
        CHECK(planned.weights == model.weights);
        CHECK(planned.gradients == model.gradients);
        CHECK(planned.optimizer == model.optimizer);
        CHECK(planned.activations == model.activations);
        peak = std::max(peak, model.total());
      }
      // The peak is the most loaded stage's, wherever it is (the second holds a layer more than the first).
      CHECK(analysis::llm_peak_memory(s, l).total() == peak);
    }
  }
  CHECK(analysis::llm_stage_split_text(s, {.pp = 32}) == "stages of 2, 3 x16, 2 x15 layers");
  CHECK(analysis::llm_stage_split_text(s, {.pp = 16}).empty());  // 5 each
  // Interleaved still needs pp x v to divide the layers: its chunk passes count equal chunks.
  CHECK(analysis::llm_layout_problem(s,
                                     {.dp = 8,
                                      .pp = 3,
                                      .schedule = PipelineSchedule::Interleaved,
                                      .virtual_stages = 2,
                                      .global_batch = 48},
                                     8) == "80 layers do not split into pp x v = 6");
  CHECK(analysis::llm_layout_problem(s, {.pp = 81, .global_batch = 81}, 8) ==
        "pp 81 is more than the 80 layers");
}

TEST_CASE(
    "llm planner: Llama 3 405B at pp 16 over 126 layers is searched, its split shown, its FLOP/s true") {
  const analysis::LlmPlanRequest r =
      analysis::make_llm_plan_request({.model = "llama3-405b", .gpus = 16384, .gpu = "h100"});
  const analysis::LlmSpace space{r.setting, r.gpus, r.machine.gpus_per_machine, r.global_batch};
  const auto layouts = analysis::enumerate_layouts(r.dimensions, space);
  // main: pp 1 and 2 only (the divisors of 126 that divide the GPUs), and no layout at 512 sequences.
  CHECK(std::any_of(layouts.begin(), layouts.end(), [](const LlmLayout& l) { return l.pp == 16; }));
  const analysis::LlmPlanResult p = analysis::plan_llm(r);
  REQUIRE_FALSE(p.ranked.empty());
  const auto pp16 = std::find_if(p.ranked.begin(), p.ranked.end(),
                                 [](const analysis::LlmPlanCandidate& c) { return c.layout.pp == 16; });
  REQUIRE(pp16 != p.ranked.end());
  CHECK(analysis::llm_stage_split_text(r.setting, pp16->layout) == "stages of 7, 8 x14, 7 layers");
  std::ostringstream text;
  analysis::print_llm_plan(p, text, static_cast<int>(p.ranked.size()));
  CHECK(text.str().find(" pp 16 ") != std::string::npos);
  CHECK(text.str().find(" (stages of 7, 8 x14, 7 layers) ") != std::string::npos);
  // Model TFLOP/s per GPU: 512 sequences of Llama 3 405B are about 1e19 FLOPs, past int64; the column
  // printed -60.1. Every row's figure is positive and below the H100's dense peak.
  std::istringstream lines(text.str());
  std::string line;
  int rows = 0;
  while (std::getline(lines, line)) {
    const auto at = line.find(" estimated ");
    if (!std::isdigit(static_cast<unsigned char>(line[0])) || at == std::string::npos) continue;
    std::istringstream cells(line.substr(at + 11));
    double est = 0, tflops = 0;
    std::string tokens;
    cells >> est >> tokens >> tflops;
    CAPTURE(line);
    CHECK(tflops > 0);
    CHECK(tflops < 989.4);
    ++rows;
  }
  CHECK(rows > 0);
}

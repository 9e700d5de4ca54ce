// Sequence parallelism's all-reduce of the norms' (and a router's) gradients over the TP group
// (workloads/program/tensor_parallel.h, TpGradient): each TP rank's norms see s/t of the sequence,
// so Megatron-LM all-reduces their gradients once a step, after the data-parallel gradients and
// before the optimizer (finalize_model_grads.py, _allreduce_layernorm_grads). Counted by hand for a
// small GPT on one DGX H100; a pipeline stage all-reduces only its own layers' norms.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "analysis/plan/llm_closed_forms.h"
#include "analysis/step/step_runner.h"
#include "transformer_step_run.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/gpu/gpu.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

namespace {

const topology::Topology& dgx_h100() { return testing::one_dgx_h100(); }

// `layers` layers, hidden 1,024 (LayerNorm: weight and bias, 2h = 2,048 each), 16 heads, GELU ffn
// 4,096, GPT's vocabulary, sequence 1,024.
TransformerModel small_gpt(std::int64_t layers) {
  return {"small-gpt", layers, 1024, 16, 16, 4096, FfnKind::Gelu, 50'257, 1024};
}

TransformerStep generate(const TransformerModel& model, int tp, bool sp) {
  return generate_transformer({.model = model, .micro_batch = 1, .tp = tp, .sequence_parallel = sp},
                              transformer_cost(gpu_by_key("h100"), Precision::Bf16));
}

// dp replicas of tp × pp GPUs (pp micro-batches per step under a pipeline).
StepProgram build(const TransformerStep& step, int dp, int tp, int pp) {
  analysis::StepSetup s;
  s.profile = &step.profile;
  s.topology = &dgx_h100();
  s.placement = place_all_on_first(step.profile, 1);
  s.mapping = default_mapping(dgx_h100(), dp * tp, pp);
  s.step.tp = tp;
  s.step.tp_syncs = step.syncs;
  s.step.tp_gradients = step.tp_gradients;
  if (pp > 1) {
    s.step.pipeline.pp = pp;
    s.step.accumulation = 2 * pp;
  }
  return analysis::build_program(s);
}

std::vector<CollectiveSpec> norm_collectives(const StepProgram& p) {
  std::vector<CollectiveSpec> out;
  for (const CollectiveSpec& c : p.collectives)
    if (c.role == CollectiveRole::NormGradientAllReduce) out.push_back(c);
  return out;
}

// Where GPU g's compute stream runs collective role `role`: its index, or -1.
std::int64_t position_of(const StepProgram& p, int g, CollectiveRole role) {
  const sim::TaskList& tasks = p.gpus[static_cast<std::size_t>(g)].streams[0].tasks;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].kind == sim::TaskKind::Collective && p.collectives[tasks[i].id].role == role)
      return static_cast<std::int64_t>(i);
  return -1;
}

}  // namespace

TEST_CASE("sequence parallel norms: one all-reduce of a TP group's norm gradients a step, in BF16") {
  // Per rank, by hand: 2 layers × 2 LayerNorms × 2,048 parameters × 2 B = 16,384 B, and the final
  // norm's 2,048 × 2 B = 4,096 B with the head: 20,480 B, whatever tp (the norms are whole).
  for (const int tp : {2, 4}) {
    CAPTURE(tp);
    const TransformerStep step = generate(small_gpt(2), tp, true);
    const StepProgram p = build(step, 2, tp, 1);
    const std::vector<CollectiveSpec> norms = norm_collectives(p);
    REQUIRE(norms.size() == 2);  // one per TP group: 2 replicas
    for (std::size_t q = 0; q < norms.size(); ++q) {
      CHECK(norms[q].op == sim::CollectiveOp::AllReduce);
      CHECK(norms[q].size.count() == 20'480);
      // The replica's TP group: tp consecutive GPUs.
      REQUIRE(norms[q].members.size() == static_cast<std::size_t>(tp));
      for (int r = 0; r < tp; ++r)
        CHECK(norms[q].members[static_cast<std::size_t>(r)] == static_cast<int>(q) * tp + r);
    }
  }
}

TEST_CASE("sequence parallel norms: after the gradients' wait, right before the optimizer kernel") {
  const TransformerStep step = generate(small_gpt(2), 2, true);
  const StepProgram p = build(step, 2, 2, 1);
  for (int g = 0; g < 4; ++g) {
    CAPTURE(g);
    const sim::TaskList& tasks = p.gpus[static_cast<std::size_t>(g)].streams[0].tasks;
    const std::int64_t at = position_of(p, g, CollectiveRole::NormGradientAllReduce);
    REQUIRE(at > 0);
    const auto i = static_cast<std::size_t>(at);
    REQUIRE(i + 1 < tasks.size());
    CHECK(tasks[i + 1].kind == sim::TaskKind::Kernel);
    CHECK(p.labels[tasks[i + 1].id].phase == Phase::Optimizer);
    // Between the last backward kernel and it: the wait for the data-parallel gradients.
    std::size_t last_backward = 0;
    for (std::size_t j = 0; j < i; ++j)
      if (tasks[j].kind == sim::TaskKind::Kernel && p.labels[tasks[j].id].phase == Phase::Backward)
        last_backward = j;
    bool waited = false;
    for (std::size_t j = last_backward; j < i; ++j) waited = waited || tasks[j].kind == sim::TaskKind::Wait;
    CHECK(waited);
  }
}

TEST_CASE("sequence parallel norms: none without sequence parallelism or without a TP group") {
  const TransformerStep plain = generate(small_gpt(2), 2, false);
  CHECK(plain.tp_gradients.empty());
  CHECK(norm_collectives(build(plain, 2, 2, 1)).empty());
  const TransformerStep alone = generate(small_gpt(2), 1, true);
  CHECK(alone.tp_gradients.empty());
  CHECK(norm_collectives(build(alone, 2, 1, 1)).empty());
}

TEST_CASE(
    "sequence parallel norms: a pipeline stage all-reduces its own layers' norms, the last the final norm") {
  // 4 layers over pp 2: layers 0-1 on stage 0, 2-3 and the head on stage 1. By hand, per rank:
  // stage 0 2 × 2 × 2,048 × 2 B = 16,384 B; stage 1 the same and the final norm's 4,096 B: 20,480 B.
  const TransformerStep step = generate(small_gpt(4), 2, true);
  const StepProgram p = build(step, 2, 2, 2);
  const std::vector<CollectiveSpec> norms = norm_collectives(p);
  REQUIRE(norms.size() == 4);  // 2 replicas × 2 stages
  int seen[2] = {0, 0};
  for (const CollectiveSpec& c : norms) {
    REQUIRE(c.members.size() == 2);
    const int stage = p.mp_rank_of_gpu[static_cast<std::size_t>(c.members[0])];
    CHECK(p.mp_rank_of_gpu[static_cast<std::size_t>(c.members[1])] == stage);
    CHECK(c.size.count() == (stage == 0 ? 16'384 : 20'480));
    ++seen[stage];
  }
  CHECK(seen[0] == 2);
  CHECK(seen[1] == 2);
}

TEST_CASE("sequence parallel norms: a mixture's router is all-reduced with its layer's norms") {
  // 4 experts: the router h × 4 = 4,096 parameters whole on every TP rank, with the two LayerNorms'
  // 4,096: 8,192 × 2 B = 16,384 B on each layer's attention op; the experts' ops have none.
  TransformerModel m = small_gpt(2);
  m.experts = 4;
  m.top_k = 2;
  const TransformerStep step = generate(m, 2, true);
  REQUIRE(step.tp_gradients.size() == 3);  // 2 layers and the head
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(step.profile.ops[step.tp_gradients[i].op].name == "layer." + std::to_string(i));
    CHECK(step.tp_gradients[i].bytes.count() == 16'384);
  }
  CHECK(step.profile.ops[step.tp_gradients[2].op].name == "lm_head");
  CHECK(step.tp_gradients[2].bytes.count() == 4'096);
}

TEST_CASE("sequence parallel norms: plan's closed form adds their ring all-reduce once a step") {
  // GPT-3 175B, tp 8, pp 8: 12 layers a stage × 2 LayerNorms × 2 · 12,288, in BF16: 1,179,648 B
  // (the last stage 24,576 × 2 B more for the final norm: 1,228,800 B), a ring's 2 · 7/8 of it over
  // NVLink, once a step, outside the bubble.
  analysis::LlmSetting s;
  s.model = named_transformer("gpt3-175b");
  s.value_bytes = 2;
  const analysis::LlmMachine mc{.gemm_flop_per_second = 312e12,
                                .nvlink_bytes_per_second = 300e9,
                                .ib_bytes_per_second = 25e9};
  analysis::LlmLayout l{.dp = 1, .tp = 8, .pp = 8, .global_batch = 8};
  const analysis::LlmTimeEstimate off = analysis::llm_time_estimate(s, l, mc);
  l.sequence_parallel = true;
  const analysis::LlmTimeEstimate on = analysis::llm_time_estimate(s, l, mc);
  const double us = 1e6;  // 7.2 µs: compared in µs, which Approx's absolute margin does not swallow
  // The layers' own TP communication under SP (workloads_sequence_parallel_backward_test.cpp): six
  // exposed gathers or scatters of s·b·h = 50,331,648 B a layer and micro-batch, where without SP
  // the forward's two all-reduces' rings count four: in both the backward's column-parallel ones run
  // beside GEMMs that outlast them (QKV's 2.3 TFLOP at 312 TFLOP/s, 7.4 ms, against 2 · 7/8 · 50.3
  // MB / 300 GB/s, 0.29 ms; workloads_tensor_parallel_backward_test.cpp), but SP's two gathers of
  // the output gradients do not: 8 micro-batches × 12 layers × 2 × 7/8 · 50,331,648 B / 300 GB/s
  // more, inside the bubble's (p−1)/m.
  const double layers_more = 8 * 12 * 2 * 7.0 / 8 * 50'331'648 / 300e9;
  CHECK((on.tp_communication - off.tp_communication) * us ==
        doctest::Approx((2.0 * 7 / 8 * 1'228'800 / 300e9 + layers_more) * us));
  CHECK((on.bubble - off.bubble) * us == doctest::Approx(7.0 / 8 * layers_more * us));
}

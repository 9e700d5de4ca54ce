// The transformer planner's closed forms, against the formulas of Korthikanti et al. 2022 and
// Narayanan et al. 2021 worked out here by hand: ZeRO's divisions, 1F1B's and GPipe's activations in
// flight, the bubble (p−1)/m and (p−1)/(v·m), EP's expert memory, and the dimension table.
#include <doctest/doctest.h>

#include <algorithm>

#include "analysis/plan/llm_dimensions.h"
#include "workloads/memory/pipeline_memory.h"
#include "workloads/memory/transformer_memory.h"

using namespace hybridsim;
using analysis::LlmLayout;
using analysis::PipelineSchedule;

namespace {

// GPT-3 175B's shape (transformers.md): 96 layers, hidden 12,288, 96 heads, GELU 4h, vocab 50,257.
analysis::LlmSetting gpt3() { return {.model = workloads::named_transformer("gpt3-175b")}; }

analysis::LlmMachine a100() {
  return {.gemm_flop_per_second = 150e12,
          .gemm_half_flop = 1e10,
          .nvlink_bytes_per_second = 300e9,
          .ib_bytes_per_second = 25e9,
          .gpus_per_machine = 8};
}

}  // namespace

TEST_CASE("llm closed forms: parameters per GPU and ZeRO's divisions by dp") {
  const auto s = gpt3();
  const std::int64_t h = 12'288, V = 51'200;      // 50,257 padded to a multiple of 128 x 8
  // A rank's layer: Q, K, V, O and two 4h MLP matrices over tp 8, two LayerNorms (2h each) whole, as
  // Megatron-LM keeps them on every TP rank; the final LayerNorm (2h) whole with the LM head.
  const std::int64_t layer = 12 * h * h / 8 + 4 * h;
  LlmLayout l{.dp = 16, .tp = 8, .global_batch = 16};
  const std::int64_t params = 96 * layer + 2 * V * h / 8 + 2 * h;
  CHECK(analysis::llm_stage_parameters(s, l, 0) == params);
  for (int zero = 0; zero <= 3; ++zero) {
    l.zero = zero;
    const analysis::LlmMemory m = analysis::llm_stage_memory(s, l, 0);
    CAPTURE(zero);
    // ZeRO-3 also holds two neighbouring ops gathered whole for the rank: two layers (each larger
    // than the 50,257-row embedding or head), 2 bytes each.
    CHECK(m.weights.count() == 2 * params / (zero >= 3 ? 16 : 1) + (zero >= 3 ? 2 * 2 * layer : 0));
    CHECK(m.gradients.count() == 2 * params / (zero >= 2 ? 16 : 1));
    CHECK(m.optimizer.count() == 12 * params / (zero >= 1 ? 16 : 1));
  }
  // A pipeline stage holds L/p layers; the embedding on the first, the LM head and final norm on the
  // last.
  l = {.dp = 2, .tp = 8, .pp = 8, .global_batch = 16};
  CHECK(analysis::llm_stage_parameters(s, l, 0) == 12 * layer + V * h / 8);
  CHECK(analysis::llm_stage_parameters(s, l, 3) == 12 * layer);
  CHECK(analysis::llm_stage_parameters(s, l, 7) == 12 * layer + V * h / 8 + 2 * h);
}

TEST_CASE("llm closed forms: activations in flight, 1F1B against GPipe and interleaved") {
  const auto s = gpt3();
  const std::int64_t sbh = 2048LL * 1 * 12'288;
  // Tensor + sequence parallel, selective recomputation: 34·s·b·h/t bytes per layer (Table 2).
  const std::int64_t per_layer = 34 * sbh / 8;
  // And under sequence parallelism Megatron's one buffer its column-parallel linears all-gather their
  // input into (s·b·h BF16 values, forward and backward); the norms' gradient buffer (at most 96 ×
  // 4h × 2 B = 9.4 MB) lives after the backward, when the activations are freed: never the peak here.
  const std::int64_t gathered = 2 * sbh;
  LlmLayout l{.dp = 1,
              .tp = 8,
              .pp = 4,
              .sequence_parallel = true,
              .recompute = workloads::Recompute::Selective,
              .global_batch = 16};  // m = 16
  REQUIRE(l.micro_batches() == 16);
  // 1F1B: the first stage holds p micro-batches of its L/p layers: L layers' worth.
  CHECK(analysis::llm_stage_memory(s, l, 0).activations.count() == 96 * per_layer + gathered);
  // The last stage one micro-batch of its 24 layers, plus the FP32 logits (4·s·b·V/t).
  CHECK(analysis::llm_stage_memory(s, l, 3).activations.count() ==
        24 * per_layer + 4 * 2048 * 51'200 / 8 + gathered);
  // GPipe: all m = 16 micro-batches.
  l.schedule = PipelineSchedule::GPipe;
  CHECK(analysis::llm_stage_memory(s, l, 0).activations.count() == 16 * 24 * per_layer + gathered);
  // Interleaved, v = 2: L(1 + (p−1)/(p·v)) = 96 · (1 + 3/8) = 132 layers.
  l.schedule = PipelineSchedule::Interleaved;
  l.virtual_stages = 2;
  CHECK(analysis::llm_stage_memory(s, l, 0).activations.count() == 132 * per_layer + gathered);
  // No pipeline: one micro-batch of every layer, plus the logits.
  l = {.dp = 4,
       .tp = 8,
       .sequence_parallel = true,
       .recompute = workloads::Recompute::Selective,
       .global_batch = 16};
  CHECK(analysis::llm_stage_memory(s, l, 0).activations.count() ==
        96 * per_layer + 4 * 2048 * 51'200 / 8 + gathered);
}

TEST_CASE("llm closed forms: the bubble is (p-1)/m of the ideal time, (p-1)/(v.m) interleaved") {
  const auto s = gpt3();
  for (const int p : {2, 4, 8})
    for (const std::int64_t m : {8, 16, 32})
      for (const int v : {1, 2, 3}) {
        LlmLayout l{.dp = 1, .tp = 8, .pp = p, .global_batch = m};
        if (v > 1) {
          l.schedule = PipelineSchedule::Interleaved;
          l.virtual_stages = v;
        }
        const auto e = analysis::llm_time_estimate(s, l, a100());
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(v);
        CHECK(e.bubble / (e.compute + e.tp_communication) ==
              doctest::Approx(static_cast<double>(p - 1) / static_cast<double>(v * m)));
        CHECK(e.compute > 0);
      }
}

TEST_CASE("llm closed forms: selective recomputation costs time only with unfused attention") {
  // Under flash attention nothing of the softmax is stored, so selective recomputation recomputes
  // nothing: the generated step's backward is flash's own (transformer_kernels.cpp), the same
  // kernels as recompute none. The closed form charged the attention's two s^2 GEMMs again (42.9 s
  // against 39.9 s for Llama 3 8B dp 8 pp 2 mb 2 on 16 H100, whose two runs simulated 41.283 s each).
  auto s = gpt3();
  LlmLayout none{.dp = 1, .tp = 8, .pp = 4, .global_batch = 16};
  LlmLayout selective = none;
  selective.recompute = workloads::Recompute::Selective;
  const auto flash_none = analysis::llm_time_estimate(s, none, a100());
  const auto flash_selective = analysis::llm_time_estimate(s, selective, a100());
  CHECK(flash_selective.compute == flash_none.compute);
  CHECK(flash_selective.bubble == flash_none.bubble);
  // Unfused, the scores GEMM runs again (with its softmax and dropout, memory-bound, not counted): one
  // GEMM of 2.b.s^2.h/t FLOPs, (F + F½) / rate, per layer per micro-batch, on the stage's 24 layers over
  // 16 micro-batches. The closed form charged the context GEMM too, which the generated step
  // (transformer_kernels.cpp, attention_backward) does not recompute.
  s.flash_attention = false;
  const auto unfused_none = analysis::llm_time_estimate(s, none, a100());
  const auto unfused_selective = analysis::llm_time_estimate(s, selective, a100());
  const double gemm = (2.0 * 2048 * 2048 * 12'288 / 8 + 1e10) / 150e12;
  CHECK(unfused_selective.compute - unfused_none.compute == doctest::Approx(16 * 24 * gemm));
  // So the search leaves selective out under flash (a twin of none would take a finalist's place),
  // and keeps it with unfused attention.
  const auto selective_layouts = [](const analysis::LlmSetting& setting) {
    const auto all = analysis::enumerate_layouts(analysis::llm_plan_dimensions(), {setting, 64, 8, 64});
    return std::count_if(all.begin(), all.end(), [](const LlmLayout& x) {
      return x.recompute == workloads::Recompute::Selective;
    });
  };
  CHECK(selective_layouts(gpt3()) == 0);
  CHECK(selective_layouts(s) > 0);
}

TEST_CASE("llm closed forms: experts divided by ep, DP volumes, and layout problems") {
  const analysis::LlmSetting moe{.model = workloads::named_transformer("mixtral-8x7b")};
  const std::int64_t mlp = 3LL * 4096 * 14'336;  // SwiGLU: gate, up, down
  LlmLayout l{.dp = 8, .tp = 1, .ep = 1, .global_batch = 8};
  const std::int64_t one = analysis::llm_stage_parameters(moe, l, 0);
  l.ep = 8;
  CHECK(one - analysis::llm_stage_parameters(moe, l, 0) == 32 * (8 * mlp - mlp));
  CHECK(analysis::llm_layout_problem(moe, l, 8).empty());
  CHECK(analysis::llm_time_estimate(moe, l, a100()).ep_communication > 0);

  LlmLayout d{.dp = 64, .global_batch = 64 * 4};
  CHECK(analysis::dp_volume_factor(d, 64) == doctest::Approx(2.0 * 63 / 64));
  CHECK(analysis::dp_volume_factor(d, 1) == 0);  // one replica exchanges nothing
  // m = 4. ZeRO 3 gathers forward and backward and reduce-scatters every micro-batch, ZeRO 2
  // reduce-scatters every micro-batch and gathers once, as the run's program does
  // (sharded_layout_options): it was counted (2m + 1) and 2.
  d.zero = 3;
  CHECK(analysis::dp_volume_factor(d, 64) == doctest::Approx(12.0 * 63 / 64));
  d.zero = 2;
  CHECK(analysis::dp_volume_factor(d, 64) == doctest::Approx(5.0 * 63 / 64));

  const auto s = gpt3();
  // Uneven stages (96 layers over pp 5) plan as the run splits them; interleaved chunks must divide.
  CHECK(analysis::llm_layout_problem(s, {.pp = 5, .global_batch = 8}, 8).empty());
  CHECK(
      analysis::llm_layout_problem(
          s, {.pp = 5, .schedule = PipelineSchedule::Interleaved, .virtual_stages = 2, .global_batch = 10}, 8)
          .find("do not split") != std::string::npos);
  CHECK(analysis::llm_layout_problem(s, {.pp = 4, .global_batch = 2}, 8) ==
        "fewer micro-batches than stages");
  CHECK(analysis::llm_layout_problem(s, {.pp = 4, .schedule = PipelineSchedule::GPipe, .global_batch = 2}, 8)
            .empty());
  CHECK(analysis::llm_layout_problem(s, {.tp = 16, .global_batch = 2}, 8) == "tp 16 spans machines");
  CHECK(analysis::llm_layout_problem(s, {.zero = 1, .global_batch = 2}, 8) ==
        "ZeRO without data parallelism");
  // The pipeline rules `run` applies: ci-llm's study once ranked dp 256 tp 8 pp 2 interleaved v4 mb 2
  // best at 4,096 GPUs with GPT-3's 1,536 sequences, 3 micro-batches, which run refuses (groups of pp).
  const LlmLayout three{.dp = 256, .tp = 8, .pp = 2, .sequence_parallel = true, .micro_batch = 2, .zero = 1,
                        .schedule = PipelineSchedule::Interleaved, .virtual_stages = 4, .global_batch = 1536};
  CHECK(analysis::llm_layout_problem(s, three, 8).find("multiple of 2 micro-batches") != std::string::npos);
  LlmLayout four = three;
  four.global_batch = 2048;  // 4 micro-batches: two groups of pp
  CHECK(analysis::llm_layout_problem(s, four, 8).empty());
  // ZeRO-2 and -3 with a pipeline, as `run` refuses them: a stage holds its gradients whole until the
  // flush (DeepSpeed's pipeline engine refuses them); ZeRO-1 (Megatron's distributed optimizer) runs.
  LlmLayout sharded = four;
  sharded.zero = 3;
  CHECK(analysis::llm_layout_problem(s, sharded, 8) == "ZeRO-3 with a pipeline");
  sharded.zero = 2;
  CHECK(analysis::llm_layout_problem(s, sharded, 8) == "ZeRO-2 with a pipeline");
  sharded.pp = 1;
  sharded.schedule = PipelineSchedule::OneFOneB;
  sharded.virtual_stages = 1;
  CHECK(analysis::llm_layout_problem(s, sharded, 8).empty());
}

TEST_CASE("llm plan dimensions: one row per dimension, every row searched") {
  const auto dims = analysis::llm_plan_dimensions();
  std::vector<std::string> off, keys;
  for (const auto& d : dims) {
    keys.emplace_back(d.key);
    if (!d.enabled) off.emplace_back(d.name);
  }
  CHECK(off.empty());  // pp, zero, schedule, virtual_stages and ep switched on with their steps
  CHECK(std::find(keys.begin(), keys.end(), "parallelism.zero") != keys.end());
  const analysis::LlmSpace space{gpt3(), 64, 8, 64};
  for (const LlmLayout& l : analysis::enumerate_layouts(dims, space)) CHECK(l.gpus() == 64);
  const LlmLayout l{.dp = 8, .tp = 8, .sequence_parallel = true, .global_batch = 64};
  const auto overlay = analysis::layout_overlay(dims, l);
  CHECK(std::find(overlay.begin(), overlay.end(), "parallelism.tp=8") != overlay.end());
  // Without a pipeline the overlay writes no pipeline.* key (the loader refuses them at pp 1).
  CHECK(std::none_of(overlay.begin(), overlay.end(),
                     [](const std::string& o) { return o.starts_with("pipeline."); }));
  // Enabled, the pipeline rows search pp, schedules and virtual stages too.
  const auto all = analysis::enumerate_layouts(analysis::llm_plan_dimensions_all_enabled(), space);
  CHECK(std::any_of(all.begin(), all.end(), [](const LlmLayout& x) {
    return x.pp == 8 && x.schedule == PipelineSchedule::Interleaved && x.zero == 1;
  }));
  CHECK(analysis::layout_differences(dims, l, LlmLayout{.dp = 8, .tp = 8, .global_batch = 64}) ==
        "sequence_parallel true->false");
}

TEST_CASE("llm plan dimensions: a layout's label, every row or compact, from the one table") {
  auto dims = analysis::llm_plan_dimensions();
  const LlmLayout piped{.dp = 16, .tp = 4, .pp = 2, .sequence_parallel = true, .micro_batch = 2,
                        .recompute = workloads::Recompute::Full, .zero = 3,
                        .schedule = PipelineSchedule::Interleaved, .virtual_stages = 4, .global_batch = 64};
  CHECK(analysis::layout_label(dims, piped) ==
        "dp 16 tp 4 pp 2 sp mb 2 recompute full zero 3 schedule interleaved virtual_stages 4 ep 1");
  // Compact: what is not the default, the schedule and its virtual stages beside pp, ZeRO as "Z".
  CHECK(analysis::layout_label(dims, piped, analysis::LabelForm::Compact) ==
        "dp 16 tp 4 pp 2 interleaved v4 sp mb 2 full Z3");
  // Without a pipeline its rows are left out even when set; ep shows once above 1.
  const LlmLayout flat{.dp = 64, .tp = 8, .ep = 8, .micro_batch = 1, .zero = 1, .virtual_stages = 2};
  CHECK(analysis::layout_label(dims, flat, analysis::LabelForm::Compact) == "dp 64 tp 8 ep 8 mb 1 Z1");
  // A row switched off leaves the every-row label, not the compact one (the study's DP-heavy family).
  for (auto& d : dims) d.enabled = d.name != "zero";
  CHECK(analysis::layout_label(dims, flat).find("zero") == std::string::npos);
  CHECK(analysis::layout_label(dims, flat, analysis::LabelForm::Compact) == "dp 64 tp 8 ep 8 mb 1 Z1");
}

TEST_CASE("llm closed forms: ZeRO-3's memory agrees with the simulated memory model, gathered ops included") {
  // Llama 3 70B's 128,256-row vocabulary needs no padding at tp 2 (a multiple of 128 x 2), so the
  // planner's closed form and the memory model the run checks (pipeline_memory) count the same
  // parameters, and must agree byte for byte, stage by stage.
  const analysis::LlmSetting s{.model = workloads::named_transformer("llama3-70b")};
  for (const int pp : {1, 4}) {
    const LlmLayout l{.dp = 8, .tp = 2, .pp = pp, .zero = 3, .global_batch = 64};
    const workloads::TransformerMemoryInput in{
        .model = s.model, .micro_batch = 1, .tp = 2, .value_bytes = 2, .zero = 3, .dp = 8};
    const auto stages = workloads::pipeline_memory(in, {.pp = pp}, static_cast<int>(l.micro_batches()));
    REQUIRE(stages.size() == static_cast<std::size_t>(pp));
    for (int st = 0; st < pp; ++st) {
      CAPTURE(pp);
      CAPTURE(st);
      const analysis::LlmMemory planned = analysis::llm_stage_memory(s, l, st);
      const workloads::TransformerMemory& model = stages[static_cast<std::size_t>(st)].memory;
      // The gathered pair is there: more than the weights' shard alone.
      CHECK(planned.weights.count() > 2 * analysis::llm_stage_parameters(s, l, st) / 8);
      CHECK(planned.weights == model.weights);
      CHECK(planned.gradients == model.gradients);
      CHECK(planned.optimizer == model.optimizer);
    }
  }
}

TEST_CASE(
    "llm closed forms: the last stage holds each waiting micro-batch's logits, as the run counts them") {
  // Llama 3 70B at tp 2 (its vocabulary needs no padding), pp 4, ZeRO-1 over dp 8. GPipe's last stage
  // holds the FP32 logits of all m micro-batches until their backward (interleaved too at m = pp);
  // both the planner and the run counted one, so a GPipe layout's peak was short by (m - 1) x 1 GiB.
  const analysis::LlmSetting s{.model = workloads::named_transformer("llama3-70b")};
  const std::int64_t logits = std::int64_t{4} * 8192 * 128'256 / 2;
  struct Case {
    PipelineSchedule schedule;
    int v;
    std::int64_t global_batch;  // m = global_batch / 8
    std::int64_t logits_held;
  };
  for (const Case c :
       {Case{PipelineSchedule::OneFOneB, 1, 64, 1}, Case{PipelineSchedule::GPipe, 1, 64, 8},
        Case{PipelineSchedule::Interleaved, 2, 64, 1}, Case{PipelineSchedule::Interleaved, 2, 32, 4}}) {
    CAPTURE(static_cast<int>(c.schedule));
    CAPTURE(c.global_batch);
    const LlmLayout l{.dp = 8,
                      .tp = 2,
                      .pp = 4,
                      .zero = 1,
                      .schedule = c.schedule,
                      .virtual_stages = c.v,
                      .global_batch = c.global_batch};
    const workloads::TransformerMemoryInput in{
        .model = s.model, .micro_batch = 1, .tp = 2, .value_bytes = 2, .zero = 1, .dp = 8};
    const auto stages = workloads::pipeline_memory(
        in, {.pp = 4, .schedule = c.schedule, .virtual_stages = c.v}, static_cast<int>(l.micro_batches()));
    // Every stage, the interleaved ones' warm-ups too (the closed form held later stages at
    // min(p - s, m) micro-batches).
    for (int st = 0; st < 4; ++st) {
      CAPTURE(st);
      CHECK(analysis::llm_stage_memory(s, l, st).activations ==
            stages[static_cast<std::size_t>(st)].memory.activations);
    }
    // The logits' share: what the last stage holds over the layers' activations alone.
    const std::int64_t layers_only = static_cast<std::int64_t>(stages[3].in_flight * stages[3].layers + 0.5) *
                                     workloads::layer_activation_bytes(in);
    CHECK(stages[3].memory.activations.count() - layers_only == c.logits_held * logits);
  }
}

TEST_CASE("llm closed forms: a mixture of experts is planned with its experts, as run models it") {
  // Mixtral 8x7B (8 experts, top 2; transformers.md). The planner kept the experts and top_k in fields
  // of its own that were never set, so it planned Mixtral as a dense model: one MLP a token (its
  // estimate half the simulated step: 2.83 s against 5.75 s for dp 8 tp 2 mb 8 on 16 H100), ep never
  // searched, and every expert on every rank whatever ep.
  const analysis::LlmSetting moe{.model = workloads::named_transformer("mixtral-8x7b")};
  // The ep row searches the divisors of 8 experts that divide dp.
  const auto all = analysis::enumerate_layouts(analysis::llm_plan_dimensions(), {moe, 64, 8, 64});
  CHECK(std::any_of(all.begin(), all.end(), [](const LlmLayout& x) { return x.ep == 8; }));
  // Each token runs top_k = 2 experts' MLPs: at ep 1 the GPU runs all 8 experts, each on its 4,096 x 2 / 8
  // = 1,024 tokens (expert_tokens), a SwiGLU's gate and up fused in one GEMM and the down projection,
  // and the router's h x 8 GEMM; the same layers with one MLP (experts 1) run it on all 4,096 tokens.
  // (F + F½) / rate a GEMM, forward and backward (3x), over 32 layers and m = 1 micro-batch. The
  // closed form counted top_k dense MLPs of three GEMMs (F½ 6 times a layer, not the run's 16 + 1).
  analysis::LlmSetting dense = moe;
  dense.model.experts = 1;
  dense.model.top_k = 1;
  const LlmLayout l{.dp = 8, .global_batch = 8};
  const auto gemm = [](double flop) { return (flop + 1e10) / 150e12; };
  const double h = 4096, ffn = 14'336;
  const double experts =
      8 * (gemm(2 * 1024 * h * ffn * 2) + gemm(2 * 1024 * ffn * h)) + gemm(2 * 4096 * h * 8);
  const double one = gemm(2 * 4096 * h * ffn * 2) + gemm(2 * 4096 * ffn * h);
  CHECK(analysis::llm_time_estimate(moe, l, a100()).compute -
            analysis::llm_time_estimate(dense, l, a100()).compute ==
        doctest::Approx(32 * 3 * (experts - one)));
  // Its weights, gradients and optimizer state per GPU are the run's memory model's, byte for byte:
  // the experts / tp / ep, the rest / tp (32,000 rows need no padding at tp 2).
  for (const int pp : {1, 4}) {
    // Sequence parallel, as Megatron-LM runs a mixture under tp (llm_layout_problem refuses it without).
    const LlmLayout x{
        .dp = 8, .tp = 2, .pp = pp, .ep = 8, .sequence_parallel = true, .zero = 1, .global_batch = 64};
    REQUIRE(analysis::llm_layout_problem(moe, x, 8).empty());
    const workloads::TransformerMemoryInput in{
        .model = moe.model, .micro_batch = 1, .tp = 2, .value_bytes = 2, .zero = 1, .dp = 8, .ep = 8};
    const auto stages = workloads::pipeline_memory(in, {.pp = pp}, static_cast<int>(x.micro_batches()));
    REQUIRE(stages.size() == static_cast<std::size_t>(pp));
    for (int st = 0; st < pp; ++st) {
      CAPTURE(pp);
      CAPTURE(st);
      const analysis::LlmMemory planned = analysis::llm_stage_memory(moe, x, st);
      const workloads::TransformerMemory& model = stages[static_cast<std::size_t>(st)].memory;
      CHECK(planned.weights.count() == model.weights.count());
      CHECK(planned.gradients == model.gradients);
      CHECK(planned.optimizer.count() == model.optimizer.count());
    }
    // By hand, a middle stage of pp 4 (8 layers, no embedding or head): attention 2h^2 + 2h.kv over
    // tp 2, the two norms (2h) and the router h.E whole, one of the 8 experts (3.h.ffn) a rank: 2
    // bytes each. The run's pipeline memory counted all 8 experts on every rank (11,610,161,152 B).
    if (pp == 4) {
      const std::int64_t h = 4096, kv = 1024, shared = (2 * h * h + 2 * h * kv) / 2 + 2 * h + h * 8;
      CHECK(stages[1].memory.weights.count() == 2 * 8 * (shared + 3 * h * 14'336 / 2));
    }
  }
}

TEST_CASE("llm closed forms: a mixture under tp is planned with sequence parallelism only, as run takes it") {
  // Megatron-LM refuses MoE under tensor parallelism without sequence parallelism ("When using MoE and
  // tensor parallelism, sequence parallelism must be used"), and so does run (check_expert_parallel):
  // the planner searched such layouts (Mixtral on 64 GPUs of 8: tp 2, 4, 8 with sp false among them).
  const analysis::LlmSetting moe{.model = workloads::named_transformer("mixtral-8x7b")};
  const auto all = analysis::enumerate_layouts(analysis::llm_plan_dimensions(), {moe, 64, 8, 64});
  CHECK(std::any_of(all.begin(), all.end(), [](const LlmLayout& x) { return x.tp > 1; }));
  CHECK(std::none_of(all.begin(), all.end(),
                     [](const LlmLayout& x) { return x.tp > 1 && !x.sequence_parallel; }));
  const LlmLayout l{.dp = 8, .tp = 2, .global_batch = 8};
  CHECK(analysis::llm_layout_problem(moe, l, 8) == "a mixture under tp without sequence parallelism");
  // A dense model keeps both (tp without sp is Megatron's plain tensor parallelism).
  const analysis::LlmSetting dense{.model = workloads::named_transformer("llama3-8b")};
  CHECK(analysis::llm_layout_problem(dense, l, 8).empty());
  const auto dense_all = analysis::enumerate_layouts(analysis::llm_plan_dimensions(), {dense, 64, 8, 64});
  CHECK(std::any_of(dense_all.begin(), dense_all.end(),
                    [](const LlmLayout& x) { return x.tp > 1 && !x.sequence_parallel; }));
}

TEST_CASE("llm closed forms: a mixture's experts exchange over the dp / ep replicas that hold them") {
  // Mixtral 8x7B at tp 2 (transformers.md), by hand: a GPU's dense parameters are 32 layers of
  // attention 2h^2 + 2h.kv over tp 2 with two norms h and the router h.8 whole, and the embedding and head
  // of 32,000 x h / 2 each with the final norm h whole; its experts 32 layers of 8 x 3.h.ffn / 2 / ep. The
  // dense part exchanges over all dp 8, the experts over the dp / ep replicas holding them: at ep 4 two, at
  // ep 8 = dp one (no exchange). The closed form counted the experts over dp 8 too (expert_parallel.h's
  // groups are dp / ep), so it priced Mixtral's ZeRO-3 at dp = ep at 4.5 times its dense traffic.
  const analysis::LlmSetting moe{.model = workloads::named_transformer("mixtral-8x7b")};
  const std::int64_t h = 4096, kv = 1024, ffn = 14'336;
  const std::int64_t dense = 32 * ((2 * h * h + 2 * h * kv) / 2 + 2 * h + h * 8) + 2 * 32'000 * h / 2 + h;
  const auto experts = [&](std::int64_t ep) { return 32 * (8 * 3 * h * ffn / 2 / ep); };
  // A machine that computes in no time, so that the whole exchange is exposed: bytes / link.
  const analysis::LlmMachine instant{.gemm_flop_per_second = 1e300,
                                     .nvlink_bytes_per_second = 300e9,
                                     .ib_bytes_per_second = 25e9,
                                     .gpus_per_machine = 16};
  const auto exposed = [&](const LlmLayout& l) {
    return analysis::llm_time_estimate(moe, l, instant).dp_exposed;
  };

  // ZeRO 0, dp 8 x ep 4: an all-reduce, 2(n-1)/n of the bytes, n = 8 dense and 2 for the experts.
  // Sequence parallel, as Megatron-LM runs a mixture under tp (llm_layout_problem refuses it without).
  LlmLayout l{.dp = 8, .tp = 2, .ep = 4, .sequence_parallel = true, .global_batch = 16};
  REQUIRE(analysis::llm_layout_problem(moe, l, 16).empty());
  const double ep4 =
      2.0 * 7 / 8 * 2 * static_cast<double>(dense) + 2.0 * 1 / 2 * 2 * static_cast<double>(experts(4));
  CHECK(analysis::llm_dp_bytes(moe, l) == doctest::Approx(ep4));
  CHECK(exposed(l) == doctest::Approx(ep4 / 300e9));
  // ZeRO 3 at dp = ep = 8, m = 2 micro-batches: 3m(n-1)/n of the dense bytes; none of the experts'. With
  // no compute to hide behind, the links carry all of it one after the other.
  l = {.dp = 8, .tp = 2, .ep = 8, .sequence_parallel = true, .zero = 3, .global_batch = 16};
  REQUIRE(analysis::llm_layout_problem(moe, l, 16).empty());
  const double zero3 = 6.0 * 7 / 8 * 2 * static_cast<double>(dense);
  CHECK(analysis::llm_dp_bytes(moe, l) == doctest::Approx(zero3));
  CHECK(exposed(l) == doctest::Approx(zero3 / 300e9));
  // ZeRO 1 at dp = ep: the dense reduce-scatter and gather alone.
  l.zero = 1;
  CHECK(exposed(l) == doctest::Approx(2.0 * 7 / 8 * 2 * static_cast<double>(dense) / 300e9));
}

TEST_CASE("llm closed forms: data parallelism across machines at its group's InfiniBand shares together") {
  // hunt7: a dp 16 ZeRO-3 step on 2 DGX H100 was estimated at one NIC's rate where its rings leave
  // each machine through all 8 NICs (the simulated step: 2.22 s at 400 and 800 Gb/s, the estimate
  // 5.30 and 2.67 s). The group's members on a machine carry it together, never past NVLink.
  const analysis::LlmSetting moe{.model = workloads::named_transformer("mixtral-8x7b")};
  const analysis::LlmMachine m = a100();  // 8 GPUs a machine, NVLink 300 GB/s, 25 GB/s a GPU
  const auto seconds = [&](const LlmLayout& l) { return analysis::llm_dp_seconds(moe, l, m); };
  // Within one machine (tp × dp ≤ 8): NVLink.
  LlmLayout l{.dp = 4, .tp = 2, .global_batch = 16};
  CHECK(seconds(l) == doctest::Approx(analysis::llm_dp_bytes(moe, l) / 300e9));
  // dp 16 tp 1: 8 members a machine, 8 × 25 = 200 GB/s (was 25).
  l = {.dp = 16, .tp = 1, .global_batch = 16};
  CHECK(seconds(l) == doctest::Approx(analysis::llm_dp_bytes(moe, l) / 200e9));
  // dp 4 tp 4 (2 machines): 2 members a machine, 50 GB/s.
  l = {.dp = 4, .tp = 4, .global_batch = 16};
  CHECK(seconds(l) == doctest::Approx(analysis::llm_dp_bytes(moe, l) / 50e9));
  // dp 2 tp 8: one member a machine, its own share.
  l = {.dp = 2, .tp = 8, .global_batch = 16};
  CHECK(seconds(l) == doctest::Approx(analysis::llm_dp_bytes(moe, l) / 25e9));
  // NVLink caps the group: 16 members' shares at 40 GB/s each would be 320 GB/s.
  analysis::LlmMachine fast = m;
  fast.ib_bytes_per_second = 40e9;
  l = {.dp = 16, .tp = 1, .global_batch = 16};
  CHECK(analysis::llm_dp_seconds(moe, l, fast) == doctest::Approx(analysis::llm_dp_bytes(moe, l) / 300e9));
  // Experts over dp 16 / ep 4 = 4 replicas, every 4th member of the dense group: 2 a machine at tp 1.
  l = {.dp = 16, .tp = 1, .ep = 4, .global_batch = 16};
  REQUIRE(analysis::llm_layout_problem(moe, l, 8).empty());
  const double dense = 2.0 * 15 / 16 *
                       static_cast<double>(analysis::llm_stage_parameters(moe, l, 0) -
                                           analysis::llm_stage_expert_parameters(moe, l, 0)) *
                       2;
  const double experts =
      2.0 * 3 / 4 * static_cast<double>(analysis::llm_stage_expert_parameters(moe, l, 0)) * 2;
  CHECK(seconds(l) == doctest::Approx(dense / 200e9 + experts / 50e9));
}

TEST_CASE("llm closed forms: a pipeline whose stages fill a machine sends between machines") {
  // dp 1 × tp 8 fills a DGX: stage 1 is the next machine, so every boundary crosses InfiniBand (the
  // estimate used NVLink unless a stage outgrew a machine).
  const auto s = gpt3();
  const LlmLayout l{.dp = 1, .tp = 8, .pp = 2, .global_batch = 16};
  REQUIRE(analysis::llm_layout_problem(s, l, 8).empty());
  const double bsh = static_cast<double>(l.micro_batch) * 2048 * 12'288 * 2;
  // The step waits on the warm-up's and cool-down's transfers, 2(p.v - 1) of them: the others run
  // beside the compute (pipeline_program.h's send streams).
  CHECK(analysis::llm_time_estimate(s, l, a100()).pp_communication == doctest::Approx(2 * bsh / 25e9));
  // Where the links are too slow for the compute to hide them, one direction's v.m transfers show
  // beyond it.
  analysis::LlmMachine slow = a100();
  slow.ib_bytes_per_second = 1e6;
  const analysis::LlmTimeEstimate e = analysis::llm_time_estimate(s, l, slow);
  const double m = static_cast<double>(l.micro_batches());
  CHECK(e.pp_communication == doctest::Approx(2 * bsh / 1e6 + (m * bsh / 1e6 - e.compute)));
}

TEST_CASE("llm closed forms: sequence parallelism's exposed and beside-GEMM gathers, each branch") {
  // review8's finding 5: no test failed under a mutation of full recomputation's 10, a mixture's +1 or
  // `beside`'s positive branch. Llama 3 8B and Mixtral 8x7B at tp 8 sp, one micro-batch of 8,192 and
  // 4,096 tokens; half = (t - 1)/t . s.b.h . 2 B / NVLink, one gather or scatter. The norms' all-reduce
  // once a step (2 . 7/8 of 32 layers' replicated parameters and the final norm) is the same in each
  // pair compared, and taken out where a total is asserted.
  const auto machine = [](double gemm_rate) {
    return analysis::LlmMachine{.gemm_flop_per_second = gemm_rate,
                                .nvlink_bytes_per_second = 300e9,
                                .ib_bytes_per_second = 25e9};
  };
  // GEMMs that outlast every gather (1 FLOP/s) hide those beside them; GEMMs of no time hide none.
  const analysis::LlmMachine slow = machine(1), fast = machine(1e300);
  const auto tp = [](const analysis::LlmSetting& s, const LlmLayout& l, const analysis::LlmMachine& mc) {
    return analysis::llm_time_estimate(s, l, mc).tp_communication;
  };
  const analysis::LlmSetting dense{.model = workloads::named_transformer("llama3-8b")};
  LlmLayout l{.tp = 8, .sequence_parallel = true, .global_batch = 1};
  const double half = 7.0 / 8 * 8192 * 4096 * 2 / 300e9;
  // Full recomputation runs the forward's two gathers and two scatters again: 10 exposed, not 6.
  LlmLayout full = l;
  full.recompute = workloads::Recompute::Full;
  CHECK(tp(dense, full, slow) - tp(dense, l, slow) == doctest::Approx(32 * 4 * half));
  // Beside QKV's and the MLP's first GEMM, the input's gather again and the input gradient's scatter
  // show whole where the GEMMs take no time: 2 . 2 more a layer, and 2 once beside the LM head's
  // (closed2: the head's collectives, which the run's program has, counted).
  CHECK(tp(dense, l, fast) - tp(dense, l, slow) == doctest::Approx(32 * 4 * half + 2 * half));
  // A mixture: its experts' input gradient reduce-scattered after them, exposed (6 + 1 a layer), and
  // no MLP beside a column-parallel linear (QKV's two only).
  const analysis::LlmSetting moe{.model = workloads::named_transformer("mixtral-8x7b")};
  const double moe_half = 7.0 / 8 * 4096 * 4096 * 2 / 300e9;
  const double norms = 2.0 * 7 / 8 *
                       static_cast<double>(32 * workloads::layer_replicated_parameters(moe.model) +
                                           workloads::norm_parameters(moe.model)) *
                       2 / 300e9;
  // The ends, exposed: the embedding's reduce-scatter and all-gather, the head's input gathered, the
  // loss's three all-reduces of 4,096 FP32 values.
  const double ends = 3 * moe_half + 3 * 2 * 7.0 / 8 * 4096 * 4 / 300e9;
  CHECK(tp(moe, l, slow) - norms == doctest::Approx(32 * 7 * moe_half + ends));
  CHECK(tp(moe, l, fast) - tp(moe, l, slow) == doctest::Approx(32 * 2 * moe_half + 2 * moe_half));
}

TEST_CASE("llm closed forms: without SP the backward's all-reduces run beside the weight-gradient GEMMs") {
  // GPT-3 at tp 8, one micro-batch of one sequence: an all-reduce of s·b·h = 2,048 × 12,288 × 2 B
  // = 50,331,648 B is 2 · 7/8 of it over NVLink. A layer's forward all-reduces two, exposed; its
  // backward two more, QKV's and MLP-in's input gradients, each beside its weight-gradient GEMM
  // (Megatron-LM's layers.py; workloads_tensor_parallel_backward_test.cpp), exposed only where longer:
  // QKV's GEMM 2 · 2,048 · 12,288 · 36,864 / 8 FLOP, MLP-in's 2 · 2,048 · 12,288 · 49,152 / 8, each
  // (F + F½) / rate. Before, all four were counted.
  auto s = gpt3();
  s.value_bytes = 2;
  const LlmLayout l{.dp = 1, .tp = 8, .global_batch = 1};
  const double bsh = 2048.0 * 12'288 * 2;
  const double qkv = (2.0 * 2048 * 12'288 * 36'864 / 8 + 1e10) / 150e12;
  const double mlp_in = (2.0 * 2048 * 12'288 * 49'152 / 8 + 1e10) / 150e12;
  // The ends (closed2; the run's program has them, the closed form counted none): the embedding's
  // vocabulary-parallel all-reduce, exposed; the loss's three all-reduces of 2,048 FP32 values,
  // exposed; the LM head's input gradient all-reduced beside its weight-gradient GEMM of
  // 2 · 2,048 · 12,288 · 51,200 / 8 FLOP (the vocabulary padded for tp 8).
  const double head = (2.0 * 2048 * 12'288 * 51'200 / 8 + 1e10) / 150e12;
  const auto ends = [&](double all_reduce, double nvlink) {
    return all_reduce + 3 * 2 * 7.0 / 8 * 2048 * 4 / nvlink + std::max(0.0, all_reduce - head);
  };
  for (const double nvlink : {300e9, 10e9}) {
    CAPTURE(nvlink);
    analysis::LlmMachine mc = a100();
    mc.nvlink_bytes_per_second = nvlink;
    const double all_reduce = 2 * 7.0 / 8 * bsh / nvlink;  // 0.29 ms at 300 GB/s, 8.8 ms at 10
    const double layer =
        2 * all_reduce + std::max(0.0, all_reduce - qkv) + std::max(0.0, all_reduce - mlp_in);
    CHECK(analysis::llm_time_estimate(s, l, mc).tp_communication * 1e6 ==
          doctest::Approx((96 * layer + ends(all_reduce, nvlink)) * 1e6));
  }
  // With full recomputation the forward's two run again, exposed (the ends are not recomputed).
  LlmLayout full = l;
  full.recompute = workloads::Recompute::Full;
  const double all_reduce = 2 * 7.0 / 8 * bsh / 300e9;
  CHECK(analysis::llm_time_estimate(s, full, a100()).tp_communication * 1e6 ==
        doctest::Approx((96 * 4 * all_reduce + ends(all_reduce, 300e9)) * 1e6));
}

// Transformer workloads: the named architectures' parameter counts against their model cards,
// Narayanan et al.'s FLOP count, the located checks of a tensor-parallel split, the TP collectives
// per layer against Megatron's closed forms, Korthikanti et al.'s activation memory, and the
// one-GPU calibration figures (all expected values computed here, independently of the code).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/error.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/gpu/gpu.h"
#include "workloads/memory/pipeline_memory.h"
#include "workloads/memory/transformer_memory.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

namespace {

double relative(double a, double b) { return std::fabs(a / b - 1); }

TransformerCost h100_bf16() { return transformer_cost(gpu_by_key("h100"), Precision::Bf16); }

// The TP collectives of op `op` in one direction.
std::vector<TpSync> syncs_of(const TransformerStep& s, std::uint32_t op, bool backward) {
  std::vector<TpSync> out;
  for (const auto& x : s.syncs)
    if (x.op == op && x.backward == backward) out.push_back(x);
  return out;
}

}  // namespace

TEST_CASE("transformer: named models have their model cards' parameter counts") {
  // transformers.md "params" column: 340 M, 175 B, 1.2 B, 6.7 B, 69 B, 8.0 B, 70.6 B, 405 B.
  const std::pair<const char*, double> cards[] = {
      {"bert-large", 340e6}, {"gpt3-175b", 175e9}, {"megatron-1.2b", 1.2e9}, {"llama2-7b", 6.7e9},
      {"llama2-70b", 69e9},  {"llama3-8b", 8.0e9}, {"llama3-70b", 70.6e9},   {"llama3-405b", 405e9}};
  for (const auto& [name, params] : cards) {
    const std::string model_name = name;  // clang cannot capture a structured binding in CAPTURE's lambda
    CAPTURE(model_name);
    // GPT-style models tie the output layer to the input embedding: their cards count one copy.
    const TransformerModel m = named_transformer(name);
    const bool tied = m.ffn == FfnKind::Gelu;
    const double counted = static_cast<double>(transformer_parameters(m) - (tied ? m.vocab * m.hidden : 0));
    // BERT's card also counts its position and segment embeddings and its pooler.
    CHECK(relative(counted, params) < (std::string(name) == "bert-large" ? 0.12 : 0.05));
  }
  CHECK_THROWS_WITH_AS(named_transformer("gpt5"), doctest::Contains("expected one of: bert-large"),
                       InputError);
}

TEST_CASE("transformer: model FLOPs are Narayanan et al.'s count for a GPT shape") {
  const TransformerModel m = named_transformer("gpt3-175b");
  const double B = 4, s = 2048, l = 96, h = 12288, V = 50257;
  const double with = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  CHECK(relative(model_flop_per_iteration(m, 4, true), with) < 1e-9);
  // Without recomputation the layers count 3 forwards: 72·B·s·l·h²·(1 + s/6h) + 6·B·s·h·V.
  const double without = 72 * B * s * l * h * h * (1 + s / (6 * h)) + 6 * B * s * h * V;
  CHECK(relative(model_flop_per_iteration(m, 4, false), without) < 1e-9);
  // Past int64 over the whole model, each layer within its limit (kLayerFlop): Llama 3 8B at a
  // sequence of 8e6 is 3·32 layers of 1.05e18 FLOPs, 1.0e20 (int64 wrapped it to 8.8e18).
  TransformerModel long_sequence = named_transformer("llama3-8b");
  long_sequence.sequence = 8'000'000;
  check_transformer_counts(long_sequence, 1);
  const double b = 1, seq = 8e6, hidden = 4096, kv = 1024, ffn = 14336, vocab = 128256;
  const double layer =
      2 * b * seq * (2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * ffn) + 4 * b * seq * seq * hidden;
  CHECK(relative(model_flop_per_iteration(long_sequence, 1, false),
                 3 * 32 * layer + 3 * 2 * b * seq * hidden * vocab) < 1e-12);
}

TEST_CASE("transformer: a split that cannot be made is an error naming the numbers") {
  TransformerModel m = named_transformer("llama3-8b");
  CHECK_THROWS_WITH_AS(check_transformer(m, 3), doctest::Contains("heads 32 are not divisible by tp 3"),
                       InputError);
  CHECK_THROWS_WITH_AS(check_transformer(m, 16), doctest::Contains("kv_heads 8 are not divisible by tp 16"),
                       InputError);
  m.kv_heads = 12;
  CHECK_THROWS_WITH_AS(check_transformer(m, 1), doctest::Contains("kv_heads 12 does not divide heads 32"),
                       InputError);
  m = named_transformer("llama3-8b");
  m.hidden = 4100;
  CHECK_THROWS_WITH_AS(check_transformer(m, 1), doctest::Contains("hidden 4100 is not divisible by heads 32"),
                       InputError);
  CHECK_NOTHROW(check_transformer(named_transformer("llama3-70b"), 8));
}

TEST_CASE("transformer: sequence parallelism needs tp dividing the sequence (Megatron's assertion)") {
  // A sequence of 1001 over tp 8 ran as 125 tokens a GPU, exit 0 (hunt4).
  TransformerModel m = named_transformer("llama3-8b");
  m.sequence = 1001;
  CHECK_THROWS_WITH_AS(check_sequence_parallel(m, 8),
                       "llama3-8b: sequence 1001 is not divisible by tp 8, which sequence parallelism "
                       "splits it over; expected a sequence that tp divides, or sequence_parallel false",
                       InputError);
  CHECK_THROWS_AS(generate_transformer({.model = m, .tp = 8, .sequence_parallel = true},
                                       transformer_cost(gpu_by_key("h100"), Precision::Bf16)),
                  InputError);
  CHECK_NOTHROW(check_sequence_parallel(m, 1));
  CHECK_NOTHROW(check_sequence_parallel(named_transformer("llama3-8b"), 8));
  // A scenario refuses it at parallelism.sequence_parallel: tests/bad_inputs/catalogue.txt
  // run-sequence-parallel-tp-not-dividing-the-sequence.
}

TEST_CASE("transformer: tensor parallelism issues Megatron's collectives per layer") {
  const TransformerModel m = named_transformer("llama3-8b");
  const std::int64_t b = 2, s = 8192, h = 4096;
  const std::int64_t activations = b * s * h * 2;  // one all-reduce's buffer: b·s·h BF16 values
  const TransformerStep tp =
      generate_transformer({.model = m, .micro_batch = b, .tp = 8, .layers_simulated = 2}, h100_bf16());
  const std::uint32_t layer = tp.profile.op_by_name("layer.1");
  for (bool backward : {false, true}) {
    const auto syncs = syncs_of(tp, layer, backward);
    REQUIRE(syncs.size() == 2);  // two all-reduces forward, two backward
    for (const auto& x : syncs) {
      CHECK(x.kind == sim::CollectiveOp::AllReduce);
      CHECK(x.bytes.count() == activations);
    }
  }
  // Sequence parallel: each all-reduce becomes a reduce-scatter and an all-gather of the same buffer;
  // in backward each column-parallel linear (QKV, the MLP's first) all-gathers its input again, and
  // that all-gather and its input gradient's reduce-scatter run beside a GEMM (overlap 1).
  const TransformerStep sp = generate_transformer(
      {.model = m, .micro_batch = b, .tp = 8, .sequence_parallel = true, .layers_simulated = 2}, h100_bf16());
  for (bool backward : {false, true}) {
    int rs = 0, ag = 0, overlapped = 0;
    for (const auto& x : syncs_of(sp, sp.profile.op_by_name("layer.0"), backward)) {
      CHECK(x.bytes.count() == activations);
      rs += x.kind == sim::CollectiveOp::ReduceScatter;
      ag += x.kind == sim::CollectiveOp::AllGather;
      overlapped += x.overlap == 1;
    }
    CHECK(rs == 2);
    CHECK(ag == (backward ? 4 : 2));
    CHECK(overlapped == (backward ? 4 : 0));
  }
  // Full recomputation runs the forward (and its two all-reduces) again in backward.
  const TransformerStep full = generate_transformer(
      {.model = m, .micro_batch = b, .tp = 8, .recompute = Recompute::Full, .layers_simulated = 2},
      h100_bf16());
  CHECK(syncs_of(full, layer, true).size() == 4);
  // No TP: no collectives; each rank's layer GEMMs are 1/8 of the whole layer's.
  const TransformerStep one =
      generate_transformer({.model = m, .micro_batch = b, .layers_simulated = 2}, h100_bf16());
  CHECK(one.syncs.empty());
  // The two RMSNorms (2h) are whole on every TP rank, as Megatron-LM keeps them.
  CHECK(tp.profile.ops[layer].gradient_bytes.count() == ((layer_parameters(m) - 2 * h) / 8 + 2 * h) * 2);
}

TEST_CASE("transformer: activation memory is Korthikanti et al.'s Table 2") {
  const TransformerModel m = named_transformer("gpt3-175b");
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  TransformerMemoryInput in{.model = m, .micro_batch = 1, .tp = 8, .flash_attention = false};
  CHECK(relative(static_cast<double>(layer_activation_bytes(in)),
                 s * b * h * (10 + 24 / t + 5 * a * s / (h * t))) < 1e-9);
  in.sequence_parallel = true;
  CHECK(relative(static_cast<double>(layer_activation_bytes(in)),
                 s * b * h * (34 / t + 5 * a * s / (h * t))) < 1e-9);
  in.recompute = Recompute::Selective;
  CHECK(relative(static_cast<double>(layer_activation_bytes(in)), s * b * h * 34 / t) < 1e-9);
  in.sequence_parallel = false;
  CHECK(relative(static_cast<double>(layer_activation_bytes(in)), s * b * h * (10 + 24 / t)) < 1e-9);
  in.recompute = Recompute::Full;
  CHECK(layer_activation_bytes(in) == 2 * 2048 * 12288);
  in.tp = 1;
  in.recompute = Recompute::None;
  CHECK(relative(static_cast<double>(layer_activation_bytes(in)), s * b * h * (34 + 5 * a * s / h)) < 1e-9);
}

TEST_CASE("transformer: weights, gradients and Adam state are 2 + 2 + 12 bytes a parameter, / tp, / ZeRO") {
  const TransformerModel m = named_transformer("llama2-7b");
  // The GEMMs and the vocabulary over tp 2; each layer's two RMSNorms (2h) and the final one (h) whole.
  const std::int64_t h = m.hidden;
  const double per_rank =
      static_cast<double>(m.layers * (layer_parameters(m) - 2 * h) + 2 * m.vocab * h) / 2 + m.layers * 2 * h +
      h;
  TransformerMemoryInput in{.model = m, .tp = 2, .dp = 4};
  TransformerMemory r = transformer_memory(in);
  CHECK(relative(static_cast<double>(r.weights.count()), 2 * per_rank) < 1e-6);
  CHECK(relative(static_cast<double>(r.optimizer.count()), 12 * per_rank) < 1e-6);
  in.zero = 1;
  CHECK(relative(static_cast<double>(transformer_memory(in).optimizer.count()), 3 * per_rank) < 1e-6);
  in.zero = 3;
  r = transformer_memory(in);
  // Stage 3 also holds two layers gathered whole for the TP rank (Llama 2 7B's layer: 202,383,360
  // parameters, the 202,375,168 of its GEMMs / tp 2 and its norms' 8,192 whole: 101,195,776, 2 bytes
  // each).
  CHECK(relative(static_cast<double>(r.weights.count()), per_rank / 2 + 2 * 2 * 101'195'776.0) < 1e-6);
  CHECK(relative(static_cast<double>(r.gradients.count()), per_rank / 2) < 1e-6);
  // 405 B on one 80 GB GPU does not fit, and says what it needs.
  const TransformerMemory big = transformer_memory({.model = named_transformer("llama3-405b")});
  CHECK_THROWS_WITH_AS(check_transformer_fits(big, sim::Bytes::gib(80), "llama3-405b", "H100"),
                       doctest::Contains("llama3-405b needs"), InputError);
}

TEST_CASE("transformer: the memory refusal says GiB, as the run's memory line does") {
  // 10 + 5 + 60 + 1.5 = 76.5 GiB against 64 GiB; a layers_simulated slice's refusal said "needs 10.4 GB"
  // beside a memory line in GiB (GB = 10^9 bytes, 7% less than a GiB).
  const TransformerMemory m{.weights = sim::Bytes::gib(10),
                            .gradients = sim::Bytes::gib(5),
                            .optimizer = sim::Bytes::gib(60),
                            .activations = sim::Bytes::mib(1536)};
  CHECK_THROWS_WITH_AS(check_transformer_fits(m, sim::Bytes::gib(64), "slice", "H100"),
                       "slice needs 76.5 GiB per GPU (weights 10 GiB, gradients 5 GiB, optimizer 60 GiB, "
                       "activations 1.50 GiB) but the GPU has 64 GiB (H100); expected a larger tp, "
                       "sequence_parallel, recompute or zero",
                       InputError);
  CHECK_NOTHROW(check_transformer_fits(m, sim::Bytes::mib(76 * 1024 + 512), "slice", "H100"));
}

TEST_CASE("transformer: the whole model's parameters per rank are its layers' counted one by one, as a "
          "pipeline's stages count them") {
  // Mixtral 8x7B (32 layers, hidden 4,096, 32 heads of 128, 8 KV heads, SwiGLU ffn 14,336, 8 experts,
  // vocabulary 32,000) at tp 2, ep 4, by hand: attention 2h² + 2h·1,024 = 41,943,040 (/ tp 2 =
  // 20,971,520), two RMSNorms 2h = 8,192 and the router h·8 = 32,768 whole on every TP rank (as
  // Megatron-LM and the profile hold them) and the experts 8 · 3 · h · 14,336 = 1,409,286,144
  // (/ tp 2 / ep 4 = 176,160,768): 197,173,248 a layer, times 32 = 6,309,543,936, plus the embedding
  // and the LM head, 32,000 · 4,096 / 2 = 65,536,000 each, and the final RMSNorm h = 4,096 whole:
  // 6,440,620,032 parameters, 2 bytes each as weights and gradients, 12 as Adam's state.
  TransformerMemoryInput in{.model = named_transformer("mixtral-8x7b"), .tp = 2, .dp = 8, .ep = 4};
  const TransformerMemory mixtral = transformer_memory(in);
  CHECK(mixtral.weights.count() == 2 * 6'440'620'032);
  CHECK(mixtral.gradients.count() == 2 * 6'440'620'032);
  CHECK(mixtral.optimizer.count() == 12 * 6'440'620'032);
  // Every named model at every tp and ep its shape takes, each ZeRO stage and both precisions: the
  // same bytes as the one stage of a pipeline of 1 (pipeline_memory.h), which counts by
  // layer_parameters_per_rank.
  for (const std::string& name : transformer_model_names()) {
    const TransformerModel m = named_transformer(name);
    for (int tp = 1; tp <= 8; tp *= 2) {
      try {
        check_transformer(m, tp);
      } catch (const InputError&) {
        continue;
      }
      for (int ep = 1; ep <= (m.is_moe() ? m.experts : 1); ep *= 2) {
        for (int zero = 0; zero <= 3; ++zero) {
          for (const std::int64_t value_bytes : {2, 4}) {
            CAPTURE(name);
            CAPTURE(tp);
            CAPTURE(ep);
            CAPTURE(zero);
            CAPTURE(value_bytes);
            const TransformerMemoryInput x{
                .model = m, .tp = tp, .value_bytes = value_bytes, .zero = zero, .dp = 8, .ep = ep};
            const TransformerMemory whole = transformer_memory(x);
            const TransformerMemory stage = pipeline_memory(x, {.pp = 1}, 1).front().memory;
            CHECK(whole.weights == stage.weights);
            CHECK(whole.gradients == stage.gradients);
            CHECK(whole.optimizer == stage.optimizer);
            // The embedding and the head at Megatron's padded vocabulary (a multiple of 128·tp), the
            // head with the final norm whole (RMSNorm h with SwiGLU, LayerNorm 2h with GELU).
            const std::int64_t vocab = (m.vocab + 128 * tp - 1) / (128 * tp) * (128 * tp);
            const std::int64_t final_norm = m.ffn == FfnKind::Swiglu ? m.hidden : 2 * m.hidden;
            const std::int64_t params =
                m.layers * layer_parameters_per_rank(m, tp, ep) + 2 * (vocab * m.hidden / tp) + final_norm;
            // ZeRO-2 shards them over dp 8, a mixture's experts over the 8 / ep replicas that hold
            // them (each of those replicas holds the same experts).
            const std::int64_t experts = ep > 1 ? m.layers * (layer_expert_parameters(m) / tp / ep) : 0;
            CHECK(whole.gradients.count() ==
                  (zero >= 2 ? value_bytes * (params - experts) / 8 + value_bytes * experts / (8 / ep)
                             : value_bytes * params));
          }
        }
      }
    }
  }
}

TEST_CASE("transformer pipeline: the last stage holds the logits of each micro-batch awaiting its backward") {
  // Llama 3 8B cut to 4 layers, pp 2, 4 micro-batches: the last stage computes each micro-batch's
  // loss on FP32 logits of s x V values and keeps them for its backward. 1F1B runs each loss's
  // backward at once (one set held), GPipe runs every forward first (all four); the logits were
  // counted once under every schedule.
  TransformerModel m = named_transformer("llama3-8b");
  m.layers = 4;
  const TransformerMemoryInput in{.model = m};
  const std::int64_t layer = layer_activation_bytes(in);
  const std::int64_t logits = 4 * m.sequence * padded_vocab(m, 1);  // 8,192 x 128,256 x 4 B = 3.9 GiB
  const auto last = [&](PipelineSchedule schedule) {
    return pipeline_memory(in, {.pp = 2, .schedule = schedule}, 4).back().memory.activations.count();
  };
  CHECK(last(PipelineSchedule::OneFOneB) == 2 * layer + logits);
  CHECK(last(PipelineSchedule::GPipe) == 4 * (2 * layer + logits));
  // The first stage holds no logits: 2 micro-batches of 2 layers under 1F1B, 4 under GPipe.
  CHECK(pipeline_memory(in, {.pp = 2}, 4).front().memory.activations.count() == 2 * 2 * layer);
  CHECK(pipeline_memory(in, {.pp = 2, .schedule = PipelineSchedule::GPipe}, 4)
            .front()
            .memory.activations.count() == 4 * 2 * layer);
  // logits_in_flight's closed form against the last stage's own order of tasks.
  for (const PipelineSchedule schedule :
       {PipelineSchedule::OneFOneB, PipelineSchedule::GPipe, PipelineSchedule::Interleaved})
    for (const int pp : {2, 3, 4, 8})
      for (const int v : {1, 2, 4}) {
        if ((schedule == PipelineSchedule::Interleaved) != (v > 1)) continue;
        for (const int mb : {1, pp, 2 * pp, 3 * pp + 1}) {
          if (schedule == PipelineSchedule::Interleaved && mb % pp != 0) continue;
          int now = 0, most = 0;
          for (const PipelineTask& t : stage_schedule(schedule, {pp, v, mb}, pp - 1))
            if (t.chunk == v - 1) most = std::max(most, now += t.backward ? -1 : 1);
          CAPTURE(pp);
          CAPTURE(v);
          CAPTURE(mb);
          CHECK(logits_in_flight({.pp = pp, .schedule = schedule, .virtual_stages = v}, mb) == most);
        }
      }
}

TEST_CASE("transformer: the one-GPU calibration figures are reproduced within 3%") {
  // transformers.md: Megatron 1.2B on one V100 (DGX-2H), batch 8, seq 1,024, mixed precision,
  // activation checkpointing: an iteration of 1,288 ms.
  const TransformerStep v = generate_transformer(
      {.model = named_transformer("megatron-1.2b"), .micro_batch = 8, .recompute = Recompute::Full,
       .flash_attention = false},
      transformer_cost(gpu_by_key("v100"), Precision::Fp16));
  CHECK(relative(static_cast<double>(v.profile.step_time_1gpu().ps()) / 1e9, 1288) < 0.03);
  // Narayanan et al. Fig. 7: a 4-layer GPT (h 4,096, 128 heads) on one A100: about 67 TFLOP/s at
  // micro-batch 1 and 92 at 16 (their count, with recomputation), one micro-batch per iteration:
  // the step includes the optimizer update.
  const TransformerModel g{"gpt-1b", 4, 4096, 128, 128, 16384, FfnKind::Gelu, 51200, 2048};
  const TransformerCost a100 = transformer_cost(gpu_by_key("a100"), Precision::Bf16);
  CHECK(a100.calibrated);
  CHECK_FALSE(h100_bf16().calibrated);
  CHECK(h100_bf16().derivation.find("ESTIMATE") != std::string::npos);
  for (const auto& [mb, tflops] : {std::pair<int, double>{1, 67}, {16, 92}}) {
    const TransformerStep a = generate_transformer(
        {.model = g, .micro_batch = mb, .recompute = Recompute::Full, .flash_attention = false}, a100);
    const double seconds = static_cast<double>(a.profile.step_time_1gpu().ps()) / 1e12;
    const int micro_batch = mb;  // clang cannot capture a structured binding in CAPTURE's lambda
    CAPTURE(micro_batch);
    CHECK(relative(model_flop_per_iteration(g, mb, true) / seconds / 1e12, tflops) < 0.03);
  }
}

TEST_CASE("transformer: precisions a GPU lacks are refused, GEMM efficiency grows with size") {
  CHECK_THROWS_WITH_AS(transformer_cost(gpu_by_key("v100"), Precision::Bf16),
                       doctest::Contains("no BF16"), InputError);
  CHECK_THROWS_WITH_AS(transformer_cost(gpu_by_key("a100"), Precision::Fp8),
                       doctest::Contains("fp8 needs an H100"), InputError);
  const TransformerCost c = h100_bf16();
  const auto rate = [&](std::int64_t flop) {
    return static_cast<double>(flop) / static_cast<double>(c.gemm("g", flop).duration.ps());
  };
  CHECK(rate(1'000'000'000) < rate(100'000'000'000));
  CHECK(rate(100'000'000'000) < rate(10'000'000'000'000));
  CHECK(transformer_cost(gpu_by_key("h100"), Precision::Fp8).peak_flop_per_second ==
        2 * c.peak_flop_per_second);
}

TEST_CASE(
    "transformer: the profile's ops hold the parameters the memory model counts, the router whole "
    "on every TP rank and the vocabulary padded") {
  // Mixtral 8x7B (hidden 4,096, 8 KV heads of 128, SwiGLU ffn 14,336, 8 experts, vocabulary 32,000)
  // at tp 8, ep 2, BF16, by hand. Megatron-LM splits attention's matrices over tp and keeps the
  // router (h x 8, its TopKRouter's weight) and the two RMSNorms (2h) whole on every TP rank; it pads
  // the vocabulary to a multiple of 128 x tp (32,768 at tp 8; 32,000 already is one at tp 2). The
  // memory model divided the router by tp (5,248,000 parameters a layer where the profile's op held
  // 5,276,672), and both divided the norms (5,276,672 where Megatron holds 5,283,840).
  const TransformerModel m = named_transformer("mixtral-8x7b");
  const std::int64_t h = 4096, kv = 1024;
  const std::int64_t shared = (2 * h * h + 2 * h * kv) / 8 + 2 * h + h * 8;  // attention; norms, router
  const std::int64_t experts = 4 * 3 * h * 14'336 / 8, vocab = 32'768 * h / 8;
  CHECK(shared == 5'283'840);
  const TransformerStep step =
      generate_transformer({.model = m, .tp = 8, .ep = 2, .layers_simulated = 2}, h100_bf16());
  const auto bytes = [&](const char* op) {
    return step.profile.ops[step.profile.op_by_name(op)].gradient_bytes.count();
  };
  CHECK(bytes("layer.1") == 2 * shared);
  CHECK(bytes("layer.1.experts") == 2 * experts);
  CHECK(bytes("embedding") == 2 * vocab);
  CHECK(bytes("lm_head") == 2 * (vocab + h));  // and the final norm, whole
  CHECK(layer_shared_parameters_per_rank(m, 8) == shared);
  CHECK(layer_parameters_per_rank(m, 8, 2) == shared + experts);
  const TransformerMemoryInput in{.model = m, .tp = 8, .dp = 2, .ep = 2};
  CHECK(model_state_memory(in, 2, true, true).weights.count() ==
        bytes("embedding") + bytes("layer.0") + bytes("layer.0.experts") + bytes("layer.1") +
            bytes("layer.1.experts") + bytes("lm_head"));
  // At tp 2 the vocabulary needs no padding: 32,000 x h / 2 on both sides.
  const TransformerStep tp2 =
      generate_transformer({.model = m, .tp = 2, .ep = 2, .layers_simulated = 2}, h100_bf16());
  CHECK(tp2.profile.ops[tp2.profile.op_by_name("embedding")].gradient_bytes.count() == 2 * 32'000 * h / 2);
  CHECK(model_state_memory({.model = m, .tp = 2, .dp = 2, .ep = 2}, 0, true, false).weights.count() ==
        2 * 32'000 * h / 2);
}

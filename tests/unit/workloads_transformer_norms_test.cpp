// A transformer's norms under tensor parallelism, counted by hand for a small GPT: Megatron-LM splits
// the GEMMs and the vocabulary over tp and keeps each LayerNorm (weight and bias, 2h) whole on every
// TP rank, the final norm with the LM head on the last pipeline stage; the profile's ops, the memory
// model and plan's closed form hold the same count.
#include <doctest/doctest.h>

#include "analysis/plan/llm_closed_forms.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/gpu/gpu.h"
#include "workloads/memory/pipeline_memory.h"
#include "workloads/memory/transformer_memory.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

namespace {

// 2 layers, hidden 1,024, 16 heads (MHA), GELU ffn 4,096, GPT's vocabulary 50,257, sequence 1,024.
TransformerModel small_gpt() { return {"small-gpt", 2, 1024, 16, 16, 4096, FfnKind::Gelu, 50'257, 1024}; }

struct HandCount {
  int tp;
  std::int64_t layer, embedding, head;
};

}  // namespace

TEST_CASE("transformer norms: whole on every TP rank, the final norm on the last stage, one count") {
  // By hand, h = 1,024: attention Q, K, V, O 4h² = 4,194,304 and the MLP 2·h·4h = 8,388,608, 12,582,912
  // split over tp; two LayerNorms 2 · 2h = 4,096 whole. The vocabulary padded to a multiple of 128·tp
  // (50,432 at tp 2, 50,688 at tp 4) split over tp; the head adds the final LayerNorm, 2h = 2,048.
  // The norms divided by tp made a layer 6,293,504 at tp 2 and 3,146,752 at tp 4, and the memory
  // model's head held no final norm.
  const HandCount counts[] = {{2, 6'291'456 + 4'096, 50'432 * 512, 50'432 * 512 + 2'048},
                              {4, 3'145'728 + 4'096, 50'688 * 256, 50'688 * 256 + 2'048}};
  const TransformerModel m = small_gpt();
  const TransformerCost bf16 = transformer_cost(gpu_by_key("h100"), Precision::Bf16);
  for (const HandCount& c : counts) {
    CAPTURE(c.tp);
    CHECK(layer_shared_parameters_per_rank(m, c.tp) == c.layer);
    CHECK(layer_parameters_per_rank(m, c.tp, 1) == c.layer);
    CHECK(embedding_parameters_per_rank(m, c.tp) == c.embedding);
    CHECK(head_parameters_per_rank(m, c.tp) == c.head);
    const std::int64_t rank = 2 * c.layer + c.embedding + c.head;  // 64,235,520 at tp 2; 32,253,952 at 4
    CHECK(rank == (c.tp == 2 ? 64'235'520 : 32'253'952));

    // The profile: each op's BF16 gradient bytes, 2 a parameter.
    const TransformerStep step = generate_transformer({.model = m, .tp = c.tp}, bf16);
    const auto bytes = [&](const char* op) {
      return step.profile.ops[step.profile.op_by_name(op)].gradient_bytes.count();
    };
    CHECK(bytes("embedding") == 2 * c.embedding);
    CHECK(bytes("layer.0") == 2 * c.layer);
    CHECK(bytes("layer.1") == 2 * c.layer);
    CHECK(bytes("lm_head") == 2 * c.head);
    CHECK(step.profile.parameter_bytes().count() == 2 * rank);

    // The memory model, the whole model and a pipeline of 2: the embedding and a layer on stage 0,
    // a layer and the head with its final norm on stage 1.
    const TransformerMemoryInput in{.model = m, .tp = c.tp};
    CHECK(transformer_memory(in).weights.count() == 2 * rank);
    CHECK(transformer_memory(in).optimizer.count() == 12 * rank);
    const std::vector<StageMemory> stages = pipeline_memory(in, {.pp = 2}, 2);
    CHECK(stages[0].memory.weights.count() == 2 * (c.embedding + c.layer));
    CHECK(stages[1].memory.weights.count() == 2 * (c.layer + c.head));

    // Plan's closed form, the same stages.
    const analysis::LlmSetting s{.model = m};
    CHECK(analysis::llm_stage_parameters(s, {.tp = c.tp, .global_batch = 1}, 0) == rank);
    const analysis::LlmLayout piped{.tp = c.tp, .pp = 2, .global_batch = 2};
    CHECK(analysis::llm_stage_parameters(s, piped, 0) == c.embedding + c.layer);
    CHECK(analysis::llm_stage_parameters(s, piped, 1) == c.layer + c.head);
  }
}

TEST_CASE("transformer norms: RMSNorm's weight alone, whole on every TP rank") {
  // Llama 2 7B (h 4,096, 32 heads, SwiGLU ffn 11,008, vocabulary 32,000) at tp 4, by hand: attention
  // 4h² = 67,108,864 and the MLP 3·h·11,008 = 135,266,304 over 4 = 50,593,792, two RMSNorms 2h =
  // 8,192 whole: 50,601,984 a layer; the head 32,256 (32,000 padded to 512s) · h / 4 = 33,030,144
  // plus the final RMSNorm h = 4,096.
  const TransformerModel m = named_transformer("llama2-7b");
  CHECK(norm_parameters(m) == 4'096);
  CHECK(layer_shared_parameters_per_rank(m, 4) == 50'601'984);
  CHECK(head_parameters_per_rank(m, 4) == 33'030'144 + 4'096);
  // The whole model's count is unchanged by the rule: tp 1 holds everything once.
  CHECK(m.layers * layer_parameters_per_rank(m, 1, 1) + embedding_parameters_per_rank(m, 1) +
            head_parameters_per_rank(m, 1) ==
        transformer_parameters(m));
}

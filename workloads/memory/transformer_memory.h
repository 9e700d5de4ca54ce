// Memory of one GPU training a transformer under tensor (and sequence) parallelism, recomputation
// and ZeRO: weights, gradients and Adam state per parameter (2 + 2 + 12 bytes under 16-bit mixed
// precision, 4 + 4 + 8 in FP32) divided by tp (the norms and a router kept whole) and by the ZeRO
// stage's sharding over dp (a mixture's experts over dp / ep), and the activations of Korthikanti
// et al. 2022 (arXiv 2205.05198, Table 2; ../shared/reference/transformers.md) per layer, times the
// layers, plus the FP32 logits of the loss.
//   TransformerMemory m = transformer_memory({.model = named_transformer("gpt3-175b"), .tp = 8, ...});
//   m.total() > capacity  → check_transformer_fits throws InputError "needs ... of ..."
#pragma once
#include <cstdint>
#include <string>

#include "sim/units.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/memory/memory_model.h"

namespace hybridsim::workloads {

struct TransformerMemoryInput {
  TransformerModel model;
  std::int64_t micro_batch = 1;
  int tp = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::None;
  bool flash_attention = true;   // the softmax is never stored: the 5·a·s/h term goes, as selective
  std::int64_t value_bytes = 2;  // 2: 16-bit mixed precision; 4: FP32
  int zero = 0;                  // ZeRO stage 0..3
  int dp = 1;                    // the data-parallel size ZeRO shards over
  int ep = 1;                    // a mixture of experts' expert-parallel size: experts / ep per GPU
};

struct TransformerMemory {
  sim::Bytes weights, gradients, optimizer, activations;
  sim::Bytes total() const { return weights + gradients + optimizer + activations; }
};

// Activation bytes of one layer for these settings (Korthikanti's Table 2, × value_bytes / 2). A
// mixture of experts keeps, in place of the MLP's 2·s·b·h + 16·s·b·h/t (Korthikanti's MLP input and
// its two 4h-wide tensors; its dropout mask stays), its experts' tokens: each of the
// expert_tokens(s·b·ep) × experts / ep on this GPU stores its input (h values) and its gate, up and
// activated values (3 × ffn_hidden / t), and the router's FP32 logits (4 bytes × s·b·experts).
// Expert weights, gradients and optimizer state are divided by ep as well as tp.
std::int64_t layer_activation_bytes(const TransformerMemoryInput& in);
// A rank's activations (`activations`, for `layers` layers and the head where `head`) with sequence
// parallelism's two buffers (none without it or at tp 1): Megatron-LM's global buffer that each
// column-parallel linear all-gathers its input into, s·b·h values, in forward and again in backward
// (layers.py; made once, then kept), and the flat copy of the norms' (and routers') gradients that
// finalize_model_grads all-reduces over the TP group after the backward has freed the activations
// (layer_replicated_parameters a layer, norm_parameters with the head): gathered + max(activations,
// norm gradients).
std::int64_t with_sequence_parallel_buffers(const TransformerMemoryInput& in, std::int64_t activations,
                                            std::int64_t layers, bool head);
// One layer's parameters on one rank: a mixture's experts / tp / ep (an expert-parallel group holds
// each expert once), its norms and router whole and the rest / tp (layer_shared_parameters_per_rank,
// as the profile's op holds them). The pipeline's stages and the planner's closed forms count by it.
std::int64_t layer_parameters_per_rank(const TransformerModel& model, int tp, int ep);

// ZeRO-3's gathered parameters in flight, whole for this TP (and EP) rank in the training precision:
// the op being computed and the one gathered ahead of it (program/sharded_data_parallel.h prefetches
// one op ahead, as FSDP does), at the largest adjacent pair of the ops gathered in turn: the
// embedding (if `embedding`), each of `layers` layers (a mixture of experts' as two: attention with
// router, then experts / ep, where dp / ep > 1 shards them; at dp = ep they are held whole, not
// gathered), the LM head (if `head`). Zero below stage 3 or at dp 1. Counted with the weights.
std::int64_t zero3_gathered_bytes(const TransformerMemoryInput& in, std::int64_t layers, bool embedding,
                                  bool head);
// The weights (ZeRO-3's gathered pair in flight included), gradients and optimizer state one rank
// holds for `layers` layers at layer_parameters_per_rank, and the embedding and the LM head
// (embedding_parameters_per_rank, head_parameters_per_rank: padded vocab · h / tp each, the head with
// the final norm whole) where it holds them, divided as the ZeRO stage says (over dp; a mixture's
// experts over the dp / ep replicas that hold the same experts); activations 0. The one
// count of a rank's parameters: the whole model's (transformer_memory: every layer, both ends) and a
// pipeline stage's (pipeline_memory.h).
TransformerMemory model_state_memory(const TransformerMemoryInput& in, std::int64_t layers, bool embedding,
                                     bool head);
TransformerMemory transformer_memory(const TransformerMemoryInput& in);
// The same as the step memory run prints (one rank, mp = 1): weights, gradients, optimizer (Adam's
// moments and, under 16-bit training, the FP32 master weights) and activations at the peak, for
// in.dp data-parallel replicas; nothing else is counted (no buckets, NCCL buffers or framework).
StepMemory transformer_step_memory(const TransformerMemoryInput& in);
// The same for a memory already counted (a pipeline stage's, pipeline_memory.h).
StepMemory transformer_step_memory(const TransformerMemoryInput& in, const TransformerMemory& memory);
// The least one GPU can hold the model in on `gpus` GPUs, `per_machine` to a machine: tp the largest
// that divides a machine and the model's heads, kv_heads and ffn_hidden (check_transformer), ZeRO-3
// over all the other GPUs (a pipeline can do no better: its first stage holds as many layers'
// activations), sequence parallelism and full recomputation; micro-batch, precision and ep as given.
TransformerMemoryInput largest_sharding(const TransformerMemoryInput& in, int gpus, int per_machine);
// What divides what, for reports: "Korthikanti et al. 2022; weights, gradients, optimizer / tp 8;
// ZeRO-3 over dp 64: weights, gradients, optimizer / 64".
std::string transformer_memory_rule(const TransformerMemoryInput& in);
// InputError "<model> needs <total> per GPU (weights ..., activations ...) but the GPU has <capacity>
// (<where>); expected a larger tp, sequence_parallel, recompute or zero" when it does not fit.
void check_transformer_fits(const TransformerMemory& memory, sim::Bytes capacity, const std::string& model,
                            const std::string& where);

}  // namespace hybridsim::workloads

// The transformer generator: one training step of a decoder stack on ONE tensor-parallel rank as a
// profile (profile.h) — per layer its forward and backward kernels (norms, QKV, attention fused
// flash-style or unfused with its softmax and dropout, output projection, MLP, dropout and
// residuals), the vocabulary-parallel embedding, the final norm, LM head and loss, the Adam update
// with FP32 master weights (optimizer_cost.h) — priced by transformer_cost.h, plus the
// tensor-parallel collectives the rank takes part in between kernels (Megatron-LM's splits,
// ../shared/reference/transformers.md): two all-reduces of b·s·h values per layer forward and two
// backward, or with sequence parallelism a reduce-scatter and an all-gather in their place.
//   TransformerStep s = generate_transformer({.model = named_transformer("llama3-8b"), .tp = 8},
//                                            transformer_cost(gpu_by_key("h100"),
//                                            Precision::Bf16));
//   s.profile.step_time_1gpu();  s.syncs.size();
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/collective.h"
#include "sim/units.h"
#include "workloads/generators/transformer_model.h"
#include "workloads/gpu/transformer_cost.h"
#include "workloads/profile/profile.h"
#include "workloads/profile/tp_sync.h"

namespace hybridsim::workloads {

enum class Recompute : std::uint8_t { None, Selective, Full };
std::string_view recompute_name(Recompute r);          // "none", "selective", "full"
Recompute recompute_by_name(std::string_view name);     // InputError "expected none, selective or full"

struct TransformerConfig {
  TransformerModel model;
  std::int64_t micro_batch = 1;    // samples (sequences) per micro-batch
  int tp = 1;
  int ep = 1;  // expert parallelism: experts / ep on each GPU (check_experts)
  bool sequence_parallel = false;
  Recompute recompute = Recompute::None;
  bool flash_attention = true;     // false: scores GEMM, softmax, dropout, context GEMM
  // Layers generated (a layer-slice of a large model: the results scale by layers / this); 0: all.
  std::int64_t layers_simulated = 0;
};

struct TransformerStep {
  Profile profile;                // one TP rank's ops; gradients are its shard's
  std::vector<TpSync> syncs;      // empty for tp = 1
  // Sequence parallelism (tp > 1): each layer's norms (and router) and the head's final norm, whose
  // gradients are all-reduced over the TP group before the optimizer; empty without it.
  std::vector<TpGradient> tp_gradients;
  // Expert parallelism (ep > 1): the dispatch and combine all-to-alls of each MoE layer, forward
  // and backward, on the rank's EP group (workloads/program/expert_parallel.h).
  std::vector<TpSync> ep_syncs;
  std::vector<std::uint32_t> expert_ops;  // the "layer.N.experts" ops, in order
  TransformerConfig config;
  std::int64_t layers_simulated = 0;
};

// A mixture of experts (model.experts > 1) runs each layer as two ops: "layer.N" (attention, the
// router GEMM h × experts and its top-k softmax) and "layer.N.experts" (token permutation, the
// dispatch all-to-all, the MLP of each of its experts / ep experts on expert_tokens(tokens × ep)
// tokens, the combine all-to-all, the weighted sum), so that the experts' gradients, which only
// dp / ep replicas share, are a bucket of their own.
// Throws InputError for a model that cannot be split by tp (check_transformer) or ep
// (check_experts), or a batch < 1.
TransformerStep generate_transformer(const TransformerConfig& config, const TransformerCost& cost);

// The Adam update generate_transformer prices its step's optimizer with (its profile's optimizer): a
// time per GiB of gradient bytes over a rank's tensors of `layers` layers of `config`, whose gradients
// are `parameter_bytes`. For the planner's closed form (analysis/plan/llm_generated_kernels.h), which
// prices the update as the run does.
OptimizerCost transformer_optimizer_cost(const TransformerConfig& config, const TransformerCost& cost,
                                         std::int64_t layers, sim::Bytes parameter_bytes);

}  // namespace hybridsim::workloads

// The FLOPs of each GEMM of a transformer layer, one micro-batch on one tensor-parallel rank, as
// transformer_kernels.cpp issues them: the one source of b, s, h and the GEMMs' sizes for the
// generated step and for the planner's closed form (analysis/plan/llm_closed_forms.h).
//   TransformerGemms g = transformer_gemms({.model = named_transformer("mixtral-8x7b"), .ep = 8});
//   g.mlps * g.mlp_in;  // the experts' first GEMMs of one layer's forward
#pragma once
#include <cstdint>

#include "workloads/generators/transformer_gen.h"

namespace hybridsim::workloads {

struct TransformerGemms {
  std::int64_t qkv = 0;  // 2·b·s·h·(h + 2·kv) / t
  // The forward attention's 4·b·s²·h / t: flash's one kernel; unfused, its scores and context each half.
  std::int64_t attention = 0;
  std::int64_t attention_output = 0;  // 2·b·s·h² / t
  // One MLP's two GEMMs (a SwiGLU's gate and up fused into mlp_in): the dense MLP's on b·s tokens, or
  // one local expert's on its expert_tokens(b·s·ep) tokens.
  std::int64_t mlp_in = 0, mlp_out = 0;
  std::int64_t mlps = 1;     // the MLPs a layer runs: 1 dense, a mixture's experts / ep local experts
  std::int64_t router = 0;   // a mixture's router over the rank's b·s / (t under SP) tokens; 0 dense
  std::int64_t lm_head = 0;  // 2·b·s·h·vocab / t (the vocabulary padded for t)
};

// The GEMMs of `config` (its model, micro-batch, tp, ep, sequence parallelism).
TransformerGemms transformer_gemms(const TransformerConfig& config);

}  // namespace hybridsim::workloads

// What the transformer closed form (llm_closed_forms.h) takes from the generated step itself, priced
// by the run's kernel cost (LlmMachine::kernels): the memory-bound kernels of one micro-batch on one
// TP rank (norms, the unfused attention's softmax and dropout, activations, residual adds, the
// embedding's lookup, the loss, a mixture's router top-k and permutations: the generator's own
// kernels of a one-layer step, workloads::generate_transformer), and the optimizer's update as the
// run prices it (workloads::transformer_optimizer_cost). Seconds.
//   LlmMemoryBound mb = llm_memory_bound_seconds(setting, layout, machine);  mb.layer_forward();
#pragma once
#include "analysis/plan/llm_closed_forms.h"

namespace hybridsim::analysis {

// A micro-batch's memory-bound kernels per op of the step, forward and backward (the backward with
// what recomputation runs again). A dense layer is one op (attention); a mixture's layer two, its
// attention with the router and its experts (mlp).
struct LlmMemoryBound {
  double embedding_forward = 0, embedding_backward = 0;
  double attention_forward = 0, attention_backward = 0;
  double mlp_forward = 0, mlp_backward = 0;
  double head_forward = 0, head_backward = 0;
  double layer() const { return attention_forward + attention_backward + mlp_forward + mlp_backward; }
};
// All zero on a machine without a kernel cost (a memory bandwidth of 0: GEMMs alone).
LlmMemoryBound llm_memory_bound_seconds(const LlmSetting& setting, const LlmLayout& layout,
                                        const LlmMachine& machine);

// The optimizer's seconds on stage 0's GPU updating `parameters` of its values, at the Adam cost
// the generated step of the whole model carries (its rate per GiB over all its tensors); 0 on a
// machine without a kernel cost.
double llm_optimizer_seconds(const LlmSetting& setting, const LlmLayout& layout, const LlmMachine& machine,
                             double parameters);

}  // namespace hybridsim::analysis

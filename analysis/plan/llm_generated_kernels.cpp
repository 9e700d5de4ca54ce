#include "analysis/plan/llm_generated_kernels.h"

#include <string_view>
#include <vector>

#include "workloads/memory/transformer_memory.h"

namespace hybridsim::analysis {
namespace {

bool has_kernel_cost(const LlmMachine& mc) { return mc.kernels.memory_bandwidth.bytes_per_second() > 0; }

workloads::TransformerConfig config_of(const LlmSetting& s, const LlmLayout& l) {
  workloads::TransformerConfig c{.model = s.model, .micro_batch = l.micro_batch, .tp = l.tp, .ep = l.ep};
  c.sequence_parallel = l.sequence_parallel;
  c.recompute = l.recompute;
  c.flash_attention = s.flash_attention;
  return c;
}

double memory_bound(const std::vector<workloads::Kernel>& kernels) {
  double seconds = 0;
  for (const workloads::Kernel& k : kernels)
    if (k.bound == sim::KernelBound::Memory) seconds += k.duration.to_seconds();
  return seconds;
}

}  // namespace

LlmMemoryBound llm_memory_bound_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc) {
  LlmMemoryBound r;
  if (!has_kernel_cost(mc)) return r;
  // One layer generated, as the run's step generates each (every layer's kernels are the same).
  workloads::TransformerConfig c = config_of(s, l);
  c.layers_simulated = 1;
  const workloads::TransformerStep step = workloads::generate_transformer(c, mc.kernels);
  for (const workloads::Op& op : step.profile.ops) {
    const double forward = memory_bound(op.forward), backward = memory_bound(op.backward);
    const std::string_view name = op.name;
    double* f = &r.attention_forward;
    double* b = &r.attention_backward;
    if (name == "embedding") {
      f = &r.embedding_forward;
      b = &r.embedding_backward;
    } else if (name == "lm_head") {
      f = &r.head_forward;
      b = &r.head_backward;
    } else if (name.ends_with(".experts")) {
      f = &r.mlp_forward;
      b = &r.mlp_backward;
    }
    *f += forward;
    *b += backward;
  }
  return r;
}

double llm_optimizer_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc,
                             double parameters) {
  if (!has_kernel_cost(mc)) return 0;
  const workloads::TransformerModel& m = s.model;
  // The run's profile is the whole model's (every stage's ops): its rate per GiB is over all its
  // tensors, whose gradients are its parameters per TP rank.
  const std::int64_t all = workloads::embedding_parameters_per_rank(m, l.tp) +
                           m.layers * workloads::layer_parameters_per_rank(m, l.tp, l.ep) +
                           workloads::head_parameters_per_rank(m, l.tp);
  const workloads::OptimizerCost adam = workloads::transformer_optimizer_cost(
      config_of(s, l), mc.kernels, m.layers, sim::Bytes::of(all * s.value_bytes));
  return adam.time_per_gib.to_seconds() * parameters * static_cast<double>(s.value_bytes) / (1 << 30);
}

}  // namespace hybridsim::analysis

// The transformer generator (transformer_gen.h): Megatron-LM's layer on one tensor-parallel rank, its
// kernels from transformer_kernels.h assembled into ops with their gradients and collectives.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/error.h"
#include "workloads/generators/profile_gen_detail.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/generators/transformer_kernels.h"
#include "workloads/gpu/optimizer_cost.h"

namespace hybridsim::workloads {
namespace {

using namespace transformer_kernels;

std::uint32_t add_seq_op(TransformerStep& out, Op op, const Seq& fwd, const Seq& bwd) {
  op.forward = fwd.kernels;
  op.backward = bwd.kernels;
  const std::uint32_t index = detail::add_op(out.profile, std::move(op));
  for (const Seq* seq : {&fwd, &bwd})
    for (const Issued& i : seq->syncs)
      (i.op == CollectiveOp::AllToAll ? out.ep_syncs : out.syncs)
          .push_back({index, seq == &bwd, i.after, i.op, sim::Bytes::of(i.bytes), i.overlap});
  return index;
}

// Under sequence parallelism, op `index`'s `parameters` whole on every TP rank (norms, a router).
void add_tp_gradient(TransformerStep& out, const TransformerConfig& c, const Shape& x, std::uint32_t index,
                     std::int64_t parameters) {
  if (c.sequence_parallel && c.tp > 1) out.tp_gradients.push_back({index, sim::Bytes::of(parameters * x.e)});
}

std::uint32_t add_embedding(TransformerStep& out, const TransformerConfig& c, const Shape& x,
                            const TransformerCost& cost) {
  // Vocabulary-parallel: each rank looks up its rows (zeros elsewhere), then g sums them.
  Seq f{cost, x, {}, {}}, b{cost, x, {}, {}};
  f.mem("embedding_gather", 2 * x.tokens * x.h * x.e);
  f.reduce();
  b.gather();
  b.mem("embedding_grad", 2 * x.tokens * x.h * x.e);
  Op op = detail::make_op("embedding", "embedding", {}, x.tokens * x.h * x.e / x.ns);
  detail::set_dense_gradient(op, embedding_parameters_per_rank(c.model, c.tp), x.e);
  return add_seq_op(out, std::move(op), f, b);
}

void add_head(TransformerStep& out, const TransformerConfig& c, const Shape& x, const TransformerCost& cost,
              std::uint32_t input) {
  // Final norm, the column-parallel output layer and the vocabulary-parallel cross entropy (three
  // all-reduces of b·s FP32 values: the max, the sum of exponentials, the target's logit).
  Seq f{cost, x, {}, {}}, b{cost, x, {}, {}};
  const std::int64_t logits = x.tokens * x.vocab / x.t * x.e;
  f.mem("final_norm", 2 * act(x));
  f.gather();
  f.gemm("lm_head", x.g.lm_head);
  for (const char* name : {"logits_max", "softmax_sum", "target_logit"}) {
    f.mem(name, logits);
    f.sync(CollectiveOp::AllReduce, x.tokens * 4);
  }
  f.mem("cross_entropy", 2 * logits);
  b.mem("cross_entropy_grad", 2 * logits);
  b.column_backward("lm_head", x.g.lm_head);
  b.mem("final_norm_grad", 4 * act(x));
  Op op = detail::make_op("lm_head", "lm_head", {input}, x.tokens * 4);
  detail::set_dense_gradient(op, head_parameters_per_rank(c.model, c.tp), x.e);  // the final norm whole
  add_tp_gradient(out, c, x, add_seq_op(out, std::move(op), f, b), norm_parameters(c.model));
}

// Adam (multi-tensor, with gradient clipping; FP32 master weights under 16-bit training) over this
// rank's tensors, as a time per GiB of its gradient bytes (Profile::optimizer_time).
OptimizerCost adam(const Shape& x, const TransformerCost& cost, std::int64_t layers, sim::Bytes bytes) {
  std::vector<std::int64_t> tensors = {x.vocab * x.h / x.t, x.vocab * x.h / x.t, x.h};
  for (std::int64_t l = 0; l < layers; ++l) {
    // Q/K/V, O, the MLP's matrices (each local expert's, with the router), the two norms (whole on
    // every TP rank; a LayerNorm's bias is left out of the launch count, as it was calibrated).
    tensors.push_back(x.h * (x.h + 2 * x.kv) / x.t);
    tensors.push_back(x.h * x.h / x.t);
    for (std::int64_t e = 0; e < (x.experts > 1 ? x.local : 1); ++e)
      tensors.insert(tensors.end(), 2, x.h * x.ffn / x.t);
    tensors.insert(tensors.end(), {x.h, x.h});
    for (std::int64_t e = 0; e < (x.experts > 1 ? x.local : 1) && x.swiglu; ++e)
      tensors.push_back(x.h * x.ffn / x.t);
    if (x.experts > 1) tensors.push_back(x.h * x.experts);  // the router
  }
  const OptimizerRecipe recipe{.kind = OptimizerKind::Adam, .launch = OptimizerLaunch::MultiTensor,
                               .clip = true, .zero_grad = true};
  const sim::Time t = optimizer_update_time(cost.optimizer_cost, recipe, tensors);
  const __int128 per_gib = (static_cast<__int128>(t.ps()) << 30) / bytes.count();
  return OptimizerCost{"adam", sim::Time::ps(static_cast<std::int64_t>(per_gib))};
}

void describe(TransformerStep& out, const TransformerConfig& c, const TransformerCost& cost) {
  ProfileMetadata& m = out.profile.meta;
  m.network = c.model.name;
  m.gpu = cost.gpu;
  m.precision = std::string(precision_name(cost.precision));
  m.batch_per_gpu = c.micro_batch;
  m.sequence_length = c.model.sequence;
  m.throughput_unit = "tokens";
  m.units_per_step = c.micro_batch * c.model.sequence;
  m.source = "generated by hybridsim (workloads/generators/profile_gen_transformer.cpp) from the " +
             c.model.name + " architecture, " + cost.label + ": " + cost.derivation;
  m.notes = "one tensor-parallel rank of " + std::to_string(c.tp) +
            (c.sequence_parallel ? " (sequence parallel)" : "") + "; recompute " +
            std::string(recompute_name(c.recompute)) +
            (c.flash_attention ? "; flash attention" : "; unfused attention") + "; " +
            std::to_string(out.layers_simulated) + " of " + std::to_string(c.model.layers) + " layers";
}

std::uint32_t add_dense_layer(TransformerStep& out, const TransformerConfig& c, const Shape& x,
                              const TransformerCost& cost, std::int64_t l, std::uint32_t prev) {
  Seq f{cost, x, {}, {}}, b{cost, x, {}, {}};
  layer_forward(f);
  layer_backward(b, c.recompute);
  const std::string name = "layer." + std::to_string(l);
  Op op = detail::make_op(name, name, {prev}, x.tokens * x.h * x.e / x.ns);
  detail::set_dense_gradient(op, layer_shared_parameters_per_rank(c.model, c.tp), x.e);
  const std::uint32_t index = add_seq_op(out, std::move(op), f, b);
  add_tp_gradient(out, c, x, index, layer_replicated_parameters(c.model));
  return index;
}

// Two ops: the attention with the router (dense gradients), then the experts (their own).
std::uint32_t add_moe_layer(TransformerStep& out, const TransformerConfig& c, const Shape& x,
                            const TransformerCost& cost, std::int64_t l, std::uint32_t prev) {
  const TransformerModel& m = c.model;
  Seq f{cost, x, {}, {}}, b{cost, x, {}, {}};
  attention_block_forward(f);
  router_forward(f);
  moe_attention_backward(b, c.recompute);
  const std::string name = "layer." + std::to_string(l);
  Op op = detail::make_op(name, name, {prev}, x.tokens * x.h * x.e / x.ns);
  detail::set_dense_gradient(op, layer_shared_parameters_per_rank(m, c.tp), x.e);
  const std::uint32_t first = add_seq_op(out, std::move(op), f, b);
  add_tp_gradient(out, c, x, first, layer_replicated_parameters(m));
  Seq ef{cost, x, {}, {}}, eb{cost, x, {}, {}};
  experts_forward(ef);
  experts_backward(eb, c.recompute);
  Op experts = detail::make_op(name + ".experts", name, {first}, x.tokens * x.h * x.e / x.ns);
  detail::set_dense_gradient(experts, layer_expert_parameters(m) / x.ep / x.t, x.e);
  out.expert_ops.push_back(add_seq_op(out, std::move(experts), ef, eb));
  return out.expert_ops.back();
}

}  // namespace

TransformerStep generate_transformer(const TransformerConfig& c, const TransformerCost& cost) {
  check_transformer(c.model, c.tp);
  check_experts(c.model, c.ep);
  if (c.sequence_parallel) check_sequence_parallel(c.model, c.tp);
  if (c.micro_batch < 1) throw InputError("micro-batch must be at least 1");
  if (c.layers_simulated < 0 || c.layers_simulated > c.model.layers)
    throw InputError("layers simulated must be from 1 to the model's " + std::to_string(c.model.layers));
  TransformerStep out;
  out.config = c;
  out.layers_simulated = c.layers_simulated == 0 ? c.model.layers : c.layers_simulated;
  const Shape x = shape_of(c, cost);
  std::uint32_t prev = add_embedding(out, c, x, cost);
  for (std::int64_t l = 0; l < out.layers_simulated; ++l)
    prev =
        x.experts > 1 ? add_moe_layer(out, c, x, cost, l, prev) : add_dense_layer(out, c, x, cost, l, prev);
  add_head(out, c, x, cost, prev);
  out.profile.optimizer = adam(x, cost, out.layers_simulated, out.profile.parameter_bytes());
  describe(out, c, cost);
  validate_profile(out.profile);
  return out;
}

OptimizerCost transformer_optimizer_cost(const TransformerConfig& c, const TransformerCost& cost,
                                         std::int64_t layers, sim::Bytes parameter_bytes) {
  return adam(shape_of(c, cost), cost, layers, parameter_bytes);
}

std::string_view recompute_name(Recompute r) {
  return r == Recompute::Full ? "full" : r == Recompute::Selective ? "selective" : "none";
}

Recompute recompute_by_name(std::string_view name) {
  for (auto r : {Recompute::None, Recompute::Selective, Recompute::Full})
    if (recompute_name(r) == name) return r;
  throw InputError("unknown recompute \"" + std::string(name) + "\": expected none, selective or full");
}

}  // namespace hybridsim::workloads

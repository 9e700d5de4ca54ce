// The transformer generator (transformer_gen.h): Megatron-LM's layer on one tensor-parallel rank.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/error.h"
#include "workloads/generators/profile_gen_detail.h"
#include "workloads/generators/transformer_gemms.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/gpu/optimizer_cost.h"

namespace hybridsim::workloads {
namespace {

using sim::CollectiveOp;

struct Shape {
  std::int64_t b, s, h, kv, ffn, vocab, heads, t, ns, e, tokens;
  bool sp, flash, swiglu;
  // A mixture of experts: experts, top_k, ep, experts on this GPU, tokens each of them takes, the
  // bytes of one GPU's dispatched tokens (an all-to-all's buffer). experts = 1: dense.
  std::int64_t experts = 1, top_k = 1, ep = 1, local = 1, per_expert = 0, routed_bytes = 0;
  TransformerGemms g{};  // the GEMMs' FLOPs (transformer_gemms.h, the closed form's source too)
};

Shape shape_of(const TransformerConfig& c, const TransformerCost& cost) {
  const TransformerModel& m = c.model;
  const std::int64_t t = c.tp;
  return Shape{c.micro_batch,
               m.sequence,
               m.hidden,
               m.kv_heads * (m.hidden / m.heads),
               m.ffn_hidden,
               padded_vocab(m, c.tp),
               m.heads,
               t,
               c.sequence_parallel ? t : 1,
               cost.value_bytes(),
               c.micro_batch * m.sequence,
               c.sequence_parallel,
               c.flash_attention,
               m.ffn == FfnKind::Swiglu,
               m.experts,
               m.top_k,
               c.ep,
               m.experts / c.ep,
               expert_tokens(m, c.micro_batch * m.sequence * c.ep),
               expert_tokens(m, c.micro_batch * m.sequence) * m.experts * m.hidden * cost.value_bytes(),
               transformer_gemms(c)};
}

// A TP collective issued after kernel `after` (TpSync: `overlap` kernels run beside it).
struct Issued {
  std::uint32_t after = 0;
  CollectiveOp op = CollectiveOp::AllReduce;
  std::int64_t bytes = 0;
  std::uint32_t overlap = 0;
};

// Kernels in order, and the TP collectives issued after some of them.
struct Seq {
  const TransformerCost& cost;
  const Shape& x;
  std::vector<Kernel> kernels;
  std::vector<Issued> syncs;
  void gemm(std::string name, std::int64_t flop) { kernels.push_back(cost.gemm(std::move(name), flop)); }
  void mem(std::string name, std::int64_t bytes) { kernels.push_back(cost.memory(std::move(name), bytes)); }
  // A GEMM that also moves `bytes` through HBM: the slower of its math and its traffic. The
  // unfused attention's batched GEMMs (head dimension 32 to 128) are bound by the score tensor.
  void gemm_moving(std::string name, std::int64_t flop, std::int64_t bytes) {
    Kernel k = cost.gemm(std::move(name), flop);
    k.duration = max(k.duration, cost.memory("", bytes).duration);
    kernels.push_back(std::move(k));
  }
  // After the last kernel so far; before the op's first where there is none yet (TpSync::kBeforeFirst).
  void sync(CollectiveOp op, std::int64_t bytes, std::uint32_t overlap = 0) {
    const std::uint32_t after =
        kernels.empty() ? TpSync::kBeforeFirst : static_cast<std::uint32_t>(kernels.size() - 1);
    if (x.t > 1) syncs.push_back({after, op, bytes, overlap});
  }
  // Megatron's g: an all-reduce of the activations; with sequence parallelism a reduce-scatter.
  void reduce() { sync(x.sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, x.tokens * x.h * x.e); }
  // Megatron's f with sequence parallelism: an all-gather of the sequence shards (nothing without).
  void gather() {
    if (x.sp) sync(CollectiveOp::AllGather, x.tokens * x.h * x.e);
  }
  // Expert parallelism: an all-to-all of the routed tokens on the EP group.
  void all_to_all() {
    if (x.ep > 1)
      syncs.push_back(
          {static_cast<std::uint32_t>(kernels.size() - 1), CollectiveOp::AllToAll, x.routed_bytes});
  }
  // The backward of f without sequence parallelism: an all-reduce of the input gradient.
  void reduce_input_grad() { x.sp ? sync(CollectiveOp::ReduceScatter, x.tokens * x.h * x.e) : reduce(); }
  // A column-parallel linear's backward (Megatron-LM's LinearWithGradAccumulationAndAsync
  // Communication.backward). Under sequence parallelism the forward's gathered input is not kept:
  // it is all-gathered again (s·b·h/t a rank to s·b·h) beside the input-gradient GEMM, which the
  // weight-gradient GEMM waits for. The input gradient's reduce (a reduce-scatter under sequence
  // parallelism, else the all-reduce of `allreduce_dgrad`, launched with async_op=True) is issued
  // after the input-gradient GEMM and runs beside the weight-gradient GEMM, waited for after it;
  // both on the TP stream.
  void column_backward(const std::string& name, std::int64_t flop) {
    if (x.sp) sync(CollectiveOp::AllGather, x.tokens * x.h * x.e, 1);
    gemm(name + "_dgrad", flop);
    sync(x.sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, x.tokens * x.h * x.e, 1);
    gemm(name + "_wgrad", flop);
  }
  // Full recomputation: `forward` again inside a backward, its kernels named "recompute_…" as
  // selective recomputation's are, so that a trace shows them apart (analysis/trace).
  template <typename Forward>
  void recompute(const Forward& forward) {
    const std::size_t first = kernels.size();
    forward();
    for (std::size_t i = first; i < kernels.size(); ++i) kernels[i].name.insert(0, "recompute_");
  }
};

std::int64_t score_bytes(const Shape& x) { return x.b * (x.heads / x.t) * x.s * x.s * x.e; }
std::int64_t attention_flop(const Shape& x) { return x.g.attention; }
std::int64_t act(const Shape& x) { return x.tokens * x.h * x.e / x.ns; }  // a norm's or dropout's values

void attention_scores_forward(Seq& q, std::string_view prefix) {
  const Shape& x = q.x;
  const auto named = [&](const char* n) { return std::string(prefix) + n; };
  q.gemm_moving(named("attention_scores"), attention_flop(x) / 2, score_bytes(x));
  q.mem(named("softmax"), 2 * score_bytes(x));
  q.mem(named("attention_dropout"), 2 * score_bytes(x) + score_bytes(x) / x.e);
}

void attention_forward(Seq& q) {
  const Shape& x = q.x;
  if (x.flash) {
    // One fused kernel, FLOP-bound at these sequence lengths; at least its Q, K, V and O traffic.
    q.gemm_moving("flash_attention", attention_flop(x), x.tokens * (2 * x.h + 2 * x.kv) * x.e / x.t);
    return;
  }
  // Megatron-LM 2021's unfused path: the scores GEMM writes the b·heads·s² scores, the fused
  // scale-mask-softmax reads them and writes the probabilities, dropout reads those and writes the
  // dropped probabilities and a byte mask, the context GEMM reads them back.
  attention_scores_forward(q, "");
  q.gemm_moving("attention_context", attention_flop(x) / 2, score_bytes(x));
}

void attention_block_forward(Seq& q) {
  const Shape& x = q.x;
  q.mem("input_norm", 2 * act(x));
  q.gather();
  q.gemm("qkv", x.g.qkv);
  attention_forward(q);
  q.gemm("attention_output", x.g.attention_output);
  q.reduce();
  q.mem("dropout_residual", 3 * act(x));
  q.mem("post_attention_norm", 2 * act(x));
}

void mlp_forward(Seq& q) {
  const Shape& x = q.x;
  q.gather();
  q.gemm("mlp_in", x.g.mlp_in);
  q.mem(x.swiglu ? "swiglu" : "gelu", (x.swiglu ? 3 : 2) * x.tokens * x.ffn * x.e / x.t);
  q.gemm("mlp_out", x.g.mlp_out);
  q.reduce();
  q.mem("dropout_residual", 3 * act(x));
}

void layer_forward(Seq& q) {
  attention_block_forward(q);
  mlp_forward(q);
}

void attention_backward(Seq& q, Recompute recompute) {
  const Shape& x = q.x;
  if (x.flash) {
    // FlashAttention's backward recomputes the scores: 5 GEMMs of the forward's 2 (2.5x).
    q.gemm("flash_attention_grad", attention_flop(x) * 5 / 2);
    return;
  }
  if (recompute == Recompute::Selective) attention_scores_forward(q, "recompute_");
  // dV and dP read the dropped probabilities and write their gradient; dropout's and softmax's
  // backward read what they stored; dQ and dK read the score gradient each.
  q.gemm_moving("attention_context_grad", attention_flop(x), 2 * score_bytes(x));
  q.mem("attention_dropout_grad", 2 * score_bytes(x) + score_bytes(x) / x.e);
  q.mem("softmax_grad", 3 * score_bytes(x));
  q.gemm_moving("attention_scores_grad", attention_flop(x), 2 * score_bytes(x));
}

void mlp_backward(Seq& q) {
  const Shape& x = q.x;
  const std::int64_t mlp_in = x.g.mlp_in, mlp_out = x.g.mlp_out;
  q.mem("dropout_residual_grad", 3 * act(x));
  q.gather();  // the backward of the reduce-scatter
  q.gemm("mlp_out_dgrad", mlp_out);
  q.gemm("mlp_out_wgrad", mlp_out);
  q.mem(x.swiglu ? "swiglu_grad" : "gelu_grad", (x.swiglu ? 5 : 3) * x.tokens * x.ffn * x.e / x.t);
  q.column_backward("mlp_in", mlp_in);
}

void attention_block_backward(Seq& q, Recompute recompute) {
  const Shape& x = q.x;
  q.mem("post_attention_norm_grad", 4 * act(x));
  q.mem("dropout_residual_grad", 3 * act(x));
  q.gather();
  const std::int64_t out = x.g.attention_output;
  q.gemm("attention_output_dgrad", out);
  q.gemm("attention_output_wgrad", out);
  attention_backward(q, recompute);
  const std::int64_t qkv = x.g.qkv;
  q.column_backward("qkv", qkv);
  q.mem("input_norm_grad", 4 * act(x));
}

void layer_backward(Seq& q, Recompute recompute) {
  if (recompute == Recompute::Full) q.recompute([&] { layer_forward(q); });  // its collectives too
  mlp_backward(q);
  attention_block_backward(q, recompute);
}

// A mixture of experts' router: logits of the rank's tokens over the experts, then top-k of their
// softmax (FP32 logits read and written, k indices and weights per token).
void router_forward(Seq& q, std::string_view suffix = "") {
  const Shape& x = q.x;
  const std::int64_t tokens = x.tokens / x.ns;
  q.gemm("router" + std::string(suffix), x.g.router);
  q.mem("router_topk" + std::string(suffix), 2 * tokens * x.experts * 4 + tokens * x.top_k * 8);
}

void router_backward(Seq& q) {
  const Shape& x = q.x;
  const std::int64_t tokens = x.tokens / x.ns;
  q.mem("router_topk_grad", 2 * tokens * x.experts * 4 + tokens * x.top_k * 8);
  q.gemm("router_dgrad", x.g.router);
  q.gemm("router_wgrad", x.g.router);
}

// The experts: tokens permuted into expert order and dispatched to their experts' GPUs, each local
// expert's MLP on its tokens, the results sent back and summed with the router's weights.
void experts_forward(Seq& q) {
  const Shape& x = q.x;
  q.mem("permute", 2 * x.routed_bytes);
  q.gather();
  q.all_to_all();  // dispatch
  for (std::int64_t i = 0; i < x.local; ++i) {
    const std::string e = "expert." + std::to_string(i) + ".";
    q.gemm(e + "mlp_in", x.g.mlp_in);
    q.mem(e + (x.swiglu ? "swiglu" : "gelu"), (x.swiglu ? 3 : 2) * x.per_expert * x.ffn * x.e / x.t);
    q.gemm(e + "mlp_out", x.g.mlp_out);
  }
  q.all_to_all();  // combine
  q.mem("unpermute_combine", 2 * x.routed_bytes + act(x));
  q.reduce();
  q.mem("dropout_residual", 3 * act(x));
}

void experts_backward(Seq& q, Recompute recompute) {
  const Shape& x = q.x;
  if (recompute == Recompute::Full) q.recompute([&] { experts_forward(q); });
  q.mem("dropout_residual_grad", 3 * act(x));
  q.gather();
  q.mem("unpermute_combine_grad", 2 * x.routed_bytes + act(x));
  q.all_to_all();  // the combine's backward
  for (std::int64_t i = 0; i < x.local; ++i) {
    const std::string e = "expert." + std::to_string(i) + ".";
    const std::int64_t in = x.g.mlp_in, out = x.g.mlp_out;
    q.gemm(e + "mlp_out_dgrad", out);
    q.gemm(e + "mlp_out_wgrad", out);
    q.mem(e + (x.swiglu ? "swiglu_grad" : "gelu_grad"),
          (x.swiglu ? 5 : 3) * x.per_expert * x.ffn * x.e / x.t);
    q.gemm(e + "mlp_in_dgrad", in);
    q.gemm(e + "mlp_in_wgrad", in);
  }
  q.all_to_all();  // the dispatch's backward
  q.mem("permute_grad", 2 * x.routed_bytes);
  q.reduce_input_grad();
}

void moe_attention_backward(Seq& q, Recompute recompute) {
  if (recompute == Recompute::Full)
    q.recompute([&] {
      attention_block_forward(q);
      router_forward(q);
    });
  router_backward(q);
  attention_block_backward(q, recompute);
}

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

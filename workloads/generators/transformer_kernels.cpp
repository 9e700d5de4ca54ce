// The kernels of a transformer layer (transformer_kernels.h): each priced by transformer_cost.h from
// the layer's shape, in Megatron-LM's order, with the collectives between them.
#include "workloads/generators/transformer_kernels.h"

#include <string>
#include <string_view>

namespace hybridsim::workloads::transformer_kernels {
namespace {

std::int64_t score_bytes(const Shape& x) { return x.b * (x.heads / x.t) * x.s * x.s * x.e; }
std::int64_t attention_flop(const Shape& x) { return x.g.attention; }

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

void mlp_forward(Seq& q) {
  const Shape& x = q.x;
  q.gather();
  q.gemm("mlp_in", x.g.mlp_in);
  q.mem(x.swiglu ? "swiglu" : "gelu", (x.swiglu ? 3 : 2) * x.tokens * x.ffn * x.e / x.t);
  q.gemm("mlp_out", x.g.mlp_out);
  q.reduce();
  q.mem("dropout_residual", 3 * act(x));
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

void router_backward(Seq& q) {
  const Shape& x = q.x;
  const std::int64_t tokens = x.tokens / x.ns;
  q.mem("router_topk_grad", 2 * tokens * x.experts * 4 + tokens * x.top_k * 8);
  q.gemm("router_dgrad", x.g.router);
  q.gemm("router_wgrad", x.g.router);
}

}  // namespace

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

std::int64_t act(const Shape& x) { return x.tokens * x.h * x.e / x.ns; }

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

void layer_forward(Seq& q) {
  attention_block_forward(q);
  mlp_forward(q);
}

void layer_backward(Seq& q, Recompute recompute) {
  if (recompute == Recompute::Full) q.recompute([&] { layer_forward(q); });  // its collectives too
  mlp_backward(q);
  attention_block_backward(q, recompute);
}

void router_forward(Seq& q, std::string_view suffix) {
  const Shape& x = q.x;
  const std::int64_t tokens = x.tokens / x.ns;
  q.gemm("router" + std::string(suffix), x.g.router);
  q.mem("router_topk" + std::string(suffix), 2 * tokens * x.experts * 4 + tokens * x.top_k * 8);
}

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

}  // namespace hybridsim::workloads::transformer_kernels

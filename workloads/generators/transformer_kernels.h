// The kernels of a transformer layer on one tensor-parallel rank, in order, with the TP (and EP)
// collectives issued between them: what generate_transformer (transformer_gen.h) assembles into the
// profile's ops. A file of its own: pricing each kernel of Megatron-LM's layer (attention fused or
// not, the MLP, a mixture of experts' router and experts, recomputation) is apart from assembling the
// ops, their gradients and the optimizer (profile_gen_transformer.cpp).
//   const Shape x = shape_of(config, cost);  Seq f{cost, x, {}, {}};
//   layer_forward(f);  // f.kernels: input_norm, qkv, ...; f.syncs: its TP collectives
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/collective.h"
#include "workloads/generators/transformer_gemms.h"
#include "workloads/generators/transformer_gen.h"

namespace hybridsim::workloads::transformer_kernels {

using sim::CollectiveOp;

struct Shape {
  std::int64_t b, s, h, kv, ffn, vocab, heads, t, ns, e, tokens;
  bool sp, flash, swiglu;
  // A mixture of experts: experts, top_k, ep, experts on this GPU, tokens each of them takes, the
  // bytes of one GPU's dispatched tokens (an all-to-all's buffer). experts = 1: dense.
  std::int64_t experts = 1, top_k = 1, ep = 1, local = 1, per_expert = 0, routed_bytes = 0;
  TransformerGemms g{};  // the GEMMs' FLOPs (transformer_gemms.h, the closed form's source too)
};

Shape shape_of(const TransformerConfig& c, const TransformerCost& cost);

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

// A norm's or dropout's values.
std::int64_t act(const Shape& x);

// The forward and backward of a dense layer (attention block, then MLP); `recompute` as configured.
void attention_block_forward(Seq& q);
void layer_forward(Seq& q);
void layer_backward(Seq& q, Recompute recompute);

// A mixture of experts' router: logits of the rank's tokens over the experts, then top-k of their
// softmax (FP32 logits read and written, k indices and weights per token).
void router_forward(Seq& q, std::string_view suffix = "");
// The experts: tokens permuted into expert order and dispatched to their experts' GPUs, each local
// expert's MLP on its tokens, the results sent back and summed with the router's weights.
void experts_forward(Seq& q);
void experts_backward(Seq& q, Recompute recompute);
// A mixture of experts' layer's first op backward: the router's, then the attention block's.
void moe_attention_backward(Seq& q, Recompute recompute);

}  // namespace hybridsim::workloads::transformer_kernels

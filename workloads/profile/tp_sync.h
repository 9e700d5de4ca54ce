// A tensor-parallel collective of one rank between two of its kernels (the transformer generator,
// workloads/generators/transformer_gen.h, emits them; tensor_parallel.h puts them in a program), and
// the gradients that sequence parallelism all-reduces over the TP group before the optimizer.
#pragma once
#include <cstdint>

#include "sim/collective.h"
#include "sim/units.h"

namespace hybridsim::workloads {

// Issued right after kernel `after` of op `op`'s forward (or backward) kernels (kBeforeFirst: before
// its first, as the embedding's backward gathers its output gradient first). overlap 0: on the
// compute stream, nothing runs on the rank until it is done. overlap n: on the rank's TP stream
// (after the TP collectives issued before it), the compute stream running on and waiting for it
// after its next n kernels of the op: Megatron-LM's column-parallel backward (layers.py,
// LinearWithGradAccumulationAndAsyncCommunication.backward) reduces its input gradient beside the
// weight-gradient GEMM (an all-reduce, or under sequence parallelism a reduce-scatter, after an
// all-gather of its input beside the input-gradient GEMM).
struct TpSync {
  static constexpr std::uint32_t kBeforeFirst = UINT32_MAX;
  std::uint32_t op = 0;
  bool backward = false;
  std::uint32_t after = 0;
  sim::CollectiveOp kind = sim::CollectiveOp::AllReduce;
  sim::Bytes bytes;  // the whole buffer (b·s·h values): all-reduced, or scattered/gathered in t parts
  std::uint32_t overlap = 0;
  bool operator==(const TpSync&) const = default;
};

// An op's gradients that every TP rank holds whole (the norms, a mixture's router) but, under
// sequence parallelism, computes from its s/t of the tokens: tensor_parallel.h sums a stage's ops'
// into one all-reduce over its TP group a step, after the data-parallel gradient collectives and
// before the optimizer, on the compute stream (Megatron-LM's finalize_model_grads,
// _allreduce_layernorm_grads: one coalesced buffer).
struct TpGradient {
  std::uint32_t op = 0;
  sim::Bytes bytes;  // in the gradients' dtype
  bool operator==(const TpGradient&) const = default;
};

}  // namespace hybridsim::workloads

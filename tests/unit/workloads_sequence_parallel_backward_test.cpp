// Sequence parallelism's backward of a column-parallel linear, as Megatron-LM runs it
// (megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication.backward):
// the layer's input all-gathered again (the forward's gathered copy is not kept), beside the
// input-gradient GEMM; the weight-gradient GEMM waits for it; the input gradient's reduce-scatter
// beside the weight-gradient GEMM, waited for before the next kernel. Both run on each rank's
// "tensor-parallel" stream. Counted by hand for a small GPT on one DGX H100 (column_backward.h;
// without sequence parallelism: workloads_tensor_parallel_backward_test.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "column_backward.h"
#include "workloads/memory/transformer_memory.h"

using namespace hybridsim;
using namespace hybridsim::workloads;
using namespace hybridsim::testing::column_backward;

TEST_CASE("sequence parallel backward: each column-parallel linear's input all-gathered again, s.b.h") {
  for (const int tp : {2, 4}) {
    CAPTURE(tp);
    const TransformerStep step = generate(tp, true);
    const StepProgram p = analysis::build_program(setup_of(step, 2, tp));
    // Backward order: the LM head, then layer 1's MLP and QKV, then layer 0's: 5 column-parallel
    // linears, each wait, all-gather, record, wait, reduce-scatter, record: 30 tasks a GPU.
    for_each_side_linear(p, 2 * tp, 6, [&](const sim::TaskList& tasks, std::size_t i, int g, const char* op) {
      check_side_collective(step, p, tasks, i, g, tp, sim::CollectiveOp::AllGather, op);
      check_side_collective(step, p, tasks, i + 3, g, tp, sim::CollectiveOp::ReduceScatter, op);
    });
    // Each TP group: 15 all-gathers a step (forward: 2 a layer and the head's 1; backward: the
    // embedding's 1, 2 of the gradients and 2 of the inputs a layer, the head's 1). Main had 9: the
    // embedding's, issued before its backward's first kernel, never ran.
    int gathers = 0;
    for (const CollectiveSpec& c : p.collectives)
      gathers += c.role == CollectiveRole::TensorParallel && c.op == sim::CollectiveOp::AllGather ? 1 : 0;
    CHECK(gathers == 2 * 15);
  }
}

TEST_CASE("sequence parallel backward: the input gradient GEMM beside the gather, the weight's after it") {
  const TransformerStep step = generate(2, true);
  const StepProgram p = analysis::build_program(setup_of(step, 1, 2));
  for_each_rank_of_tp2(p, [&](const sim::TaskList& compute, const sim::TaskList& side,
                              const SideEvents& events) {
    int seen = 0;
    for (std::size_t i = 1; i + 4 < compute.size(); ++i) {
      const std::string name = kernel_name(step.profile, p, compute[i]);
      if (name.size() < 6 || name.substr(name.size() - 6) != "_dgrad" || name == "mlp_out_dgrad" ||
          name == "attention_output_dgrad")
        continue;
      CAPTURE(name);
      ++seen;
      // Record (the gather's issue) · dgrad · wait (the gather's end) · record (the reduce-scatter's
      // issue) · wgrad · wait (the reduce-scatter's end).
      REQUIRE(compute[i - 1].kind == sim::TaskKind::Record);
      REQUIRE(compute[i + 1].kind == sim::TaskKind::Wait);
      REQUIRE(compute[i + 2].kind == sim::TaskKind::Record);
      CHECK(kernel_name(step.profile, p, compute[i + 3]) == name.substr(0, name.size() - 6) + "_wgrad");
      REQUIRE(compute[i + 4].kind == sim::TaskKind::Wait);
      const std::size_t gather = events.waited.at(compute[i - 1].id) + 1;
      CHECK(p.collectives[side[gather].id].op == sim::CollectiveOp::AllGather);
      CHECK(events.recorded.at(compute[i + 1].id) == gather + 1);
      const std::size_t scatter = events.waited.at(compute[i + 2].id) + 1;
      CHECK(p.collectives[side[scatter].id].op == sim::CollectiveOp::ReduceScatter);
      CHECK(events.recorded.at(compute[i + 4].id) == scatter + 1);
    }
    CHECK(seen == 5);  // lm_head, and mlp_in and qkv of each layer
  });
}

TEST_CASE("sequence parallel backward: the step runs the gather beside dgrad and the scatter beside wgrad") {
  const TimedRun run(true);
  const Times& times = run.times;
  // Layer 0's QKV, the last column-parallel linear of the backward: the TP stream's last two.
  REQUIRE(times.side.size() == 10);
  const auto [gather_start, gather_end] = times.side[8];
  const auto [scatter_start, scatter_end] = times.side[9];
  const auto [dgrad_start, dgrad_end] = times.kernel.at("qkv_dgrad");
  const auto [wgrad_start, wgrad_end] = times.kernel.at("qkv_wgrad");
  // The gather starts with dgrad (no later than it ends); wgrad starts after both.
  CHECK(gather_start <= dgrad_start);
  CHECK(gather_start < dgrad_end);
  CHECK(wgrad_start >= dgrad_end);
  CHECK(wgrad_start >= gather_end);
  // The reduce-scatter starts once dgrad and the gather are done, beside wgrad.
  CHECK(scatter_start >= dgrad_end);
  CHECK(scatter_start >= gather_end);
  CHECK(scatter_start < wgrad_end);
  // The next kernel (the input norm's backward) waits for the reduce-scatter.
  CHECK(times.kernel.at("input_norm_grad").first >= scatter_end);
}

TEST_CASE("sequence parallel backward: the memory model holds the gathered input and the norms' buffer") {
  const TransformerMemoryInput in{.model = small_gpt(), .tp = 2, .sequence_parallel = true};
  // The gathered input: s·b·h BF16 values, 2,097,152 B. The norms' gradients: 2 layers × 2
  // LayerNorms × 2,048 + the final norm's 2,048 = 10,240 parameters, 20,480 B, after the backward
  // has freed the activations: only where those are fewer.
  CHECK(with_sequence_parallel_buffers(in, 1'000'000, 2, true) == kBuffer + 1'000'000);
  CHECK(with_sequence_parallel_buffers(in, 1'000, 2, true) == kBuffer + 20'480);
  CHECK(with_sequence_parallel_buffers(in, 1'000, 2, false) == kBuffer + 16'384);  // no head: no final norm
  TransformerMemoryInput off = in;
  off.sequence_parallel = false;
  CHECK(with_sequence_parallel_buffers(off, 1'000, 2, true) == 1'000);
  // The whole model: Korthikanti's 34·s·b·h/t a layer (flash attention, nothing recomputed), the FP32
  // logits 4·s·b·V/t (V padded to a multiple of 128·tp: 50,432), and the gathered input.
  const std::int64_t sbh = 1024 * 1024;
  CHECK(transformer_memory(in).activations.count() == 2 * 34 * sbh / 2 + 4 * 1024 * 50'432 / 2 + kBuffer);
}

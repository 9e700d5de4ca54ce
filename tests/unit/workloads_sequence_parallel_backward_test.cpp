// Sequence parallelism's backward of a column-parallel linear, as Megatron-LM runs it
// (megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication.backward):
// the layer's input all-gathered again (the forward's gathered copy is not kept), beside the
// input-gradient GEMM; the weight-gradient GEMM waits for it; the input gradient's reduce-scatter
// beside the weight-gradient GEMM, waited for before the next kernel. Both run on each rank's
// "tensor-parallel" stream. Counted by hand for a small GPT on one DGX H100.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/step/step_runner.h"
#include "transformer_step_run.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/gpu/gpu.h"
#include "workloads/memory/transformer_memory.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

namespace {

// 2 layers, hidden 1,024, 16 heads, GELU ffn 4,096, GPT's vocabulary, sequence 1,024.
TransformerModel small_gpt() { return {"small-gpt", 2, 1024, 16, 16, 4096, FfnKind::Gelu, 50'257, 1024}; }

// One all-gather's (or reduce-scatter's) whole buffer: s·b·h BF16 values, s·b·h/t from each rank.
constexpr std::int64_t kBuffer = 1024 * 1 * 1024 * 2;  // 2,097,152 B

TransformerStep generate(int tp, bool sp) {
  return generate_transformer({.model = small_gpt(), .micro_batch = 1, .tp = tp, .sequence_parallel = sp},
                              transformer_cost(gpu_by_key("h100"), Precision::Bf16));
}

analysis::StepSetup setup_of(const TransformerStep& step, int dp, int tp) {
  analysis::StepSetup s;
  s.profile = &step.profile;
  s.topology = &testing::one_dgx_h100();
  s.placement = place_all_on_first(step.profile, 1);
  s.mapping = default_mapping(testing::one_dgx_h100(), dp * tp, 1);
  s.step.tp = tp;
  s.step.tp_syncs = step.syncs;
  s.step.tp_gradients = step.tp_gradients;
  return s;
}

const sim::StreamProgram* stream_named(const StepProgram& p, int g, const std::string& name) {
  for (const sim::StreamProgram& s : p.gpus[static_cast<std::size_t>(g)].streams)
    if (s.name == name) return &s;
  return nullptr;
}

std::string kernel_name(const TransformerStep& step, const StepProgram& p, const sim::Task& t) {
  if (t.kind != sim::TaskKind::Kernel || t.id >= p.labels.size()) return "";
  const KernelLabel& l = p.labels[t.id];
  const Op& op = step.profile.ops[l.op];
  if (l.phase == Phase::Forward) return op.forward[l.kernel].name;
  return l.phase == Phase::Backward ? op.backward[l.kernel].name : "";
}

}  // namespace

TEST_CASE("sequence parallel backward: each column-parallel linear's input all-gathered again, s.b.h") {
  for (const int tp : {2, 4}) {
    CAPTURE(tp);
    const TransformerStep step = generate(tp, true);
    const StepProgram p = analysis::build_program(setup_of(step, 2, tp));
    for (int g = 0; g < 2 * tp; ++g) {
      CAPTURE(g);
      const sim::StreamProgram* tp_stream = stream_named(p, g, "tensor-parallel");
      REQUIRE(tp_stream != nullptr);
      // Backward order: the LM head, then layer 1's MLP and QKV, then layer 0's: 5 column-parallel
      // linears, each wait, all-gather, record, wait, reduce-scatter, record: 30 tasks.
      const sim::TaskList& tasks = tp_stream->tasks;
      REQUIRE(tasks.size() == 30);
      const char* ops[] = {"lm_head", "layer.1", "layer.1", "layer.0", "layer.0"};
      for (std::size_t j = 0; j < 5; ++j) {
        CAPTURE(j);
        for (std::size_t c = 0; c < 2; ++c) {
          const std::size_t i = 6 * j + 3 * c;
          CHECK(tasks[i].kind == sim::TaskKind::Wait);
          CHECK(tasks[i + 2].kind == sim::TaskKind::Record);
          REQUIRE(tasks[i + 1].kind == sim::TaskKind::Collective);
          const CollectiveSpec& spec = p.collectives[tasks[i + 1].id];
          CHECK(spec.role == CollectiveRole::TensorParallel);
          CHECK(spec.op == (c == 0 ? sim::CollectiveOp::AllGather : sim::CollectiveOp::ReduceScatter));
          CHECK(spec.size.count() == kBuffer);
          CHECK(spec.op_index == step.profile.op_by_name(ops[j]));
          // Its TP group: tp consecutive GPUs, this one at its rank.
          REQUIRE(spec.members.size() == static_cast<std::size_t>(tp));
          CHECK(spec.members[0] == g / tp * tp);
          CHECK(tasks[i + 1].rank == static_cast<std::uint32_t>(g % tp));
        }
      }
    }
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
  for (int g = 0; g < 2; ++g) {
    CAPTURE(g);
    const sim::TaskList& compute = p.gpus[static_cast<std::size_t>(g)].streams[0].tasks;
    const sim::TaskList& side = stream_named(p, g, "tensor-parallel")->tasks;
    // Which TP-stream task each event is recorded or waited for at.
    std::map<std::uint32_t, std::size_t> recorded, waited;
    for (std::size_t i = 0; i < side.size(); ++i) {
      if (side[i].kind == sim::TaskKind::Record) recorded[side[i].id] = i;
      if (side[i].kind == sim::TaskKind::Wait) waited[side[i].id] = i;
    }
    int seen = 0;
    for (std::size_t i = 1; i + 4 < compute.size(); ++i) {
      const std::string name = kernel_name(step, p, compute[i]);
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
      CHECK(kernel_name(step, p, compute[i + 3]) == name.substr(0, name.size() - 6) + "_wgrad");
      REQUIRE(compute[i + 4].kind == sim::TaskKind::Wait);
      const std::size_t gather = waited.at(compute[i - 1].id) + 1;
      CHECK(p.collectives[side[gather].id].op == sim::CollectiveOp::AllGather);
      CHECK(recorded.at(compute[i + 1].id) == gather + 1);
      const std::size_t scatter = waited.at(compute[i + 2].id) + 1;
      CHECK(p.collectives[side[scatter].id].op == sim::CollectiveOp::ReduceScatter);
      CHECK(recorded.at(compute[i + 4].id) == scatter + 1);
    }
    CHECK(seen == 5);  // lm_head, and mlp_in and qkv of each layer
  }
}

TEST_CASE("sequence parallel backward: without it, the all-reduce after both GEMMs on the compute stream") {
  for (const int tp : {2, 4}) {
    CAPTURE(tp);
    const TransformerStep step = generate(tp, false);
    const StepProgram p = analysis::build_program(setup_of(step, 1, tp));
    CHECK(stream_named(p, 0, "tensor-parallel") == nullptr);
    for (const TpSync& s : step.syncs) CHECK(s.overlap == 0);
    const sim::TaskList& compute = p.gpus[0].streams[0].tasks;
    int seen = 0;
    for (std::size_t i = 0; i + 1 < compute.size(); ++i) {
      const std::string name = kernel_name(step, p, compute[i]);
      if (name != "qkv_wgrad" && name != "mlp_in_wgrad" && name != "lm_head_wgrad") continue;
      ++seen;
      REQUIRE(compute[i + 1].kind == sim::TaskKind::Collective);
      CHECK(p.collectives[compute[i + 1].id].op == sim::CollectiveOp::AllReduce);
      CHECK(p.collectives[compute[i + 1].id].size.count() == kBuffer);
    }
    CHECK(seen == 5);
  }
}

namespace {

// When GPU 0 ran each kernel (by name, the last time) and each TP-stream collective (in order).
class Times final : public sim::StreamObserver {
 public:
  Times(const TransformerStep& step, const StepProgram& p) : step_(step), p_(p) {}
  void on_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                 sim::Time end) override {
    if (gpu == 0) kernel[kernel_name(step_, p_, p_.gpus[0].streams[stream].tasks[task])] = {start, end};
  }
  void on_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t, sim::Time start,
                     sim::Time end) override {
    if (gpu == 0 && p_.gpus[0].streams[stream].name == "tensor-parallel") side.push_back({start, end});
  }
  std::map<std::string, std::pair<sim::Time, sim::Time>> kernel;
  std::vector<std::pair<sim::Time, sim::Time>> side;

 private:
  const TransformerStep& step_;
  const StepProgram& p_;
};

}  // namespace

TEST_CASE("sequence parallel backward: the step runs the gather beside dgrad and the scatter beside wgrad") {
  const TransformerStep step = generate(2, true);
  const analysis::StepSetup s = setup_of(step, 1, 2);
  const StepProgram p = analysis::build_program(s);
  Times times(step, p);
  analysis::simulate_program(s, p, {.stream = &times});
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

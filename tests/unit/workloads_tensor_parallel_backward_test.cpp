// Tensor parallelism's backward of a column-parallel linear without sequence parallelism, as
// Megatron-LM runs it (megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsync
// Communication.backward with allreduce_dgrad, formerly async_tensor_model_parallel_allreduce): the
// input gradient's all-reduce launched (async_op=True) right after the input-gradient GEMM, the
// weight-gradient GEMM beside it, the next op waiting for it. It runs on each rank's
// "tensor-parallel" stream; the compute stream records where it is issued and waits for its end
// after the weight-gradient GEMM. Counted by hand for a small GPT on one DGX H100
// (column_backward.h), and timed on the shipped Llama 3 8B tp 8 scenario without sequence parallelism.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "column_backward.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"

using namespace hybridsim;
using namespace hybridsim::workloads;
using namespace hybridsim::testing::column_backward;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A column-parallel linear's input-gradient GEMM (not a row-parallel one's, whose input gradient
// needs no reduce: its forward's all-reduce is of its output).
bool is_column_dgrad(const std::string& name) {
  return ends_with(name, "_dgrad") && name != "mlp_out_dgrad" && name != "attention_output_dgrad" &&
         name != "router_dgrad";
}

}  // namespace

TEST_CASE(
    "tensor parallel backward: each column-parallel linear's input gradient all-reduced on the TP stream") {
  for (const int tp : {2, 4}) {
    CAPTURE(tp);
    const TransformerStep step = generate(tp, false);
    // One overlapped sync per column-parallel linear (2 a layer and the head's), issued after its
    // dgrad and waited for one kernel later; the forward's and the loss's all-reduces stay blocking.
    int overlapped = 0;
    for (const TpSync& s : step.syncs) {
      if (s.overlap == 0) continue;
      ++overlapped;
      CHECK(s.overlap == 1);
      CHECK(s.backward);
      CHECK(s.kind == sim::CollectiveOp::AllReduce);
      CHECK(s.bytes.count() == kBuffer);
      CHECK(is_column_dgrad(step.profile.ops[s.op].backward[s.after].name));
    }
    CHECK(overlapped == 5);
    const StepProgram p = analysis::build_program(setup_of(step, 2, tp));
    // Each GPU's TP stream: for each column-parallel linear a wait, its all-reduce of s·b·h, a
    // record: 15 tasks.
    for_each_side_linear(p, 2 * tp, 3, [&](const sim::TaskList& tasks, std::size_t i, int g, const char* op) {
      check_side_collective(step, p, tasks, i, g, tp, sim::CollectiveOp::AllReduce, op);
    });
  }
}

TEST_CASE("tensor parallel backward: dgrad, the all-reduce's issue, wgrad beside it, then the wait") {
  const TransformerStep step = generate(2, false);
  const StepProgram p = analysis::build_program(setup_of(step, 1, 2));
  for_each_rank_of_tp2(
      p, [&](const sim::TaskList& compute, const sim::TaskList& side, const SideEvents& events) {
        int seen = 0;
        for (std::size_t i = 0; i + 4 < compute.size(); ++i) {
          const std::string name = kernel_name(step.profile, p, compute[i]);
          if (!is_column_dgrad(name)) continue;
          CAPTURE(name);
          ++seen;
          // dgrad · record (the all-reduce's issue) · wgrad · wait (its end) · the next kernel.
          REQUIRE(compute[i + 1].kind == sim::TaskKind::Record);
          CHECK(kernel_name(step.profile, p, compute[i + 2]) == name.substr(0, name.size() - 6) + "_wgrad");
          REQUIRE(compute[i + 3].kind == sim::TaskKind::Wait);
          CHECK(compute[i + 4].kind == sim::TaskKind::Kernel);
          const std::size_t reduce = events.waited.at(compute[i + 1].id) + 1;
          CHECK(p.collectives[side[reduce].id].op == sim::CollectiveOp::AllReduce);
          CHECK(events.recorded.at(compute[i + 3].id) == reduce + 1);
        }
        CHECK(seen == 5);
        // No all-reduce of s·b·h is left on the compute stream after a weight-gradient GEMM.
        for (std::size_t i = 0; i + 1 < compute.size(); ++i)
          if (ends_with(kernel_name(step.profile, p, compute[i]), "_wgrad"))
            CHECK(compute[i + 1].kind != sim::TaskKind::Collective);
      });
}

TEST_CASE("tensor parallel backward: the step runs the input gradient's all-reduce beside wgrad") {
  const TimedRun run(false);
  const Times& times = run.times;
  // Layer 0's QKV, the last column-parallel linear of the backward: the TP stream's last.
  REQUIRE(times.side.size() == 5);
  const auto [reduce_start, reduce_end] = times.side[4];
  const auto [dgrad_start, dgrad_end] = times.kernel.at("qkv_dgrad");
  const auto [wgrad_start, wgrad_end] = times.kernel.at("qkv_wgrad");
  CHECK(reduce_start >= dgrad_end);
  CHECK(wgrad_start >= dgrad_end);
  CHECK(reduce_start < wgrad_end);  // beside it
  CHECK(wgrad_start < reduce_end);
  // The next kernel (the input norm's backward) waits for both.
  CHECK(times.kernel.at("input_norm_grad").first >= reduce_end);
  CHECK(times.kernel.at("input_norm_grad").first >= wgrad_end);
}

namespace {

// The shipped Llama 3 8B tp 8 scenario without sequence parallelism, 2 layers.
scenarios::ResolvedScenario llama_tp8(bool contention) {
  const std::vector<std::string> sets = {
      "parallelism.sequence_parallel=false", "workload.model.layers_simulated=2",
      std::string("communication.compute_contention=") + (contention ? "on" : "off")};
  return scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/llama3-8b-dgx-h100-tp8.yaml", sets));
}

// The same syncs run blocking, as before the overlap: each overlapped one issued on the compute
// stream after the kernel it was waited for after.
std::vector<TpSync> blocking(std::vector<TpSync> syncs) {
  for (TpSync& s : syncs)
    if (s.overlap > 0) {
      s.after += s.overlap;
      s.overlap = 0;
    }
  return syncs;
}

struct Timed {
  sim::Time step;
  sim::Time overlappable;  // Σ min(wgrad, its all-reduce) over the column-parallel linears
};

// The step overlapped, and what its overlap can hide: each TP-stream all-reduce against the
// weight-gradient GEMM beside it (GPU 0's, in order).
Timed overlapped_step(const analysis::StepSetup& setup) {
  const StepProgram p = analysis::build_program(setup);
  Times times(*setup.profile, p);
  const analysis::StepResult r = analysis::simulate_program(setup, p, {.stream = &times});
  std::vector<sim::Time> wgrad;
  for (std::size_t i = 0; i + 1 < times.order.size(); ++i)
    if (is_column_dgrad(times.order[i].first)) wgrad.push_back(times.order[i + 1].second);
  REQUIRE(wgrad.size() == times.side.size());
  sim::Time hidden;
  for (std::size_t k = 0; k < wgrad.size(); ++k)
    hidden += std::min(wgrad[k], times.side[k].second - times.side[k].first);
  return {r.step_time, hidden};
}

}  // namespace

TEST_CASE("tensor parallel backward: the step's exposed all-reduces shrink by what wgrad hides") {
  // Without contention a kernel beside a collective takes its own time and the all-reduce its own:
  // a column-parallel linear's dgrad, wgrad (W) and all-reduce (A) took W + A after dgrad blocking
  // and take max(W, A) beside each other, so the step is Σ min(W, A) shorter, over the 5 linears
  // (each layer's QKV and MLP-in, the LM head's), the rest of the step the same.
  const scenarios::ResolvedScenario plain = llama_tp8(false);
  analysis::StepSetup setup = analysis::step_setup(plain);
  const Timed overlapped = overlapped_step(setup);
  setup.step.tp_syncs = blocking(setup.step.tp_syncs);
  const sim::Time before = analysis::simulate_step(setup).step_time;
  MESSAGE("blocking ", before.ps(), " ps, overlapped ", overlapped.step.ps(), " ps, hidden ",
          overlapped.overlappable.ps(), " ps");
  REQUIRE(overlapped.overlappable > sim::Time::zero());
  CHECK((before - overlapped.step).ps() == doctest::Approx(overlapped.overlappable.ps()).epsilon(1e-6));
  // With contention (the shipped default) wgrad is slowed by the all-reduce beside it: the step
  // gains less, but still gains.
  const scenarios::ResolvedScenario shipped = llama_tp8(true);
  analysis::StepSetup contended = analysis::step_setup(shipped);
  const Timed with = overlapped_step(contended);
  contended.step.tp_syncs = blocking(contended.step.tp_syncs);
  const sim::Time with_before = analysis::simulate_step(contended).step_time;
  MESSAGE("contended: blocking ", with_before.ps(), " ps, overlapped ", with.step.ps(), " ps");
  CHECK(with.step < with_before);
  CHECK(with_before - with.step <= overlapped.overlappable);
}

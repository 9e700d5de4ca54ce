// Tensor parallelism end to end: a transformer layer-slice on one and two DGX H100 under tp 8 (× dp),
// its TP collectives on each machine's NVSwitch, its gradient all-reduces split by TP rank, and the
// step's time against the kernels it runs.
#include <doctest/doctest.h>

#include <set>

#include "topology/preset_registry.h"
#include "transformer_step_run.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

namespace {

using Run = testing::TransformerStepRun;

Run run(int nodes, int dp, int tp, bool sp) {
  static const topology::Topology one = topology::build_cluster({.preset = "dgx-h100", .nodes = 1});
  static const topology::Topology two = topology::build_cluster({.preset = "dgx-h100", .nodes = 2});
  return testing::run_transformer_step(
      {.model = "llama3-8b", .gpu = "h100", .dp = dp, .tp = tp, .sequence_parallel = sp},
      nodes == 1 ? one : two);
}

}  // namespace

TEST_CASE("tensor parallel: a TP group's collectives run on its machine, between its kernels") {
  const Run r = run(2, 2, 8, false);
  CHECK(r.program.dp == 2);
  CHECK(r.program.tp == 8);
  CHECK(r.result.gpus == 16);
  std::size_t tp_collectives = 0;
  for (const auto& c : r.program.collectives) {
    if (c.role == CollectiveRole::TensorParallel) {
      ++tp_collectives;
      REQUIRE(c.members.size() == 8);
      // Consecutive workers: GPUs 0-7 (machine 0) or 8-15 (machine 1).
      const std::set<int> machines{c.members.front() / 8, c.members.back() / 8};
      CHECK(machines.size() == 1);
    } else {
      // Gradients: one collective per TP rank over its 2 replicas, one GPU on each machine.
      REQUIRE(c.members.size() == 2);
      CHECK(c.members[1] - c.members[0] == 8);
    }
  }
  CHECK(tp_collectives == 2 * r.step.syncs.size());  // each replica's group runs them all
  // Tokens per second count each replica's tokens once: 2 × 8,192 per step.
  CHECK(r.result.units_per_second * r.result.step_time.to_seconds() == doctest::Approx(2 * 8192.0));
  // The step takes at least its kernels, and the all-reduces add to it.
  const sim::Time kernels = r.step.profile.forward_time() + r.step.profile.backward_time();
  CHECK(r.result.step_time > kernels);
}

TEST_CASE("tensor parallel: sequence parallelism moves the same bytes as reduce-scatter + all-gather") {
  const Run ar = run(1, 1, 8, false);
  const Run sp = run(1, 1, 8, true);
  // The layers' and the embedding's collectives (the loss's three small all-reduces stay).
  const auto moved = [](const TransformerStep& step, bool all_reduce) {
    std::int64_t bytes = 0;
    for (const auto& s : step.syncs)
      if (step.profile.ops[s.op].name != "lm_head" && (s.kind == sim::CollectiveOp::AllReduce) == all_reduce)
        bytes += s.bytes.count();
    return bytes;
  };
  const std::int64_t ar_bytes = moved(ar.step, true), sp_bytes = moved(sp.step, false);
  // A ring all-reduce moves 2(n-1)/n·S per rank; a reduce-scatter and an all-gather (n-1)/n·S each.
  // Without SP, 9 all-reduces of S = b·s·h values (2 layers × 4, the embedding's 1); with it, each
  // layer's two column-parallel linears also gather their input again in backward (Megatron-LM's
  // layers.py): 2 × 9 + 2 × 2 buffers of S.
  REQUIRE(ar_bytes % 9 == 0);
  CHECK(sp_bytes == 2 * ar_bytes + 2 * 2 * (ar_bytes / 9));
  CHECK(sp.result.step_time > sim::Time::zero());
  // With its norms and dropouts on s/t, the SP step is not slower by more than the rounding of rings.
  CHECK(sp.result.step_time.to_seconds() < ar.result.step_time.to_seconds() * 1.05);
}

TEST_CASE("tensor parallel: the critical path counts TP collectives as TP communication, not MP transfers") {
  const Run r = run(1, 1, 8, false);
  const analysis::CriticalPath& p = r.result.critical_path;
  CHECK(p.tensor_parallel_communication > sim::Time::zero());
  CHECK(p.model_parallel_transfers == sim::Time::zero());
  CHECK(p.expert_parallel_communication == sim::Time::zero());
  // The path's parts still add up to the step.
  CHECK(p.compute + p.gradient_communication + p.model_parallel_transfers + p.tensor_parallel_communication +
            p.expert_parallel_communication + p.launch_gaps ==
        r.result.step_time);
}

// A folded ring whose positions repeat no pattern runs one model of every position
// (FoldedRing::run_channel), which the jump's fitted count (sim/fast/fold_cost.h,
// ring_steps_simulated) does not cover: its events are counted at every step, never under the run.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "sim/event_queue.h"
#include "sim/fast/folded_ring.h"
#include "sim/network.h"
#include "topology/preset_registry.h"
#include "workloads/comm/comm_plan.h"

using namespace hybridsim;

TEST_CASE("fold cost: a ring of 33 DGX-1 that repeats no pattern is counted at every step") {
  // An all-gather of 66 MiB (256 KiB a rank) over the 264 GPUs of 33 DGX-1: NCCL's rings through 33
  // machines repeat no pattern of their positions, so the folded ring's model runs all 264, with the
  // ring's own (uniform) chunks, and jumps only 116 of its 4 x 263 steps. Counted by the jump's fit
  // (38 steps a channel run one by one), 108,072 model events were estimated for 657,112 run: the
  // step of BigLSTM DP on 33 DGX-1 was estimated at 0.33 of its run (tests/bench/MEASUREMENTS.md,
  // late2).
  const topology::Topology t = topology::build_cluster({.preset = "dgx1-v100", .nodes = 33});
  workloads::CommPlanner planner(t, {});
  workloads::CollectiveSpec spec;
  spec.role = workloads::CollectiveRole::GradientAllGather;
  spec.op = sim::CollectiveOp::AllGather;
  spec.size = sim::Bytes::mib(66);
  for (int g = 0; g < 264; ++g) spec.members.push_back(g);
  sim::EventQueue queue;
  sim::Network network(queue, t.links());
  const std::unique_ptr<sim::Collective> ring =
      workloads::make_collective(network, planner.plan(spec), sim::CollectiveConfig{});
  const auto* folded = dynamic_cast<const sim::FoldedRing*>(ring.get());
  REQUIRE(folded != nullptr);
  REQUIRE(folded->ring().uniform_chunks());
  const std::uint64_t expected = ring->expected_events().models;
  ring->start_all();
  queue.run();
  REQUIRE(ring->is_done());
  const sim::SimulationPath path = ring->simulation_path();
  CHECK_FALSE(path.folded);  // every position simulated
  CHECK(path.jumped_steps > 0);
  CHECK(expected >= path.private_events);
  CHECK(expected <= 2 * path.private_events);
}

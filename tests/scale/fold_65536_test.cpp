// Issue 30's exactness case past the largest published validation: a DP step on 65,536 GPUs (8,192
// DGX H100 on a rail-optimised NDR fabric). No full simulation is possible there (a bucket is
// 65,536 × 8 channels × 2 × 65,535 messages), so `auto` (exact folds only) stands as the reference
// and `bounded` must stay within the bound it states, GPU by GPU; tests/scale/fold_exact_1024_test.cpp
// holds the same machines at 1,024 GPUs to the full simulation. With chunks of one size both paths
// fold the same way (bound 0 today); the case holds them to it at this size, where any class that
// split or ring that fell back would show. About 16 s of CPU and 0.8 GB in all.
#include <doctest/doctest.h>

#include "tests/unit/fold_exact_case.h"
#include "tests/unit/toy_profile.h"

using namespace hybridsim;

TEST_CASE("fold at 65,536 GPUs: DGX H100 DP on rails, auto against bounded within its bound") {
  // Two 8 MiB buckets: 65,536 ranks × 8 channels divide them, so `auto` folds them exactly.
  const workloads::Profile p = testing::toy_chain(4, sim::Bytes::mib(4));
  const testing::FoldCase c{8192, topology::presets::Fabric::RailOptimized, 1.0, 65536, 1,
                            workloads::AllReduceAlgorithm::Ring};
  const topology::Topology t = topology::build_cluster(
      {.preset = "dgx-h100", .nodes = c.nodes, .fabric = c.fabric, .oversubscription = c.oversubscription});
  const analysis::StepResult exact = testing::run_fold_case(c, t, p, sim::FastPath::Auto);
  const analysis::StepResult bounded = testing::run_fold_case(c, t, p, sim::FastPath::Bounded);
  CAPTURE(exact.simulation.full_reason);
  CAPTURE(exact.simulation.step_fold_reason);
  CHECK(exact.gpus == 65536);
  CHECK(exact.simulation.folded == exact.collectives);
  CHECK(exact.simulation.bound == sim::Time::zero());  // auto folds only exactly
  CHECK(exact.simulation.gpus_simulated == 8);  // one machine's GPUs stand for all
  CHECK(bounded.simulation.gpus_simulated == 8);
  const sim::Time bound = bounded.simulation.bound;
  CAPTURE(bound);
  CHECK(exact.step_time > sim::Time::zero());
  CHECK(bounded.step_time >= exact.step_time - bound);
  CHECK(bounded.step_time <= exact.step_time + bound);
  CHECK(bounded.messages == exact.messages);
  CHECK(bounded.bytes_by_link_kind == exact.bytes_by_link_kind);
  REQUIRE(bounded.per_gpu.size() == exact.per_gpu.size());
  for (std::size_t g = 0; g < exact.per_gpu.size(); ++g) {
    CAPTURE(g);
    const sim::Time e = exact.per_gpu[g].finish, b = bounded.per_gpu[g].finish;
    CHECK(b >= e - bound);
    CHECK(b <= e + bound);
  }
}

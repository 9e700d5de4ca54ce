// Trees in a folded step under `fast_path: bounded` at 1,024 GPUs (sim/README.md, "Trees in a step:
// bounded"): 128 DGX-1 on a fat tree, DP with NCCL's double binary trees (`tree` and `auto`), the
// step folded onto 8 GPUs, each tree's ranks given its latest finish. Every GPU must finish no
// earlier than in the full simulation and within the stated bound after it, and the bound must stay
// under 1% of the step (issue 30 accepts a bounded answer that says its bound). Beside
// tree_classes_1024_test.cpp, which shows why no exact fold of trees by classes exists. Release build
// only (the full simulations cost millions of messages).
#include <doctest/doctest.h>

#include "tests/unit/fold_exact_case.h"
#include "tests/unit/toy_profile.h"

using namespace hybridsim;
using testing::FoldCase;

TEST_CASE("bounded trees at 1,024 GPUs: every GPU within the stated bound of the full step, under 1%") {
  const workloads::Profile p = testing::toy_chain(4, sim::Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  for (const A algorithm : {A::Tree, A::Auto}) {
    const FoldCase c{128, topology::presets::Fabric::FatTree, 1.0, 1024, 1, algorithm};
    CAPTURE(testing::describe(c));
    const topology::Topology t = testing::fold_case_cluster(c);
    const analysis::StepResult full = testing::run_fold_case(c, t, p, sim::FastPath::Off);
    const analysis::StepResult bounded = testing::run_fold_case(c, t, p, sim::FastPath::Bounded);
    CHECK(bounded.simulation.gpus_simulated == 8);
    testing::check_within_bound(bounded, full);
    CHECK(bounded.simulation.bound.ps() < full.step_time.ps() / 100);
    MESSAGE("bounded " << bounded.step_time.to_seconds() * 1e3 << " ms against "
                       << full.step_time.to_seconds() * 1e3 << " ms, stated bound "
                       << bounded.simulation.bound.to_seconds() * 1e6 << " us");
  }
}

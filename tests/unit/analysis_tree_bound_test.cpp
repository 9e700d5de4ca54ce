// Trees in a folded step under `fast_path: bounded` (sim/README.md, "Trees in a step: bounded"):
// every GPU of a class is given the latest finish of each tree all-reduce, so each GPU finishes no
// earlier than in the full simulation and no later than the step's stated bound after it; the trees
// move the same bytes and messages. At 1,024 GPUs in tests/scale/tree_bound_1024_test.cpp.
#include <doctest/doctest.h>

#include "tests/unit/fold_exact_case.h"
#include "tests/unit/toy_profile.h"

using namespace hybridsim;
using testing::FoldCase;

TEST_CASE("bounded trees: a folded step's GPUs finish within the stated bound of the full simulation") {
  // Six ops of 1 ms forward, 2 ms backward and 4 MiB of gradients: 8 MiB buckets, back to back at
  // the end of the backward pass, so each tree's bound carries into the next.
  const workloads::Profile p = testing::toy_chain(6, sim::Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  using F = topology::presets::Fabric;
  const FoldCase cases[] = {
      {4, F::FatTree, 1.0, 32, 1, A::Tree},
      {8, F::FatTree, 2.0, 64, 1, A::Tree},
      {16, F::RailOptimized, 1.0, 128, 1, A::Tree},
      {32, F::FatTree, 1.0, 256, 1, A::Auto},
      {8, F::FatTree, 1.0, 32, 2, A::Tree},
  };
  for (const FoldCase& c : cases) {
    CAPTURE(testing::describe(c));
    const topology::Topology t = testing::fold_case_cluster(c);
    const analysis::StepResult bounded = testing::run_fold_case(c, t, p, sim::FastPath::Bounded);
    const analysis::StepResult full = testing::run_fold_case(c, t, p, sim::FastPath::Off);
    CAPTURE(bounded.simulation.step_fold_reason);
    CAPTURE(bounded.simulation.full_reason);
    testing::check_within_bound(bounded, full);
  }
}

TEST_CASE("bounded trees: fast_path auto keeps a step with trees exact") {
  const workloads::Profile p = testing::toy_chain(6, sim::Bytes::mib(4));
  const FoldCase c{8, topology::presets::Fabric::FatTree, 1.0, 64, 1, workloads::AllReduceAlgorithm::Tree};
  const topology::Topology t = testing::fold_case_cluster(c);
  const analysis::StepResult fast = testing::run_fold_case(c, t, p, sim::FastPath::Auto);
  const analysis::StepResult full = testing::run_fold_case(c, t, p, sim::FastPath::Off);
  CHECK(fast.simulation.gpus_simulated == 0);
  CHECK(fast.simulation.bound == sim::Time::zero());
  testing::check_same_step(fast, full);
}

TEST_CASE("bounded trees: a folded step gives the same result with 1 and 2 model threads") {
  // Its trees' model runs computed ahead on a second thread (sim/README.md, "Trees in a step: the
  // second core"): DGX-1 on a fat tree, 8 MiB buckets of a six-op chain, `tree` on 16 machines and
  // `auto` on 32 (as above); every GPU's finish, the messages, the events and the bound are the same.
  const workloads::Profile p = testing::toy_chain(6, sim::Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  for (const testing::FoldCase& c :
       {testing::FoldCase{16, topology::presets::Fabric::FatTree, 1.0, 128, 1, A::Tree},
        testing::FoldCase{32, topology::presets::Fabric::FatTree, 1.0, 256, 1, A::Auto}}) {
    CAPTURE(testing::describe(c));
    const topology::Topology t = testing::fold_case_cluster(c);
    analysis::StepResult r[2];
    for (unsigned threads : {1u, 2u}) {
      analysis::StepSetup s;
      s.profile = &p;
      s.topology = &t;
      s.placement = workloads::place_all_on_first(p, 1);
      s.mapping = workloads::default_mapping(t, c.dp, c.mp);
      s.step.bucket_size = sim::Bytes::mib(8);
      s.comm.algorithm = c.algorithm;
      s.collective.fast_path = sim::FastPath::Bounded;
      s.limits.model_threads = threads;
      r[threads - 1] = analysis::simulate_step(s, {});
    }
    CHECK(r[0].simulation.folded > 0);
    if (c.algorithm == A::Tree) CHECK(r[0].simulation.bound > sim::Time::zero());  // trees folded
    testing::check_same_step(r[1], r[0]);
    CHECK(r[1].events == r[0].events);
    CHECK(r[1].simulation.bound == r[0].simulation.bound);
  }
}

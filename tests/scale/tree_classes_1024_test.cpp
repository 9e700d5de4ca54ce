// Why trees do not fold in a step (sim/README.md, "Trees in a step"): the step fold simulates one
// GPU per class (same machine wiring, same index in the machine, same program) and needs every
// member to see its representative's timeline. Under NCCL's double binary trees that fails at the
// root of the idea: GPUs of one class sit at different tree positions, and a class split by tree
// level (root, interior and leaf machines by their height, and which child of its parent a machine
// is) would give at most 2 × levels timelines per index in the machine. The full simulation at
// 1,024 GPUs (128 DGX-1, two 8 MiB buckets) shows far more, so no fold by level classes is exact,
// and one timeline per class is off by half the class's spread, beyond the 0.1% that `bounded`
// allows a ring. Release build only (the full
// simulations cost millions of messages).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/unit/fold_exact_case.h"
#include "tests/unit/toy_profile.h"

using namespace hybridsim;
using testing::FoldCase;

namespace {

// Levels of the binary tree over `machines` (topology::binary_tree_parent): root to deepest leaf.
int tree_levels(int machines) {
  int levels = 1;
  while ((1 << (levels - 1)) < machines) ++levels;
  return levels;
}

}  // namespace

TEST_CASE("trees at 1,024 GPUs: GPUs of one class take more timelines than tree levels explain") {
  const workloads::Profile p = testing::toy_chain(4, sim::Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  using F = topology::presets::Fabric;
  for (const A algorithm : {A::Tree, A::Auto}) {
    const FoldCase c{128, F::FatTree, 1.0, 1024, 1, algorithm};
    CAPTURE(testing::describe(c));
    const topology::Topology t = testing::fold_case_cluster(c);
    const analysis::StepResult full = testing::run_fold_case(c, t, p, sim::FastPath::Off);
    const analysis::StepResult fast = testing::run_fold_case(c, t, p, sim::FastPath::Auto);
    testing::check_same_step(fast, full);  // whatever the fast path does, it is the full step
    REQUIRE(full.per_gpu.size() == 1024);
    // Finish times per index in the machine (the program's GPU g is the topology's g-th GPU).
    std::map<int, std::set<std::int64_t>> finish;
    const auto gpus = t.gpus();
    for (std::size_t g = 0; g < full.per_gpu.size(); ++g)
      finish[t.device(gpus[g]).local_gpu.value_or(-1)].insert(full.per_gpu[g].finish.ps());
    REQUIRE(finish.size() == 8);
    const int levels = tree_levels(c.nodes);
    sim::Time widest;
    std::size_t fewest = full.per_gpu.size();
    for (const auto& [local, times] : finish) {
      CAPTURE(local);
      CHECK(times.size() > static_cast<std::size_t>(2 * levels));
      fewest = std::min(fewest, times.size());
      widest = max(widest, sim::Time::ps(*times.rbegin() - *times.begin()));
    }
    // The error of one timeline per class: at least half the widest class's spread, which is more
    // than the 0.1% of its time that `bounded` allows a ring.
    MESSAGE("at least " << fewest << " finish times per index in the machine (of 128 machines); widest "
                        << "spread " << widest.to_seconds() * 1e6 << " us of a "
                        << full.step_time.to_seconds() * 1e3 << " ms step");
    CHECK(widest.ps() / 2 > full.step_time.ps() / 1000);
  }
}

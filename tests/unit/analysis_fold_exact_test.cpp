// Folded rings inside whole training steps (sim/README.md, "Folding"): on generated clusters (DGX-1
// machines on a fat tree or a rail-optimised fabric, with oversubscription), DP and hybrid, ring,
// tree and hierarchical all-reduces, a step with the fast path on must take exactly the time of
// the same step simulated rank by rank, and move the same bytes over each kind of link.
#include <doctest/doctest.h>

#include <string>

#include "analysis/collective/collective_sweep.h"
#include "analysis/step/step_report.h"
#include "analysis/step/step_runner.h"
#include "tests/unit/fold_exact_case.h"
#include "tests/unit/toy_profile.h"
#include "topology/preset_registry.h"

using namespace hybridsim;
using sim::Bytes;

using testing::check_same_step;
using testing::describe;
using Case = testing::FoldCase;

using testing::run_fold_case;

TEST_CASE("fold: steps on generated clusters take exactly the time of the full simulation") {
  // Six ops of 1 ms forward, 2 ms backward and 4 MiB of gradients: 8 MiB buckets, sizes that
  // ranks × channels divide (so the rings may fold exactly).
  const workloads::Profile p = testing::toy_chain(6, Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  using F = topology::presets::Fabric;
  const Case cases[] = {
      {4, F::FatTree, 1.0, 32, 1, A::Ring},
      {16, F::FatTree, 2.0, 128, 1, A::Ring},
      {16, F::RailOptimized, 4.0, 128, 1, A::Ring},
      {8, F::FatTree, 1.0, 64, 1, A::Tree},
      {8, F::RailOptimized, 2.0, 64, 1, A::Hierarchical},
      {8, F::FatTree, 2.0, 32, 2, A::Ring},
      {32, F::FatTree, 1.0, 256, 1, A::Auto},
      {16, F::RailOptimized, 2.0, 128, 1, A::Tree},
      {16, F::FatTree, 4.0, 64, 2, A::Tree},
      {32, F::FatTree, 1.0, 256, 1, A::Tree},
      {8, F::FatTree, 2.0, 32, 2, A::Auto},
  };
  std::size_t folded = 0;
  for (const Case& c : cases) {
    CAPTURE(describe(c));
    const topology::Topology t = testing::fold_case_cluster(c);
    const analysis::StepResult fast = run_fold_case(c, t, p, sim::FastPath::Auto);
    const analysis::StepResult full = run_fold_case(c, t, p, sim::FastPath::Off);
    CAPTURE(fast.simulation.full_reason);
    CHECK(fast.step_time == full.step_time);
    CHECK(fast.bytes_by_link_kind == full.bytes_by_link_kind);
    CHECK(fast.messages == full.messages);
    CHECK(fast.mean.exposed_communication == full.mean.exposed_communication);
    CHECK(full.simulation.folded == 0);
    folded += fast.simulation.folded;
  }
  // The exactness above is only worth something if rings did fold.
  CHECK(folded > 0);
}

TEST_CASE(
    "fold: tree all-reduces over 4 DGX-1 take exactly the time of the full simulation, half simulated") {
  // 32 V100 on one EDR leaf: NCCL's 4 rings give 8 trees. Rings 0 and 1 run one chain each way
  // round (their trees share NVLinks), as do rings 2 and 3: two groups of 4 tree channels that
  // correspond position by position (sim/README.md, "Trees"), so 4 of the 8 are simulated. Sizes
  // under LL, LL128 and Simple (whose base latency is 0 but whose sends wait a hop latency).
  const topology::Topology t = topology::build_cluster({.preset = "dgx1-v100", .nodes = 4});
  analysis::CollectiveSweepOptions o;
  for (int g = 0; g < 32; ++g) o.gpus.push_back(g);
  o.comm.algorithm = workloads::AllReduceAlgorithm::Tree;
  for (const Bytes size : {Bytes::kib(64), Bytes::mib(4), Bytes::mib(256)}) {
    CAPTURE(size.count());
    o.collective.fast_path = sim::FastPath::Auto;
    const analysis::CollectiveSweepRow fast = analysis::run_one_collective(t, o, size);
    o.collective.fast_path = sim::FastPath::Off;
    const analysis::CollectiveSweepRow full = analysis::run_one_collective(t, o, size);
    CHECK(fast.path.folded);
    CHECK(fast.path.simulated == 4);
    CHECK(fast.path.ranks == 8);
    CHECK_FALSE(fast.rerun);
    CHECK(fast.time == full.time);
    CHECK(fast.messages == full.messages);
    CHECK(fast.bytes_by_link_kind == full.bytes_by_link_kind);
  }
}

TEST_CASE("fold: the idle GPUs of a cluster larger than the step are not counted as its simulated GPUs") {
  // Four DGX-1 (32 GPUs): the idle GPUs of machines 1 to 3 fold onto machine 1's, and were counted
  // with the step's: dp 8 (machine 0 alone, each of its GPUs simulated) said "16 of 8 GPUs simulated
  // (the others repeat them)" and ran as folded (its trace without the network); dp 16 (machines 0
  // and 1, one machine's 8 GPUs standing for both) said 16 of 16.
  const workloads::Profile p = testing::toy_chain(6, Bytes::mib(4));
  using F = topology::presets::Fabric;
  const std::pair<Case, std::uint32_t> cases[] = {
      {{4, F::FatTree, 1.0, 8, 1, workloads::AllReduceAlgorithm::Ring}, 0},
      {{4, F::FatTree, 1.0, 16, 1, workloads::AllReduceAlgorithm::Ring}, 8}};
  for (const auto& one : cases) {
    // Not a structured binding: clang cannot capture one in CAPTURE's lambda (the sanitizer build).
    const Case& c = one.first;
    const std::uint32_t simulated = one.second;
    CAPTURE(describe(c));
    const topology::Topology t = testing::fold_case_cluster(c);
    const analysis::StepResult fast = run_fold_case(c, t, p, sim::FastPath::Auto);
    const analysis::StepResult full = run_fold_case(c, t, p, sim::FastPath::Off);
    CHECK(fast.gpus == c.dp);
    CHECK(fast.step_time == full.step_time);
    const std::string table = analysis::step_summary_table(fast, {});
    if (simulated == 0) {  // dp 8: not folded (only idle GPUs are alike), each of its 8 GPUs simulated
      CHECK(fast.simulation.gpus_simulated == 0);
      CHECK(fast.simulation.strategy != "folded onto representative GPUs");
      CHECK(fast.messages == full.messages);
      CHECK(table.find("GPUs simulated (the others repeat them)") == std::string::npos);
    } else {
      CHECK(fast.simulation.gpus_simulated == simulated);
      CHECK(table.find("8 of 16 GPUs simulated (the others repeat them)") != std::string::npos);
    }
  }
}

TEST_CASE("fold: a step folded onto its representative GPUs gives every GPU the full simulation's figures") {
  // The toy chain of the case above (8 MiB buckets that ranks × channels divide, so the rings
  // fold exactly): DP over 16 DGX-1 machines, and hybrid dp 32 × mp 2 over 8, whose model-parallel
  // transfers inside each machine are shadows of machine 0's. Machines are alike, so one machine's
  // 8 GPUs stand for all: every GPU's finish, compute and exposed communication, and the critical
  // path, must be those of the step simulated GPU by GPU and rank by rank.
  const workloads::Profile p = testing::toy_chain(6, Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  using F = topology::presets::Fabric;
  const Case cases[] = {{16, F::FatTree, 1.0, 128, 1, A::Ring}, {8, F::FatTree, 1.0, 32, 2, A::Ring}};
  for (const Case& c : cases) {
    CAPTURE(describe(c));
    const topology::Topology t =
        topology::build_cluster({.preset = "dgx1-v100", .nodes = c.nodes, .fabric = c.fabric});
    const analysis::StepResult fast = run_fold_case(c, t, p, sim::FastPath::Auto);
    const analysis::StepResult full = run_fold_case(c, t, p, sim::FastPath::Off);
    CHECK(fast.simulation.gpus_simulated == 8);
    CHECK(full.simulation.gpus_simulated == 0);
    CHECK(fast.step_time == full.step_time);
    CHECK(fast.messages == full.messages);
    CHECK(fast.bytes_by_link_kind == full.bytes_by_link_kind);
    CHECK(fast.events < full.events);
    REQUIRE(fast.per_gpu.size() == full.per_gpu.size());
    for (std::size_t g = 0; g < full.per_gpu.size(); ++g) {
      CAPTURE(g);
      CHECK(fast.per_gpu[g].gpu == full.per_gpu[g].gpu);
      CHECK(fast.per_gpu[g].finish == full.per_gpu[g].finish);
      CHECK(fast.per_gpu[g].compute == full.per_gpu[g].compute);
      CHECK(fast.per_gpu[g].exposed_communication == full.per_gpu[g].exposed_communication);
      CHECK(fast.per_gpu[g].idle == full.per_gpu[g].idle);
    }
    CHECK(fast.critical_path.compute == full.critical_path.compute);
    CHECK(fast.critical_path.gradient_communication == full.critical_path.gradient_communication);
  }
}

TEST_CASE(
    "fold: data-parallel rings of model-parallel stages that share each machine's NIC fold together, "
    "exactly") {
  // Hybrid mp 4 on DGX-1: each machine holds two workers of four stages; stage k's data-parallel
  // ring takes GPU k of each worker, and two stages' rings leave the machine through one NIC, so
  // no ring folds alone (sim/fast/ring_embedding.h). Embedded together, each stage ring's first window of
  // positions is simulated: every GPU's figures must be those of the step simulated in full.
  const workloads::Profile p = testing::toy_chain(8, Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  using F = topology::presets::Fabric;
  const Case cases[] = {
      {8, F::FatTree, 1.0, 16, 4, A::Ring},
      {16, F::FatTree, 2.0, 32, 4, A::Ring},
      {32, F::FatTree, 4.0, 64, 4, A::Ring},
  };
  for (const Case& c : cases) {
    CAPTURE(describe(c));
    const topology::Topology t = testing::fold_case_cluster(c);
    const analysis::StepResult fast = run_fold_case(c, t, p, sim::FastPath::Auto);
    const analysis::StepResult full = run_fold_case(c, t, p, sim::FastPath::Off);
    CAPTURE(fast.simulation.full_reason);
    CAPTURE(fast.simulation.step_fold_reason);
    CHECK_FALSE(fast.simulation.rerun);
    CHECK(fast.simulation.embedded > 0);
    CHECK(fast.simulation.embedded == fast.simulation.folded);
    CHECK(fast.simulation.gpus_simulated > 0);
    CHECK(fast.simulation.gpus_simulated < static_cast<std::uint32_t>(fast.gpus));
    CHECK(fast.events < full.events);
    check_same_step(fast, full);
  }
}

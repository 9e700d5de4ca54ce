// Issue 14's exactness battery at its largest size, 1,024 GPUs (128 DGX-1): DP and hybrid (mp 2,
// and mp 4 whose stages' rings share each machine's NIC), ring, tree, hierarchical and NCCL's own
// choice, on fat trees and rail-optimised fabrics with oversubscription. With the fast path on,
// every GPU must finish at the time, with the communication, of the step simulated rank by rank.
// The full simulations cost tens of millions of messages, so these run only in the Release build
// of the tests (tests/CMakeLists.txt), not under the sanitizers; tests/unit/ has the same checks at
// up to 256 GPUs.
#include <doctest/doctest.h>

#include <string>

#include "tests/unit/fold_exact_case.h"
#include "tests/unit/toy_profile.h"

using namespace hybridsim;
using testing::FoldCase;

namespace {

struct Expect {
  FoldCase c;
  bool step_folds;  // whether the step must fold (fewer GPUs simulated than there are)
};

// `preset`: the machines (fold_case_cluster's are DGX-1).
void check_cases(const workloads::Profile& p, const Expect* begin, const Expect* end,
                 const std::string& preset = "dgx1-v100") {
  for (const Expect* e = begin; e != end; ++e) {
    const FoldCase& c = e->c;
    CAPTURE(testing::describe(c));
    CAPTURE(preset);
    const topology::Topology t = topology::build_cluster(
        {.preset = preset, .nodes = c.nodes, .fabric = c.fabric, .oversubscription = c.oversubscription});
    const analysis::StepResult fast = testing::run_fold_case(c, t, p, sim::FastPath::Auto);
    const analysis::StepResult full = testing::run_fold_case(c, t, p, sim::FastPath::Off);
    CAPTURE(fast.simulation.full_reason);
    CAPTURE(fast.simulation.step_fold_reason);
    CHECK(full.simulation.folded == 0);
    CHECK(fast.gpus == 1024);
    if (e->step_folds) {
      CHECK(fast.simulation.gpus_simulated > 0);
      CHECK(fast.simulation.gpus_simulated < 1024);
      CHECK(fast.events * 10 < full.events);
    }
    testing::check_same_step(fast, full);
  }
}

}  // namespace

TEST_CASE("fold at 1,024 GPUs: rings, DP and hybrid, fat tree and rail-optimised, oversubscribed") {
  // Two 8 MiB buckets (1 ms forward, 2 ms backward, 4 MiB of gradients per op): the second joins
  // when the first is done on each GPU, so the step's own order is tested, not just one collective.
  const workloads::Profile p = testing::toy_chain(4, sim::Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  using F = topology::presets::Fabric;
  const Expect cases[] = {
      {{128, F::FatTree, 1.0, 1024, 1, A::Ring}, true},
      {{128, F::FatTree, 4.0, 1024, 1, A::Ring}, true},
      {{128, F::RailOptimized, 2.0, 1024, 1, A::Ring}, true},
      {{128, F::FatTree, 2.0, 512, 2, A::Ring}, true},
      {{128, F::FatTree, 1.0, 256, 4, A::Ring}, true},
  };
  check_cases(p, std::begin(cases), std::end(cases));
}

TEST_CASE("fold at 1,024 GPUs: DGX H100, DP and hybrid, fat tree and rail-optimised") {
  // Every ring channel crosses each GPU's one NVSwitch link, so a ring's channels are folded
  // together (sim/fast/ring_embedding.h); channels sent by one GPU to the next at the same instant
  // travel routes over the same links, which is no tie of two routes (sim/fast/link_claims.h).
  // With mp 2 the stages' activation copies cross the NVSwitch links the rings claim: inside the
  // representatives' machine they meet the rings' models live there (LinkClaims::share), so the
  // step folds, and every GPU must still be the full simulation's.
  const workloads::Profile p = testing::toy_chain(4, sim::Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  using F = topology::presets::Fabric;
  const Expect cases[] = {
      {{128, F::RailOptimized, 1.0, 1024, 1, A::Ring}, true},
      {{128, F::FatTree, 2.0, 1024, 1, A::Ring}, true},
      {{128, F::RailOptimized, 1.0, 512, 2, A::Ring}, true},
      {{128, F::FatTree, 1.0, 512, 2, A::Ring}, true},
  };
  check_cases(p, std::begin(cases), std::end(cases), "dgx-h100");
}

TEST_CASE("fold at 1,024 GPUs: trees, hierarchical and NCCL's choice take the full simulation's time") {
  // Trees fold only collectives all ranks join at once (the first bucket here); hierarchical
  // all-reduces are chains of rings. Whatever folds, the step must be the full simulation's.
  const workloads::Profile p = testing::toy_chain(4, sim::Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  using F = topology::presets::Fabric;
  const Expect cases[] = {
      {{128, F::FatTree, 1.0, 1024, 1, A::Tree}, false},
      {{128, F::RailOptimized, 2.0, 1024, 1, A::Tree}, false},
      {{128, F::RailOptimized, 4.0, 1024, 1, A::Hierarchical}, false},
      {{128, F::FatTree, 2.0, 1024, 1, A::Auto}, false},
      {{128, F::FatTree, 1.0, 512, 2, A::Auto}, false},
  };
  check_cases(p, std::begin(cases), std::end(cases));
}

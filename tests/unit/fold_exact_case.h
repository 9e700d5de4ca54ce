// A generated step for the fold-exactness tests (tests/unit/analysis_fold_exact_test.cpp and, at
// 1,024 GPUs, tests/scale/): DGX-1 machines on a fabric, a placement, an all-reduce algorithm, run
// with the fast path on or off, and the check that both give every GPU the same figures.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "analysis/step/step_runner.h"
#include "topology/preset_registry.h"
#include "workloads/program/mapping.h"
#include "workloads/program/placement.h"

namespace hybridsim::testing {

struct FoldCase {
  int nodes;
  topology::presets::Fabric fabric;
  double oversubscription;
  int dp;
  int mp;
  workloads::AllReduceAlgorithm algorithm;
};

// Four DGX-1 on a fat tree, dp 32 with rings: folds onto one machine's representatives (the progress
// and first-attempt tests' case).
inline const FoldCase kFourDgx1Dp32{4, topology::presets::Fabric::FatTree, 1.0, 32, 1,
                                    workloads::AllReduceAlgorithm::Ring};

inline std::string describe(const FoldCase& c) {
  return std::to_string(c.nodes) + " DGX-1 " + std::string(topology::presets::fabric_name(c.fabric)) +
         " over " + std::to_string(c.oversubscription) + ", dp " + std::to_string(c.dp) + " x mp " +
         std::to_string(c.mp) + ", " + std::string(workloads::algorithm_name(c.algorithm));
}

inline topology::Topology fold_case_cluster(const FoldCase& c) {
  return topology::build_cluster(
      {.preset = "dgx1-v100", .nodes = c.nodes, .fabric = c.fabric, .oversubscription = c.oversubscription});
}

// The step of `c` on `t` with 8 MiB buckets (sizes ranks × channels divide, so rings may fold
// exactly), the profile's layers split over mp stages.
inline analysis::StepSetup fold_case_setup(const FoldCase& c, const topology::Topology& t,
                                           const workloads::Profile& p, sim::FastPath mode) {
  analysis::StepSetup s;
  s.profile = &p;
  s.topology = &t;
  s.placement = c.mp == 1 ? workloads::place_all_on_first(p, 1) : workloads::partition_layers(p, c.mp);
  s.mapping = workloads::default_mapping(t, c.dp, c.mp);
  s.step.bucket_size = sim::Bytes::mib(8);
  s.comm.algorithm = c.algorithm;
  s.collective.fast_path = mode;
  return s;
}
inline analysis::StepResult run_fold_case(const FoldCase& c, const topology::Topology& t,
                                          const workloads::Profile& p, sim::FastPath mode,
                                          analysis::StepObservers observers = {}) {
  return analysis::simulate_step(fold_case_setup(c, t, p, mode), observers);
}

// Every GPU's finish, communication and exposed communication, the step time, messages and bytes
// per link kind of `fast` must be those of `full`.
inline void check_same_step(const analysis::StepResult& fast, const analysis::StepResult& full) {
  CHECK(fast.step_time == full.step_time);
  CHECK(fast.messages == full.messages);
  CHECK(fast.bytes_by_link_kind == full.bytes_by_link_kind);
  CHECK(fast.mean.exposed_communication == full.mean.exposed_communication);
  REQUIRE(fast.per_gpu.size() == full.per_gpu.size());
  for (std::size_t g = 0; g < full.per_gpu.size(); ++g) {
    CAPTURE(g);
    CHECK(fast.per_gpu[g].finish == full.per_gpu[g].finish);
    CHECK(fast.per_gpu[g].communication == full.per_gpu[g].communication);
    CHECK(fast.per_gpu[g].exposed_communication == full.per_gpu[g].exposed_communication);
  }
}

// A step with trees folded under `bounded` (sim/README.md, "Trees in a step: bounded") against
// the full simulation of the same step, GPU by GPU: each GPU no earlier, and no later than the
// stated bound after it; the same messages and bytes.
inline void check_within_bound(const analysis::StepResult& bounded, const analysis::StepResult& full) {
  const sim::Time bound = bounded.simulation.bound;
  CHECK(bounded.simulation.gpus_simulated > 0);
  CHECK(bounded.simulation.folded > 0);
  CHECK(bound > sim::Time::zero());
  CHECK(bounded.messages == full.messages);
  CHECK(bounded.bytes_by_link_kind == full.bytes_by_link_kind);
  CHECK(bounded.step_time >= full.step_time);
  CHECK(bounded.step_time <= full.step_time + bound);
  REQUIRE(bounded.per_gpu.size() == full.per_gpu.size());
  for (std::size_t g = 0; g < full.per_gpu.size(); ++g) {
    CAPTURE(g);
    CHECK(bounded.per_gpu[g].finish >= full.per_gpu[g].finish);
    CHECK(bounded.per_gpu[g].finish <= full.per_gpu[g].finish + bound);
  }
}

}  // namespace hybridsim::testing

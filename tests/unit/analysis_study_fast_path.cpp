// A study's communication.fast_path reaches the steps it simulates: it is part of the step key (so
// steps simulated under one path are never reused for another) and of the collectives' config.
#include <doctest/doctest.h>

#include <cstdlib>

#include "analysis/study/study_steps.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;

TEST_CASE("study steps: the fast path is part of the key and reaches the simulation") {
  const workloads::Profile gnmt = workloads::builtin_profile("gnmt");
  const analysis::StepRunContext context{.profiles = {{"gnmt", &gnmt}}, .cluster = {}};
  // GNMT data parallel on 32 GPUs: 4 DGX-1 machines under one leaf of the EDR fat tree.
  const topology::Topology cluster =
      analysis::build_cluster(context.cluster, 32, topology::presets::kEdrBandwidth);
  analysis::StepKey key{.network = "gnmt", .gpus = 32};
  CHECK(key.fast_path == sim::FastPath::Auto);  // the default, as a scenario's
  analysis::StepKey off = key, bounded = key;
  off.fast_path = sim::FastPath::Off;
  bounded.fast_path = sim::FastPath::Bounded;
  CHECK(off != key);
  CHECK(bounded != key);
  CHECK(analysis::describe(key) == "gnmt N=32 dp=32 mp=1");
  CHECK(analysis::describe(bounded) == "gnmt N=32 dp=32 mp=1 fast_path=bounded");

  const analysis::StepPoint full = analysis::simulate_key(off, context, cluster);
  const analysis::StepPoint exact = analysis::simulate_key(key, context, cluster);
  const analysis::StepPoint folded = analysis::simulate_key(bounded, context, cluster);
  // auto folds exactly: the same step to the picosecond as every rank simulated.
  CHECK(exact.step_time == full.step_time);
  // bounded: within 0.1% of the collective's time, so of the step's too.
  const std::int64_t lead = folded.step_time.ps() - full.step_time.ps();
  CHECK(std::abs(lead) <= full.step_time.ps() / 1000);
  // Each path simulates less than the one before: off every rank; auto folds only the buckets whose
  // size 32 ranks x 4 channels divides (the others in full); bounded folds them all.
  CHECK(exact.events < full.events);
  CHECK(folded.events < exact.events);
}

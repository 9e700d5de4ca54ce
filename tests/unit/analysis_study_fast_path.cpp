// A study's communication.fast_path reaches the steps it simulates: it is part of the resolved
// StepConfig the cache hashes (so steps simulated under one path are never reused for another) and
// of the collectives' config.
#include <doctest/doctest.h>

#include <cstdlib>

#include "analysis/study/study_steps.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;

namespace {

// GNMT data parallel on 32 GPUs: 4 DGX-1 machines under one leaf of the EDR fat tree.
analysis::StepRequest gnmt_dp32(sim::FastPath fast_path) {
  analysis::StepRequest r{"gnmt", analysis::cluster_overlay({}, 32, topology::presets::kEdrBandwidth)};
  for (auto o : analysis::workload_overlay("gnmt", "", {})) r.overlay.push_back(o);
  for (auto o : analysis::parallelism_overlay(32, 1, "auto")) r.overlay.push_back(o);
  for (auto o : analysis::communication_overlay(workloads::AllReduceAlgorithm::Ring,
                                                sim::Bytes::of(25'000'000), sim::Bytes::kib(512), fast_path))
    r.overlay.push_back(o);
  return r;
}

}  // namespace

TEST_CASE("study steps: the fast path is part of the step's identity and reaches the simulation") {
  const workloads::Profile gnmt = workloads::builtin_profile("gnmt");
  const analysis::StepRunContext context{.profiles = {{"gnmt", &gnmt}}};
  analysis::StepCache cache;
  const auto refs = cache.simulate({gnmt_dp32(sim::FastPath::Off), gnmt_dp32(sim::FastPath::Auto),
                                    gnmt_dp32(sim::FastPath::Bounded)},
                                   context, {.threads = 2, .on_progress = {}});
  REQUIRE(refs.size() == 3);
  CHECK(refs[0].id != refs[1].id);
  CHECK(refs[1].id != refs[2].id);
  CHECK(cache.simulated() == 3);
  // A label names the fast path when it is not the default, bounded (scenarios::kDefaultFastPath).
  CHECK(analysis::describe(refs[1].label) == "gnmt N=32 dp=32 mp=1 fast_path=auto");
  CHECK(analysis::describe(refs[2].label) == "gnmt N=32 dp=32 mp=1");

  const analysis::StepPoint full = cache.point(refs[0]);
  const analysis::StepPoint exact = cache.point(refs[1]);
  const analysis::StepPoint folded = cache.point(refs[2]);
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

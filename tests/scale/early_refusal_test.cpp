// A folded step whose embedded rings are given up (here a tie of two rings' messages at a link), whose
// try without embedding is foreseen crossed (CrossingForecast), and whose last way, every GPU and
// collective in full, is past the events cap: refused before that try and the every-GPU set-up are
// built (analysis/step/attempt_retry.cpp, set_up_retry_or_refuse). GNMT dp 4096 x mp 4 on
// 2,048 DGX-1 at the hybrid-vs-DP study's cap: before, refused for the same 3.6e9 events after
// 158 s of CPU and 3.9 GB (tests/bench/MEASUREMENTS.md, escal); now about 3 s and 0.84 GB.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/budget.h"

using namespace hybridsim;

TEST_CASE("early refusal: a fold given up whose other ways end in full past the cap is refused at once") {
  const std::vector<std::string> sets = {
      "workload.network=gnmt",         "cluster.nodes=2048",
      "parallelism={dp: 4096, mp: 4}", "communication.fast_path=bounded",
      "communication.algorithm=ring",  "communication.ddp=torch",
      "communication.reduction_bandwidth=off"};
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/cluster-hybrid-vs-dp.yaml", sets));
  analysis::StepSetup setup = analysis::step_setup(resolved);
  setup.limits.max_events = 2'000'000'000;
  // No memory cap: the every-GPU way, counted with the step bound's walk over its record since tidy10
  // (analysis/step/step_bound.h, step_bound_bytes), holds 4.56 GB, past the default 4 GiB, and would
  // be the cap named first (early_refusal_caps_test.cpp: the memory cap that refuses first is named).
  setup.limits.max_memory = 0;
  bool refused = false;
  try {
    (void)analysis::simulate_step(setup);
  } catch (const sim::BudgetExceeded& over) {
    refused = true;
    MESSAGE("estimate ", over.estimate, ", upper ", over.upper, ", cause: ", over.cause);
    // Before: "its earlier attempts were given up (4.2e9 events run, thrown away)", the tries without
    // embedding and every GPU's run to their ends first.
    CHECK(over.cause.starts_with("its fold was given up with its rings embedded, and without embedding it "
                                 "is foreseen crossed (two folded rings of other GPUs share a link"));
    // The same figure as the last way's own refusal: every GPU and collective in full, the cap to reach.
    CHECK(over.estimate > 3'500'000'000u);
    CHECK(over.estimate < 3'600'000'000u);
    CHECK(over.upper == over.estimate);
    CHECK(over.limit == 2'000'000'000u);
  }
  CHECK(refused);
}

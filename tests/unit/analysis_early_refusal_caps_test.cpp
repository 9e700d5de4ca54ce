// The early refusal of a fold given up whose other ways end in full (analysis/step/attempt_retry.cpp,
// refuse_only_in_full_remains) names the cap the ladder would meet first: the every-GPU way's memory,
// checked before that way is set up (step_runner.cpp, every_gpu), where the memory cap refuses it, else
// the events of every collective in full; and says where the other cap is passed too. It named the
// events cap alone, whichever came first: a user who raised it was then refused by the memory cap.
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

namespace {

// GNMT (torch's buckets) dp 16 x mp 4 on 8 DGX-1, bounded: its embedded fold is given up (44,385 events
// run), its try without embedding is foreseen crossed, and every GPU and collective in full counts
// 404,272 events, past 280,000; the every-GPU way, as the folded try counts it, holds 17,902,420 B
// (16,192,324 before the step bound's walk over its record was counted, tidy10; 18,229,780 before
// an event's state 12 bytes, not 32, since evstate (sim/stream_executor.h): 16,368 events × 20 B fewer).
sim::BudgetExceeded refused_with(std::int64_t max_memory) {
  const std::vector<std::string> sets = {"sweep=null", "parallelism={dp: 16, mp: 4}",
                                         "communication.fast_path=bounded", "communication.ddp=torch"};
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/cluster-hybrid-vs-dp.yaml", sets));
  analysis::StepSetup setup = analysis::step_setup(resolved);
  setup.limits.max_events = 280'000;
  setup.limits.max_memory = max_memory;
  try {
    (void)analysis::simulate_step(setup);
  } catch (const sim::BudgetExceeded& over) {
    MESSAGE("estimate ", over.estimate, ", upper ", over.upper, ", cause: ", over.cause);
    return over;
  }
  FAIL("the step was not refused");
  return {sim::BudgetExceeded::Kind::Events, 0, 0, 0, ""};
}

constexpr std::int64_t kEveryGpuBytes = 17'902'420;

}  // namespace

TEST_CASE("early refusal: the memory cap that refuses the every-GPU way first is the one named") {
  const sim::BudgetExceeded over = refused_with(12'000'000);
  // Before: Events, 404,272 over 280,000, the memory cap unsaid (raised, the events cap refused it next).
  CHECK(over.kind == sim::BudgetExceeded::Kind::Memory);
  CHECK(over.estimate == kEveryGpuBytes);
  CHECK(over.limit == 12'000'000u);
  CHECK(over.upper >= over.estimate);
  CHECK(
      over.cause.starts_with("its fold was given up with its rings embedded, and without embedding it is "
                             "foreseen crossed (two folded rings of other GPUs share a link"));
  CHECK(over.cause.find("so every GPU would be simulated, as counted before that is set up (44385 events "
                        "run, thrown away)") != std::string::npos);
  // And the other cap, which every collective in full passes after it.
  CHECK(
      over.cause.ends_with("every collective in full after it would simulate about 404272 events, past "
                           "the events limit (280000) too"));
}

TEST_CASE("early refusal: where the every-GPU way fits the memory cap, the events cap is the one named") {
  // A cap of the every-GPU way's bytes: that way passes its check, and every collective in full is
  // refused for its events first (its memory is within the cap too, so none is said).
  const sim::BudgetExceeded over = refused_with(kEveryGpuBytes);
  CHECK(over.kind == sim::BudgetExceeded::Kind::Events);
  CHECK(over.estimate == 404'272u);
  CHECK(over.upper == 404'272u);
  CHECK(over.limit == 280'000u);
  CHECK(over.cause.find("every GPU and collective would be simulated in full, as counted before that is set "
                        "up (44385 events run, thrown away)") != std::string::npos);
  CHECK(over.cause.find("memory") == std::string::npos);
  // No memory cap: the same refusal.
  CHECK(refused_with(0).cause == over.cause);
}

// Issue 14: on every shipped scenario (sweeps: their first and last points, as the golden test
// runs them), the fast path gives the step of the full simulation. Exactly under `auto`; within
// 0.1% of the step under `bounded` (rings whose chunks differ by a byte; sim/README.md), with the
// same bytes on every kind of link. Release builds only (tests/CMakeLists.txt): the full
// simulation of the 2,048-GPU example alone takes about 9 s.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <filesystem>

#include "analysis/run/scenario_run.h"
#include "scenarios/loader/resolve.h"
#include "tests/unit/fold_exact_case.h"
#include "tests/unit/shipped_scenarios.h"

using namespace hybridsim;
namespace fs = std::filesystem;

namespace {

analysis::ScenarioRun run_with(scenarios::Scenario s, sim::FastPath mode) {
  s.communication.fast_path = mode;
  return analysis::run_scenario(scenarios::resolve(s), {});
}

}  // namespace

TEST_CASE("every shipped scenario: the fast path gives the full simulation's step") {
  const fs::path source = HYBRIDSIM_SOURCE_DIR;
  const auto runs = testing::shipped_scenario_runs(source);
  REQUIRE(runs.size() >= 8);
  int folded = 0;
  for (const auto& run : runs) {
    CAPTURE(run.first);
    // Its full simulation takes 1e9 events and 5 GB; tp_dp_fold_test.cpp checks it at dp 8 and 16.
    if (run.first == "scenarios/llm/llama3-70b-1024-h100.yaml") continue;
    // Most take the default, bounded (scenarios::kDefaultFastPath): auto, exact, is checked for
    // every one, and the scenario's own mode too where it is bounded.
    const sim::FastPath mode = run.second.communication.fast_path;
    const analysis::StepResult exact = run_with(run.second, sim::FastPath::Auto).step;
    const analysis::StepResult full = run_with(run.second, sim::FastPath::Off).step;
    CAPTURE(exact.simulation.full_reason);
    testing::check_same_step(exact, full);  // every GPU's figures too
    if (mode == sim::FastPath::Bounded) {
      const analysis::StepResult fast = run_with(run.second, mode).step;
      CAPTURE(fast.simulation.full_reason);
      folded += fast.simulation.folded > 0 ? 1 : 0;
      CHECK(fast.bytes_by_link_kind == full.bytes_by_link_kind);
      CHECK(fast.messages == full.messages);
      // Within 0.1% of the full step, both ways.
      const auto diff = std::max(fast.step_time, full.step_time) - std::min(fast.step_time, full.step_time);
      CHECK(diff.ps() * 1000 <= full.step_time.ps());
    } else {
      folded += exact.simulation.folded > 0 ? 1 : 0;
    }
  }
  // Only worth something if some shipped scenarios do fold.
  CHECK(folded >= 3);
}

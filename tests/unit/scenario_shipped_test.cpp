// Every scenario shipped under scenarios/ loads, resolves and runs (sweeps: their first and last
// points, to keep the suite fast); the study files under scenarios/study/ and the validation cases
// under scenarios/validate/ (the `validate` ctest) have their own tests.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/sweep.h"

using namespace hybridsim;
namespace fs = std::filesystem;

TEST_CASE("every shipped scenario runs") {
  const fs::path root = fs::path(HYBRIDSIM_SOURCE_DIR) / "scenarios";
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const fs::path& p = entry.path();
    if (p.extension() != ".yaml" || p.string().find("/study/") != std::string::npos ||
        p.string().find("/validate/") != std::string::npos)
      continue;
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 8);
  for (const fs::path& file : files) {
    CAPTURE(file.string());
    const scenarios::Scenario s = scenarios::load_scenario(file.string());
    const auto points = scenarios::expand_sweep(s);
    std::vector<scenarios::Scenario> runs;
    if (points.empty()) {
      runs.push_back(s);
    } else {
      runs.push_back(scenarios::load_sweep_point(file.string(), points.front()));
      if (points.size() > 1) runs.push_back(scenarios::load_sweep_point(file.string(), points.back()));
    }
    for (const auto& one : runs) {
      const scenarios::ResolvedScenario resolved = scenarios::resolve(one);
      const analysis::ScenarioRun run = analysis::run_scenario(resolved, {});
      CHECK(run.step.step_time > sim::Time::zero());
      CHECK(run.step.gpus == one.parallelism.dp * one.parallelism.mp);
      // Every built-in network has a time-to-train projection.
      if (!one.workload.network.empty()) CHECK(run.time_to_train.has_value());
    }
  }
}

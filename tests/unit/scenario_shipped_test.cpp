// Every scenario shipped under scenarios/ loads, resolves and runs (sweeps: their first and last
// points, to keep the suite fast), and its key figures are pinned in tests/golden/shipped.txt: a
// change that moves a published number fails here and needs a deliberate regeneration
// (HYBRIDSIM_REGENERATE_GOLDEN=1 hybridsim_tests -tc='every shipped scenario*', then review the
// diff and the READMEs that quote the numbers). The study files under scenarios/study/ and the
// validation cases under scenarios/validate/ (the `validate` ctest) have their own tests.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "analysis/output/format_fixed.h"
#include "analysis/run/run_outputs.h"
#include "analysis/run/scenario_run.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/resolve_transformer.h"
#include "scenarios/loader/sweep.h"
#include "shipped_scenarios.h"
#include "sim/link.h"
#include "test_files.h"

using namespace hybridsim;
namespace fs = std::filesystem;

namespace {

// One line of figures: the exact step time, throughput, the mean GPU's exposed communication and
// idle time, time to train, the bytes each link kind carried and the peak memory.
std::string figures(const std::string& what, const analysis::ScenarioRun& run) {
  const analysis::StepResult& r = run.step;
  std::string line = what + ": step " + sim::format_time(r.step_time) + ", " +
                     analysis::format_fixed(r.samples_per_second, 3) + " samples/s, exposed comm " +
                     sim::format_time(r.mean.exposed_communication) + ", idle " +
                     sim::format_time(r.mean.idle);
  if (run.time_to_train)
    line += ", time to train " + analysis::format_fixed(run.time_to_train->seconds / 3600.0, 6) + " h (" +
            analysis::format_fixed(run.time_to_train->epochs, 4) + " epochs)";
  for (int k = 0; k < sim::kLinkKindCount; ++k)
    if (const auto b = r.bytes_by_link_kind[static_cast<std::size_t>(k)]; b.count() > 0)
      line += ", " + std::string(sim::link_kind_key(static_cast<sim::LinkKind>(k))) + " " +
              std::to_string(b.count()) + " B";
  // The largest GPU's peak memory (workloads/memory/memory_model.h) and whether every GPU fits.
  const auto peaks = run.memory.peaks();
  if (!peaks.empty())
    line += ", peak memory " + std::to_string(workloads::largest_peak(peaks).count()) +
            " B" + (!run.gpu_capacity ? "" : analysis::fits_in_memory(run) ? " (fits)" : " (does not fit)");
  return line + "\n";
}

}  // namespace

TEST_CASE("every shipped scenario runs, and its key figures are the pinned ones") {
  const fs::path source = HYBRIDSIM_SOURCE_DIR;
  const auto runs = testing::shipped_scenario_runs(source);
  REQUIRE(runs.size() >= 8);
  std::string pinned;
  for (const auto& [what, one] : runs) {
    const scenarios::ResolvedScenario resolved = scenarios::resolve(one);
    const analysis::ScenarioRun run = analysis::run_scenario(resolved, {});
    CHECK(run.step.step_time > sim::Time::zero());
    CHECK(run.step.gpus == one.parallelism.dp * one.parallelism.mp * one.parallelism.tp * one.parallelism.pp);
    // Every built-in network but the transformers (no efficiency curve) has a time-to-train projection.
    if (!one.workload.network.empty() && !scenarios::is_transformer(one))
      CHECK(run.time_to_train.has_value());
    pinned += figures(what, run);
  }
  const fs::path golden = source / "tests/golden/shipped.txt";
  if (std::getenv("HYBRIDSIM_REGENERATE_GOLDEN") != nullptr) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden) << pinned;
    MESSAGE("rewrote " << golden.string());
    return;
  }
  CHECK(testing::read_whole_file(golden) == pinned);
}

TEST_CASE("README's example run prints what the simulator prints") {
  // README.md quotes the table of `hybridsim run scenarios/examples/dgx1-gnmt-dp8.yaml --set
  // parallelism="{dp: 4, mp: 2}"`, indented by four more spaces; every line but the scenario's
  // (which the README leaves out) must be there as printed.
  const fs::path source = HYBRIDSIM_SOURCE_DIR;
  const std::string example = (source / "scenarios/examples/dgx1-gnmt-dp8.yaml").string();
  const std::vector<std::string> sets = {"parallelism={dp: 4, mp: 2}"};
  const scenarios::Scenario s = scenarios::load_scenario(example, sets);
  const analysis::ScenarioRun run = analysis::run_scenario(scenarios::resolve(s), {});
  const std::string readme = testing::read_whole_file(source / "README.md");
  std::istringstream table(analysis::run_summary(run, s).table);
  int checked = 0;
  for (std::string line; std::getline(table, line);) {
    if (line.starts_with("  scenario")) continue;
    CAPTURE(line);
    CHECK(readme.find("\n    " + line + "\n") != std::string::npos);
    ++checked;
  }
  CHECK(checked >= 8);
}

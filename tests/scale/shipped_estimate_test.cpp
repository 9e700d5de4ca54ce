// Issue 31 item 3: on every shipped scenario point (every point of every sweep; studies and
// validation cases have their own tests), a step's up-front estimate (analysis/step/step_estimate.h)
// against what its run does, folded as it runs by default: the events estimated over those run
// (printed, one line a point: tests/bench/MEASUREMENTS.md's table, branch est40) and the memory
// checked up front over what the run holds (its collectives' state and the messages its network held
// at once), which must bound it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "scenarios/loader/sweep.h"

using namespace hybridsim;
namespace fs = std::filesystem;

namespace {

struct Point {
  std::string name;
  scenarios::Scenario scenario;
};

std::vector<Point> every_point(const fs::path& source) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(source / "scenarios")) {
    const fs::path& p = entry.path();
    if (p.extension() == ".yaml" && p.string().find("/study/") == std::string::npos &&
        p.string().find("/validate/") == std::string::npos)
      files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  std::vector<Point> out;
  for (const fs::path& file : files) {
    const std::string name = fs::relative(file, source).generic_string();
    const scenarios::Scenario s = scenarios::load_scenario(file.string());
    const auto points = scenarios::expand_sweep(s);
    if (points.empty()) out.push_back({name, s});
    for (const auto& p : points)
      out.push_back({name + " point " + std::to_string(p.index), scenarios::load_sweep_point(file.string(), p)});
  }
  return out;
}

}  // namespace

TEST_CASE("shipped estimate: every point's events and memory against its run") {
  for (const Point& p : every_point(HYBRIDSIM_SOURCE_DIR)) {
    const scenarios::ResolvedScenario resolved = scenarios::resolve(p.scenario);
    const analysis::StepSetup setup = analysis::step_setup(resolved);
    const analysis::StepEstimate e = analysis::estimate_step(setup);
    const analysis::StepResult r = analysis::simulate_step(setup);
    const std::int64_t held =
        e.state_bytes + static_cast<std::int64_t>(r.simulation.most_in_flight) * sim::kBytesPerMessageInFlight;
    std::printf("%s | %s | est %llu run %llu ratio %.3f | mem %lld held %lld (inflight est %llu run %llu) ratio %.3f | folded %zu embedded %zu\n",
                p.name.c_str(), r.simulation.strategy.c_str(), (unsigned long long)e.events(),
                (unsigned long long)r.events, double(e.events()) / double(r.events), (long long)e.memory(),
                (long long)held, (unsigned long long)e.sure.in_flight,
                (unsigned long long)r.simulation.most_in_flight, double(held) / double(e.memory()),
                r.simulation.folded, r.simulation.embedded);
    std::fflush(stdout);
    CAPTURE(p.name);
    CHECK(held <= e.memory());
  }
}

// Issue 31 item 3: on every shipped scenario point (every point of every sweep; studies and
// validation cases have their own tests), a step's up-front estimate (analysis/step/step_estimate.h)
// against what its run does, folded as it runs by default: the events estimated over those run
// (printed, one line a point: tests/bench/MEASUREMENTS.md's table, branch est40) and the memory
// checked up front over what the run holds (its collectives' state and the messages its network held
// at once), which must bound it.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

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
#include "tests/unit/estimated_run.h"
#include "tests/unit/shipped_scenarios.h"

using namespace hybridsim;
namespace fs = std::filesystem;

namespace {
// The most an estimate may be over its run: 2, and a little more for the points whose tasks are
// counted two events each where some take one (est40's table: nvlink-bandwidth points 5-9 at 2.03,
// dp 16 x mp 2 on DGX-1 with every GPU simulated; precision-and-gpu point 5 at 2.002, counted
// between its two ways, analysis/step/step_estimate.cpp's either_way).
constexpr double kMostOver = 2.05;

// One point's estimate against its run: its memory bounds what the run held, its events within a
// factor of 2 (kMostOver over) of the run's (its last attempt's, the way it ran), wherever its fold is
// given up too: counted as folded there, five points were at 0.36-0.49 (fast-path point 0,
// precision-and-gpu points 4, 6 and 7, variability point 11). Point 7 (GNMT dp 32 x mp 2 on 8 DGX
// H100, AMP), whose embedded ring of unequal chunks strays from its bound where its FP32 twin, point
// 5, does not, is counted between the two ways (0.779; 2.002 for point 5).
void check_point(const std::string& name, const scenarios::Scenario& scenario) {
  const testing::EstimatedRun run = testing::estimate_and_run(scenario);
  const analysis::StepEstimate& e = run.estimate;
  const analysis::StepResult& r = run.result;
  const std::int64_t held = run.held;
  std::printf(
      "%s | %s | est %llu run %llu ratio %.3f | mem %lld held %lld (inflight est %llu run %llu "
      "models %llu) ratio %.3f | folded %zu embedded %zu\n",
      name.c_str(), r.simulation.strategy.c_str(), (unsigned long long)e.events(),
      (unsigned long long)r.events, double(e.events()) / double(r.events), (long long)e.memory(),
      (long long)held, (unsigned long long)e.in_flight, (unsigned long long)r.simulation.most_in_flight,
      (unsigned long long)r.simulation.model_in_flight, double(held) / double(e.memory()),
      r.simulation.folded, r.simulation.embedded);
  std::fflush(stdout);
  CAPTURE(name);
  CHECK(held <= e.memory());
  const double ratio = double(e.events()) / double(r.events);
  CHECK(ratio >= 0.5);
  CHECK(ratio <= kMostOver);
}
}  // namespace

TEST_CASE("shipped estimate: every point's events and memory against its run") {
  // Not a structured binding: CAPTURE takes its argument in a lambda, which clang before 16 refuses
  // for a binding (the ASan build of .ci/run).
  for (const auto& point : testing::shipped_scenario_runs(HYBRIDSIM_SOURCE_DIR, true))
    check_point(point.first, point.second);
}

TEST_CASE("shipped estimate: shipped scenarios with what-ifs the estimate once missed") {
  // Mixtral 8x7B ep 8 with trees: the experts' all-to-alls cross a folded tree of the dense
  // gradients, and the run gives its fold up (estimated at 0.27 of the run before est44).
  const std::string file = "scenarios/llm/mixtral-8x7b-2x-dgx-h100-ep8.yaml";
  const std::vector<std::string> sets = {"communication.algorithm=tree"};
  check_point(file + " " + sets.front(), scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/" + file, sets));
}

TEST_CASE("shipped estimate: BigLSTM DP under algorithm auto on 33 and 40 DGX-1, estimated the way it runs") {
  // The hybrid-vs-DP scenario's BigLSTM on 264 and 320 GPUs. At 320 NCCL's model picks trees for its
  // buckets; they start on their stream as the softmax embedding's folded all-gather finishes and
  // run in full, and the input embedding's all-gather after them (CrossingForecast::expected_in_full):
  // estimated folded at 0.099 of its run before. At 264 its rings through 33 machines repeat no
  // pattern: each runs a model of every position, counted at every step (ring_steps_simulated);
  // counted by the jump's fit, 0.33 of its run (tests/bench/MEASUREMENTS.md, late2).
  const std::string file = "scenarios/cluster-hybrid-vs-dp.yaml";
  for (const int nodes : {33, 40}) {
    const std::vector<std::string> sets = {
        "sweep=null", "workload.network=biglstm", "cluster.nodes=" + std::to_string(nodes),
        "parallelism.dp=" + std::to_string(8 * nodes), "communication.algorithm=auto"};
    check_point(file + " " + sets[2], scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/" + file, sets));
  }
}

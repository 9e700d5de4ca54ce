// Issues 30/31: sweep, study and plan estimate every step before any runs; where that estimate
// foresees the step's first fold given up after its run (StepEstimate::fold_given_up), the step they
// then run does not try that fold, as `hybridsim run`'s does (analysis/step/step_estimate.h). Before,
// BigLSTM DP on 40 DGX-1 under algorithm auto ran 8,829,036 events folded in each and threw them away.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_runner.h"
#include "analysis/study/study_steps.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;

namespace {

// BigLSTM DP on 40 DGX-1 (320 GPUs) under algorithm auto: its estimate foresees the fold given up
// (a ring the representatives and members share starts in full on links still busy:
// tests/unit/analysis_fold_forecast_test.cpp, "a tree that starts while a folded ring holds ...").
const std::vector<std::string> kBigLstm320 = {"sweep=null", "workload.network=biglstm", "cluster.nodes=40",
                                              "parallelism.dp=320", "communication.algorithm=auto"};

scenarios::ResolvedScenario biglstm_320() {
  return scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/cluster-hybrid-vs-dp.yaml", kBigLstm320));
}

}  // namespace

TEST_CASE("fold skipped: a sweep point whose estimate foresees its fold given up does not try it") {
  const scenarios::ResolvedScenario resolved = biglstm_320();
  const analysis::StepSetup setup = analysis::step_setup(resolved);
  // As the sweep does (sweep_plan.cpp, sweep_point_runner.cpp): every point estimated before any runs, and
  // its run handed that estimate.
  analysis::ScenarioRunOptions point;
  point.step_estimate = analysis::estimate_step(setup);
  const analysis::ScenarioRun swept = analysis::run_scenario(resolved, point);
  // `hybridsim run`'s own estimate and run, which skipped the fold before.
  const analysis::ScenarioRun run = analysis::run_scenario(resolved, {});
  CHECK(swept.step.simulation.given_up_events == 0);  // 8,829,036 on main adc5ef5
  CHECK(run.step.simulation.given_up_events == 0);
  CHECK(swept.step.simulation.strategy == "every GPU simulated");
  // Said as foreseen, as run's: the shared ring never ran.
  CHECK(swept.step.simulation.step_fold_reason.starts_with(
      "a ring they share would run in full, foreseen before the run (the fold not tried): "));
  CHECK(swept.step.simulation.refused == run.step.simulation.refused);
  CHECK(swept.step.step_time == run.step.step_time);
  CHECK(swept.step.events == run.step.events);
}

TEST_CASE(
    "fold skipped: a study's or plan's step whose estimate foresees its fold given up does not try it") {
  const workloads::Profile biglstm = workloads::builtin_profile("biglstm");
  const analysis::StepRunContext context{.profiles = {{"biglstm", &biglstm}}};
  analysis::StepRequest request{"biglstm",
                                analysis::cluster_overlay({}, 320, topology::presets::kEdrBandwidth)};
  for (const std::string& o : analysis::workload_overlay("biglstm", "", {})) request.overlay.push_back(o);
  for (const std::string& o : analysis::parallelism_overlay(320, 1, "auto")) request.overlay.push_back(o);
  for (const std::string& o : analysis::communication_overlay(
           workloads::AllReduceAlgorithm::Auto, std::nullopt, sim::Bytes::kib(512), sim::FastPath::Bounded))
    request.overlay.push_back(o);
  analysis::StepCache cache;
  const auto refs = cache.simulate({request}, context, {.threads = 1, .on_progress = {}});
  REQUIRE(refs.size() == 1);
  const analysis::StepPoint point = cache.point(refs[0]);
  CHECK(point.given_up_events == 0);  // 8,829,036 on main adc5ef5 (simulate_step tried the fold)
  // The same step as `hybridsim run`'s of the scenario.
  const analysis::ScenarioRun run = analysis::run_scenario(biglstm_320(), {});
  CHECK(point.step_time == run.step.step_time);
  CHECK(point.events == run.step.events);
}

TEST_CASE(
    "fold skipped: every step of a variability run whose estimate foresees its fold given up does not "
    "try it") {
  // GNMT DP on 8 DGX-1 under algorithm auto, three steps of WMT16 sentence lengths batched by bins:
  // the workers of a step are alike (one bin a step), so each step folds as far as its program goes,
  // and each step's estimate foresees its fold given up (a ring the representatives and members share
  // starts in full on links still busy). Step 1 skipped it; steps 2 and 3 ran it and threw it away.
  const std::vector<std::string> sets = {
      "sweep=null",
      "workload.network=gnmt",
      "cluster.nodes=8",
      "parallelism={dp: 64}",
      "communication.algorithm=auto",
      "variability={steps: 3, sequence_lengths: wmt16-en-de, batching: bucketed}"};
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/cluster-hybrid-vs-dp.yaml", sets));
  const analysis::ScenarioRun run = analysis::run_scenario(resolved, {});
  // Every step's count summed (StepResult::Simulation::given_up_events): 648,990 on main e1c62a4 with
  // that sum alone added, steps 2 and 3 trying the fold (main kept step 1's count only, 0).
  CHECK(run.step.simulation.given_up_events == 0);
  CHECK(run.step.simulation.step_fold_reason.starts_with(
      "a ring they share would run in full, foreseen before the run (the fold not tried): "));
  // Each step alone, its fold tried (no estimate handed on): given up after its run in every step,
  // and the same step as the run's without it.
  analysis::StepSetup setup = analysis::step_setup(resolved);
  std::uint64_t events = 0;
  for (int step = 0; step < 3; ++step) {
    CAPTURE(step);
    setup.step_index = step;
    const analysis::StepResult tried = analysis::simulate_step(setup);
    CHECK(tried.simulation.given_up_events > 0);
    CHECK(tried.simulation.strategy == "every GPU simulated");
    events += tried.events;
  }
  CHECK(run.step.events == events);
}

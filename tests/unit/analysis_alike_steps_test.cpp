// Several variability steps with nothing drawn (analysis/step/step_series.h, steps_alike): step 1 is
// simulated once and stands for every step. What the run prints and writes is byte for byte what
// simulating each step and combining them gives, and only one step's work is done (the progress
// lines never name step 2).
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/api/hybridsim.h"
#include "analysis/run/run_outputs.h"
#include "analysis/run/scenario_run.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_progress.h"
#include "analysis/step/step_series.h"
#include "analysis/sweep/sweep_plan.h"
#include "analysis/sweep/sweep_runner.h"
#include "analysis/trace/step_trace_options.h"
#include "scenarios/loader/resolve.h"
#include "sim/error.h"
#include "tests/unit/test_files.h"

using namespace hybridsim;

namespace {

// Every line a step would print, due at once (no first delay, no interval), its text kept.
struct Lines final : analysis::SimulationProgress {
  std::vector<std::string> what;
  Lines() : SimulationProgress(std::chrono::seconds(0), std::chrono::seconds(0)) {}

 protected:
  void report(const analysis::SimulationProgressReport& r) override { what.emplace_back(r.what); }
};

// GNMT data parallel on 16 GPUs of 2 DGX-1, without its variability.
const std::string kGnmtDp16 =
    "cluster: {preset: dgx1-v100, nodes: 2}\nworkload: {network: gnmt}\nparallelism: {dp: 16}\n";

std::string scenario_text(int steps) {
  return kGnmtDp16 + "variability: {steps: " + std::to_string(steps) + "}\n";
}

// `run`'s summary (its table and JSON) is byte for byte that of its steps simulated one by one,
// `each`, combined in their order as the run did before it knew they were alike.
void check_as_each(const api::RunReport& run, const std::vector<analysis::StepResult>& each) {
  const scenarios::ResolvedScenario resolved = scenarios::resolve(run.scenario);
  analysis::ScenarioRun combined = run.run;
  combined.step = analysis::combine_steps(each, resolved.profile);
  const analysis::RunSummary expected = analysis::run_summary(combined, run.scenario);
  CHECK(run.summary.table == expected.table);
  CHECK(run.summary.json == expected.json);
}

}  // namespace

TEST_CASE("alike variability steps: step 1 simulated once gives every step's summary byte for byte") {
  Lines lines;
  std::vector<std::string> told;  // the notes, as they were said
  const api::RunReport three =
      api::run({.path = "alike.yaml", .text = scenario_text(3)},
               {.write_outputs = false, .progress = &lines, .on_note = [&](const std::string& note) {
                  told.push_back(note);
                }});
  const api::RunReport one =
      api::run({.path = "alike.yaml", .text = scenario_text(1)}, {.write_outputs = false});

  // Each of the three is step 1 again: nothing is drawn.
  check_as_each(three, {one.run.step, one.run.step, one.run.step});
  CHECK(three.run.step.spread.steps == 3);
  CHECK(three.run.step.events == 3 * one.run.step.events);
  // The collectives are counted over the steps as the events, messages and folded ones are: the
  // line said "11 collectives and transfers, ... over 3 steps" and "folded 33 of 11" (hunt4).
  CHECK(three.run.step.messages == 3 * one.run.step.messages);
  CHECK(three.run.step.collectives == 3 * one.run.step.collectives);
  CHECK(three.run.step.simulation.folded == 3 * one.run.step.simulation.folded);
  CHECK(three.run.step.simulation.folded <= three.run.step.collectives);
  CHECK(three.summary.table.find(std::to_string(3 * one.run.step.collectives) +
                                 " collectives and transfers, " + std::to_string(three.run.step.messages) +
                                 " messages") != std::string::npos);

  // One step's work: the progress lines name step 1 and never step 2 or 3, and say so.
  REQUIRE_FALSE(lines.what.empty());
  // Each of the step's says the one step simulated stands for all three (its time left is the run's);
  // the others are the run's set-up before it ("the run, building the cluster's topology: ...").
  const std::string alike = "step 1 of 3 alike steps, simulated once for all, ";
  CHECK(std::any_of(lines.what.begin(), lines.what.end(),
                    [&](const std::string& w) { return w.starts_with(alike); }));
  for (const std::string& w : lines.what) {
    CAPTURE(w);
    CHECK((w.starts_with(alike) || w.starts_with("the run, ")));
  }
  CHECK(std::none_of(lines.what.begin(), lines.what.end(), [](const std::string& w) {
    return w.starts_with("step 2 of 3") || w.starts_with("step 3 of 3");
  }));
  // Said before the step, and kept in the report.
  REQUIRE(told.size() == 1);
  CHECK(told == three.notes);
  CHECK(told[0].find("step 1 is simulated once and stands for each") != std::string::npos);
}

TEST_CASE("alike variability steps: a traced step among them, every GPU in full, combines as each would") {
  // Step 2 of 3 traced with every GPU simulated in full: it counts its own events (more than a folded
  // step's), the two others an untraced step's, and the means are of the three in their order.
  const auto dir =
      std::filesystem::temp_directory_path() / ("hybridsim-alike-steps-trace-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto traced = [&](int steps, int step, const char* file) {
    api::RunRequest request{.write_outputs = false, .trace = dir / file, .trace_step = step};
    request.trace_options.all_gpus = true;
    return api::run({.path = "alike.yaml", .text = scenario_text(steps)}, request);
  };
  const api::RunReport three = traced(3, 2, "three.json");
  const api::RunReport alone = traced(1, 1, "one.json");  // the traced step by itself
  const api::RunReport untraced =
      api::run({.path = "alike.yaml", .text = scenario_text(1)}, {.write_outputs = false});
  REQUIRE(alone.run.step.events != untraced.run.step.events);  // the trace takes another path

  check_as_each(three, {untraced.run.step, alone.run.step, untraced.run.step});
  CHECK(three.run.step.events == 2 * untraced.run.step.events + alone.run.step.events);
  std::filesystem::remove_all(dir);
}

TEST_CASE("one step traced at its slowest is that step, simulated once with its trace") {
  // A run of one step (no variability) with --trace-step slowest simulated the step, then again with
  // its trace, and required the two times equal; the untraced run folds Llama 3 8B's collectives at
  // tp 8 (bounded, within a few hundred ps) where the traced one runs them in full, so the shipped
  // llama3-8b-dgx-h100-tp8.yaml stopped with "internal error: the slowest step simulated again for
  // its trace took another time" (exit 3). One step is the slowest: it is traced as the first is.
  const auto dir =
      std::filesystem::temp_directory_path() / ("hybridsim-slowest-of-one-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const std::string text =
      "cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, model: {layers_simulated: 2}}\n"
      "parallelism: {dp: 1, tp: 8}\ntraining: {micro_batch: 1, global_batch: 1}\n";
  auto traced = [&](int step, const char* file) {
    return api::run({.path = "tp8.yaml", .text = text},
                    {.write_outputs = false, .trace = dir / file, .trace_step = step});
  };
  const api::RunReport first = traced(1, "first.json");
  const api::RunReport slowest = traced(analysis::kSlowestStep, "slowest.json");
  CHECK(slowest.run.step.step_time == first.run.step.step_time);
  CHECK(slowest.run.step.events == first.run.step.events);  // one step simulated, not two
  std::string json = slowest.summary.json;                  // the same but for the trace file's name
  json.replace(json.find("slowest.json"), 12, "first.json");
  CHECK(json == first.summary.json);
  std::filesystem::remove_all(dir);
}

TEST_CASE("alike variability steps: a kernel jitter draws, so every step is simulated") {
  analysis::StepSetup s;
  s.variability = {.steps = 3};
  CHECK(analysis::steps_alike(s));
  s.variability.kernel_jitter = 0.01;
  CHECK_FALSE(analysis::steps_alike(s));
  s.variability = {.steps = 1};
  CHECK_FALSE(analysis::steps_alike(s));  // one step: nothing to stand for
}

namespace {

// One step's estimate of `yaml` (resolved as run resolves it).
std::uint64_t step_estimate_events(const std::string& yaml) {
  const scenarios::ResolvedScenario resolved = scenarios::resolve(scenarios::parse_scenario(yaml, "s.yaml"));
  return analysis::estimate_step(analysis::step_setup(resolved)).events();
}

}  // namespace

TEST_CASE("alike variability steps: a sweep's estimate counts the one step simulated, drawn steps each") {
  // A sweep tells its events in all before any point runs (sweep_runner.cpp). A point of 3 alike steps
  // simulates step 1 once: its estimate is one step's. A point of 3 drawn steps (kernel jitter)
  // simulates each: three times its step's, the folded all-reduce's models as its tasks. Before, both
  // counted their tasks and the collectives that cannot fold 3 times and the models once.
  const std::string& base = kGnmtDp16;
  const std::uint64_t alike = step_estimate_events(base + "variability: {steps: 3}\n");
  const std::uint64_t drawn = step_estimate_events(base + "variability: {steps: 3, kernel_jitter: 0.05}\n");
  REQUIRE(alike > 0);
  const auto dir = hybridsim::testing::fresh_temp_dir("alike-steps-sweep");
  const std::string sweep = base +
                            "sweep:\n  mode: product\n  parameters:\n    - path: variability\n"
                            "      values: [{steps: 3}, {steps: 3, kernel_jitter: 0.05}]\n";
  analysis::SweepOptions options;
  options.out = dir;
  options.jobs = 1;
  options.progress = true;
  std::ostringstream err;
  std::streambuf* was = std::cerr.rdbuf(err.rdbuf());
  try {
    analysis::run_sweep({.text = sweep, .path = (dir / "s.yaml").string(), .base_dir = dir}, options);
  } catch (...) {
    std::cerr.rdbuf(was);
    throw;
  }
  std::cerr.rdbuf(was);
  const std::string said = "sweep: 2 points to simulate, about " +
                           sim::BudgetExceeded::count_text(alike + 3 * drawn) + " events in all";
  CAPTURE(err.str());
  CHECK(err.str().find(said) != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("alike variability steps: the estimate and the events limit both speak of the steps simulated") {
  // A cap of two drawn steps' events (as run). 3 alike steps simulate step 1 once: the sweep's
  // estimate of such a point (SweepPlan::estimates, what a sweep sums and tells before any point
  // runs) is one step's estimate, under the cap, and the run passes the cap. 3 drawn steps (kernel
  // jitter) simulate each: the estimate is three of its step's, over the cap, and the run is refused
  // after step 1, its events (step 1's times 3) over it. Before 1fc497a the sweep estimated the alike
  // point at its tasks and sure collectives 3 times (over the cap that its run passes) and the drawn
  // point's folded models once.
  const std::string& base = kGnmtDp16;
  const std::string jitter = "variability: {steps: 3, kernel_jitter: 0.05}\n";
  const api::RunReport one =
      api::run({.path = "s.yaml", .text = base + "variability: {steps: 1, kernel_jitter: 0.05}\n"},
               {.write_outputs = false});
  const std::uint64_t cap = 2 * one.run.step.events;
  const std::string limit = "simulation: {max_events: " + std::to_string(cap) + "}\n";
  const std::uint64_t alike_step = step_estimate_events(base + limit + "variability: {steps: 3}\n");
  const std::uint64_t drawn_step = step_estimate_events(base + limit + jitter);
  REQUIRE(alike_step > 0);

  const auto dir = hybridsim::testing::fresh_temp_dir("alike-steps-limit");
  const std::string sweep = base + limit +
                            "sweep:\n  mode: product\n  parameters:\n    - path: variability\n"
                            "      values: [{steps: 3}, {steps: 3, kernel_jitter: 0.05}]\n";
  analysis::SweepOptions options;
  options.out = dir;
  options.jobs = 1;
  const analysis::SweepPlan plan = analysis::plan_sweep(
      {.text = sweep, .path = (dir / "s.yaml").string(), .base_dir = dir}, options, true);
  std::filesystem::remove_all(dir);
  REQUIRE(plan.estimates.size() == 2);
  CHECK(plan.estimates.at(0).events() == alike_step);
  CHECK(plan.estimates.at(1).events() == 3 * drawn_step);
  CHECK(plan.estimates.at(0).events() <= cap);
  CHECK(plan.estimates.at(1).events() > cap);

  const api::RunReport alike = api::run(
      {.path = "s.yaml", .text = base + limit + "variability: {steps: 3}\n"}, {.write_outputs = false});
  CHECK(alike.run.step.spread.steps == 3);
  try {
    api::run({.path = "s.yaml", .text = base + limit + jitter}, {.write_outputs = false});
    FAIL("3 drawn steps passed a cap of 2 steps' events");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("once its 3 variability steps run at about") != std::string::npos);
  }
}

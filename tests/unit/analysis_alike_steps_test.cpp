// Several variability steps with nothing drawn (analysis/step/step_series.h, steps_alike): step 1 is
// simulated once and stands for every step. What the run prints and writes is byte for byte what
// simulating each step and combining them gives, and only one step's work is done (the progress
// lines never name step 2).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/api/hybridsim.h"
#include "analysis/run/run_outputs.h"
#include "analysis/step/step_progress.h"
#include "analysis/step/step_series.h"
#include "scenarios/loader/resolve.h"

using namespace hybridsim;

namespace {

// Every line a step would print, due at once (no first delay, no interval), its text kept.
struct Lines final : analysis::SimulationProgress {
  std::vector<std::string> what;
  Lines() : SimulationProgress(std::chrono::seconds(0), std::chrono::seconds(0)) {}

 protected:
  void report(const analysis::SimulationProgressReport& r) override { what.emplace_back(r.what); }
};

std::string scenario_text(int steps) {
  return "cluster: {preset: dgx1-v100, nodes: 2}\nworkload: {network: gnmt}\nparallelism: {dp: 16}\n"
         "variability: {steps: " +
         std::to_string(steps) + "}\n";
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

  // One step's work: the progress lines name step 1 and never step 2 or 3.
  REQUIRE_FALSE(lines.what.empty());
  CHECK(std::any_of(lines.what.begin(), lines.what.end(),
                    [](const std::string& w) { return w.starts_with("step 1 of 3"); }));
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
  const auto dir = std::filesystem::temp_directory_path() / "hybridsim-alike-steps-trace";
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

TEST_CASE("alike variability steps: a kernel jitter draws, so every step is simulated") {
  analysis::StepSetup s;
  s.variability = {.steps = 3};
  CHECK(analysis::steps_alike(s));
  s.variability.kernel_jitter = 0.01;
  CHECK_FALSE(analysis::steps_alike(s));
  s.variability = {.steps = 1};
  CHECK_FALSE(analysis::steps_alike(s));  // one step: nothing to stand for
}

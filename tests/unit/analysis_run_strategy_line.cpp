// A run's two strategy lines agree with its own figures (issue 31, verdicts against their rows): the
// settings' "parallelism" line (summary.json's context) and the table's "strategy" line say the dp,
// the dimensions and the global batch that summary.json's "dp" and "global_batch" hold, and a
// transformer's never says the 2017 networks' "mp"; and a plan's footnote on extrapolated epochs
// stands under a table only where a row it prints carries the mark.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "analysis/plan/planner.h"
#include "analysis/run/run_outputs.h"
#include "analysis/run/scenario_run.h"
#include "analysis/study/study_steps.h"
#include "scenarios/loader/resolve.h"

using namespace hybridsim;

namespace {

struct Lines {
  std::string parallelism;  // the settings' line
  std::string strategy;     // the table's line, after its key
  int dp = 0;
  std::int64_t global_batch = 0;
};

Lines lines_of(const std::string& yaml) {
  const scenarios::ResolvedScenario r = scenarios::resolve(scenarios::parse_scenario(yaml, "s.yaml"));
  const analysis::ScenarioRun run = analysis::run_scenario(r, {});
  Lines out;
  for (const auto& [key, value] : run.context)
    if (key == "parallelism") out.parallelism = value;
  const std::string table = analysis::run_summary(run, r.scenario).table;
  const std::string key = "  strategy";
  const auto at = table.find(key);
  REQUIRE(at != std::string::npos);
  const auto start = table.find_first_not_of(' ', at + key.size());
  out.strategy = table.substr(start, table.find('\n', start) - start);
  out.dp = run.step.dp;
  out.global_batch = run.step.global_batch;
  return out;
}

}  // namespace

TEST_CASE("run: the settings' parallelism line says the strategy and global batch of the run's figures") {
  struct Case {
    const char* yaml;
    int dp;
    std::int64_t global_batch;
    const char* line;  // both lines, by hand from the scenario
  };
  const Case cases[] = {
      // Gradient accumulation: GNMT's 128 pairs a worker x dp 8 = 1,024 a micro-batch, and
      // training.global_batch 4096 makes 4 of them a step. Main's settings line said "global batch 1024".
      {"cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n"
       "training: {global_batch: 4096}\n",
       8, 4096, "dp 8 × mp 1 = 8 GPUs, global batch 4096"},
      // Tensor parallelism: 8 H100s as tp 4 x dp 2, one sequence a replica's micro-batch, so a global
      // batch of 2. Main's line said "dp 8 × mp 1 = 8 GPUs, global batch 8".
      {"cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, model: {layers_simulated: 1}}\n"
       "parallelism: {dp: 2, tp: 4}\n",
       2, 2, "tp 4 × dp 2 = 8 GPUs, global batch 2"},
      // A transformer at tp 1: dp alone (hunt42's nit: "dp 8 × mp 1", mp being the 2017 networks' word).
      {"cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, model: {layers_simulated: 1}}\n"
       "parallelism: {dp: 8}\n",
       8, 8, "dp 8 = 8 GPUs, global batch 8"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.line);
    const Lines l = lines_of(c.yaml);
    CHECK(l.dp == c.dp);
    CHECK(l.global_batch == c.global_batch);
    CHECK(l.parallelism == c.line);
    CHECK(l.strategy == c.line);
  }
}

TEST_CASE("plan: the footnote on extrapolated epochs only under rows that carry the mark") {
  // GNMT on 8 GPUs: dp 8 trains at 1,024 pairs, where its curve is joined to a measured point, and
  // ranks first; the hybrids at 512 and below lie outside the curve (marked *). Main printed the
  // footnote under any table once any ranked row was marked, printed or not.
  analysis::PlanRequest request = analysis::make_plan_request({.model = "gnmt", .gpus = 8});
  request.search.bucket_sizes = {sim::Bytes::of(25'000'000)};
  analysis::StepCache cache;
  const analysis::PlanResult r = analysis::plan(request, &cache);
  REQUIRE(r.ranked.size() >= 2);
  REQUIRE(r.ranked[0].ttt.has_value());
  REQUIRE_FALSE(r.ranked[0].ttt->extrapolated);
  bool any_marked = false;
  for (const auto& c : r.ranked) any_marked = any_marked || (c.ttt && c.ttt->extrapolated);
  REQUIRE(any_marked);  // else the case could not tell the two rules apart
  const std::string footnote = "* epochs extrapolated outside the curve's supported batch range";
  std::ostringstream top1, all;
  analysis::print_plan(r, top1, 1);
  analysis::print_plan(r, all, static_cast<int>(r.ranked.size()));
  CHECK(top1.str().find(footnote) == std::string::npos);
  CHECK(all.str().find(footnote) != std::string::npos);
}

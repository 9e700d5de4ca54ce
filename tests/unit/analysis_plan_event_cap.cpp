// The plan's own cap on a candidate's events (kPlanStepEvents, --max-events): a candidate past it is
// not simulated, said so apart from the ranking, and never ranked; the best is said to be the best
// of the simulated. A small analogue of GNMT on 16,384 GPUs (tests/bench/MEASUREMENTS.md, plan16k4).
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "analysis/plan/planner.h"

using namespace hybridsim;

TEST_CASE("plan: without --max-events each candidate is capped at the plan's default, said in the report") {
  const auto r = analysis::make_plan_request({.model = "gnmt", .gpus = 64});
  CHECK(std::find(r.limits.begin(), r.limits.end(), "simulation.max_events=200000000") != r.limits.end());
  CHECK(r.events_cap == "--max-events 200000000, the plan's default");
  // Given, it is the user's: no default said.
  const auto given = analysis::make_plan_request({.model = "gnmt", .gpus = 64, .max_events = "0"});
  CHECK(std::find(given.limits.begin(), given.limits.end(), "simulation.max_events=0") != given.limits.end());
  CHECK(given.events_cap == "--max-events 0");
}

TEST_CASE("plan: a candidate past --max-events is listed as not simulated; the best is of the simulated") {
  // GNMT on 16 GPUs: the DP candidates (1.3-2.1e5 events) and the hierarchical 8 x 2 stacks ones
  // (1.05-1.08e5 once their fold is given up) pass 1e5 events; the others run.
  analysis::PlanCommandOptions o{.model = "gnmt", .gpus = 16};
  o.max_events = "100000";
  o.threads = 1;
  const analysis::PlanResult r = analysis::plan(analysis::make_plan_request(o));
  std::ostringstream printed;
  analysis::print_plan(r, printed);
  const std::string text = printed.str();
  CHECK(r.not_simulated.size() == 9);
  CHECK(r.ranked.size() == 39);
  for (const auto& c : r.ranked)  // no ranked row is one that was not simulated
    CHECK(std::none_of(r.not_simulated.begin(), r.not_simulated.end(),
                       [&](const analysis::PlanResult::NotSimulated& n) { return n.label == c.step.label; }));
  CHECK(r.ranked[0].step.label.mp == 2);  // DP alone was not simulated, so not ranked above it
  CHECK(text.find("9 not simulated (over their caps; listed below, not ranked)") != std::string::npos);
  CHECK(text.find("best of the simulated (9 not simulated, listed below)") != std::string::npos);
  CHECK(text.find("not simulated: 9 configurations past their caps") != std::string::npos);
  CHECK(text.find("(events: --max-events 100000)") != std::string::npos);
  const std::string dp_row = "not simulated: 16 x 1, 6.25 MB buckets, ring: the step would simulate about ";
  CHECK(text.find(dp_row + "143744 events") != std::string::npos);
  CHECK(text.find("left out: ") == text.find("left out: mp = 8 stacks"));  // none past a cap is "left out"
}

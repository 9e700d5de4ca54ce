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

TEST_CASE("plan: a candidate past --max-events is listed as not simulated, the best is of the simulated") {
  // GNMT on 16 GPUs: three DP ring candidates (1.07e5 events), the DP hierarchical ones (1.6-1.8e5) and the
  // hierarchical 8 x 2 stacks ones (1.05-1.08e5 once their fold is given up) pass 1e5 events.
  analysis::PlanCommandOptions o{.model = "gnmt", .gpus = 16};
  o.max_events = "100000";
  o.threads = 1;
  const analysis::PlanResult r = analysis::plan(analysis::make_plan_request(o));
  std::ostringstream printed;
  analysis::print_plan(r, printed);
  const std::string text = printed.str();
  CHECK(r.not_simulated.size() == 8);
  CHECK(r.ranked.size() == 40);
  for (const auto& c : r.ranked)  // no ranked row is one that was not simulated
    CHECK(std::none_of(r.not_simulated.begin(), r.not_simulated.end(),
                       [&](const analysis::PlanResult::NotSimulated& n) { return n.label == c.step.label; }));
  CHECK(text.find("8 not simulated (over their caps; listed below, not ranked)") != std::string::npos);
  CHECK(text.find("best of the simulated (8 not simulated, listed below)") != std::string::npos);
  CHECK(text.find("not simulated: 8 configurations past their caps") != std::string::npos);
  CHECK(text.find("(events: --max-events 100000)") != std::string::npos);
  const std::string dp_row = "not simulated: 16 x 1, 6.25 MB buckets, ring: the step would simulate about ";
  CHECK(text.find(dp_row + "107248 events") != std::string::npos);
  CHECK(text.find("left out: ") == text.find("left out: mp = 8 stacks"));  // none past a cap is "left out"
}

TEST_CASE("plan: candidates are simulated under run's default fast path (bounded), as run simulates them") {
  // sim::CollectiveConfig's `auto` folded no ring of unequal chunks: GNMT's DP candidates on 16,384 GPUs
  // ran in full, about 6.4e10 events each.
  const analysis::PlanResult r =
      analysis::plan(analysis::make_plan_request({.model = "gnmt", .gpus = 16, .threads = 1}));
  REQUIRE(!r.ranked.empty());
  for (const auto& c : r.ranked) CHECK(c.step.label.fast_path == sim::FastPath::Bounded);
  CHECK(r.not_simulated.empty());  // 16 GPUs: every candidate is far below the plan's default cap
}

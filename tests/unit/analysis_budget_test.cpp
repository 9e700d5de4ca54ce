// A step's simulation budget (sim/budget.h) end to end: estimated before the step starts, refused
// with the scenario's words past the cap, run as before under a raised one.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/budget_error.h"
#include "analysis/step/step_estimate.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/error.h"
#include "sim/units.h"

using namespace hybridsim;

namespace {

analysis::ScenarioRun run_with(const std::vector<std::string>& sets) {
  const std::filesystem::path file =
      std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/examples/dgx1-gnmt-dp8.yaml";
  return analysis::run_scenario(scenarios::resolve(scenarios::load_scenario(file.string(), sets)), {});
}

// Mixtral 8x7B ep 8 on 2 DGX H100 with trees, under one more --set (its cap).
analysis::ScenarioRun run_mixtral_trees(const std::string& cap) {
  const std::filesystem::path file =
      std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/llm/mixtral-8x7b-2x-dgx-h100-ep8.yaml";
  const std::vector<std::string> sets = {"communication.algorithm=tree", cap};
  return analysis::run_scenario(scenarios::resolve(scenarios::load_scenario(file.string(), sets)), {});
}

// The refusal's words for `cap`, the cap they quote ("raise it to CAP or more"; empty: none) and the
// one its figures carry (BudgetRefused::needed, 0: none), which must be the same.
struct Refusal {
  std::string what;
  std::string quoted;
  std::uint64_t needed = 0;
};
Refusal refusal_at(const std::string& cap) {
  try {
    run_mixtral_trees(cap);
  } catch (const analysis::BudgetRefusal& e) {
    Refusal r{e.what(), {}, e.refused().needed};
    const auto to = r.what.find("raise it to ");
    if (to != std::string::npos) r.quoted = r.what.substr(to + 12, r.what.find(" or more", to) - (to + 12));
    const bool events = e.refused().kind == sim::BudgetExceeded::Kind::Events;
    const std::string needed = events
                                   ? std::to_string(r.needed)
                                   : sim::format_bytes(sim::Bytes::of(static_cast<std::int64_t>(r.needed)));
    CHECK(r.quoted == (r.needed != 0 ? needed : std::string()));
    CHECK(r.what.ends_with(e.refused().words));
    return r;
  }
  FAIL("the step ran over its cap");
  return {};
}

}  // namespace

TEST_CASE("budget: a step over its event cap is refused up front, and runs under a raised cap") {
  // GNMT DP 8 on one DGX-1 with every ring in full: 18208 tasks on the GPUs' streams (2 events
  // each at most) and 22848 messages, each one NVLink hop (2 events: the link, the delivery):
  // 36416 + 45696 = 82112 events estimated. (The run itself takes 63720, as its summary says.)
  const std::string off = "communication.fast_path=off";
  try {
    run_with({off, "simulation.max_events=82111"});
    FAIL("the step ran over its cap");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.ends_with(
        "dgx1-gnmt-dp8.yaml: the step would simulate about 82112 events (under a second at 5e6 "
        "events/s), over the limit simulation.max_events = 82111; raise it to 82112 or more (--max-events N "
        "or "
        "simulation.max_events, 0 = no limit) or set communication.fast_path: auto"));
  }
  const analysis::ScenarioRun raised = run_with({off, "simulation.max_events=82112"});
  const analysis::ScenarioRun unlimited = run_with({off, "simulation.max_events=unlimited"});
  CHECK(raised.step.events == 63720);
  CHECK(raised.step.step_time == unlimited.step.step_time);
  CHECK(raised.step.messages == 22848);
}

TEST_CASE("budget: a refusal quotes what the step takes if its fold is given up, and that cap runs it") {
  // Mixtral 8x7B ep 8 on 2 DGX H100 with trees: its folded attempt is estimated at 293,424 events
  // (its trees' models), is given up as it runs, and the next attempt (every GPU) takes 1,081,008. A
  // cap raised to the first figure quoted was refused again by the second (issue 31); then the
  // refusal quoted the full path's figure beside the folded attempt's 293,424 ("up to 1.1e6"), where a
  // one-point sweep quoted estimate_step's 1.1e6 alone. Now `run` checks estimate_step's figure before
  // any attempt, as the sweep does (fix46): the step's events as the plan foresees them run, the
  // folded attempt's given up (analysis/step/fold_forecast.h), and a cap at the cap it quotes runs it.
  CHECK_THROWS_AS(run_mixtral_trees("simulation.max_events=293424"), InputError);  // not enough
  const Refusal r = refusal_at("simulation.max_events=2000");
  CHECK(
      r.what.ends_with("the step would simulate about 1.1e6 events (under a second at 5e6 events/s), over "
                       "the limit simulation.max_events = 2000; raise it to 1100000 or more (--max-events N "
                       "or simulation.max_events, 0 = no limit)"));
  CHECK(r.quoted == "1100000");
  CHECK(r.needed == 1100000);
  CHECK(run_mixtral_trees("simulation.max_events=" + r.quoted).step.events == 1081008);
}

TEST_CASE("budget: a variability run refused after its first step quotes the cap that runs it") {
  // GNMT DP 8 on one DGX-1, 10 steps with 5% kernel jitter: after step 1 the run's events are
  // estimated at step 1's times 10 and checked against the cap; past it, the refusal said "raise it"
  // and no figure, where a step's refusals say "raise it to N or more". The figure quoted is that
  // estimate rounded up, which step 1 (drawn the same at any cap) then passes, and so the run.
  const std::vector<std::string> sets = {"variability.steps=10", "variability.kernel_jitter=0.05"};
  std::string what;
  try {
    std::vector<std::string> capped = sets;
    capped.push_back("simulation.max_events=100000");
    run_with(capped);
    FAIL("the run went over its cap");
  } catch (const InputError& e) {
    what = e.what();
  }
  CHECK(what.find("once its 10 variability steps run at about ") != std::string::npos);
  const auto to = what.find("raise it to ");
  REQUIRE(to != std::string::npos);
  const std::string quoted = what.substr(to + 12, what.find(" or more", to) - (to + 12));
  CAPTURE(quoted);
  std::vector<std::string> raised = sets;
  raised.push_back("simulation.max_events=" + quoted);
  const analysis::ScenarioRun run = run_with(raised);
  CHECK(run.step.spread.steps == 10);
}

TEST_CASE("budget: a step over its memory cap names the state and the messages in flight") {
  // Same step: its largest collective, the all-reduce of a 32000 × 1024 FP32 embedding gradient
  // (131 MB, larger than a bucket), cuts it into 6 channels × 8 chunks of 2.73 MB = 6 messages of
  // 512 KiB: 288 messages in flight at most; its rings all on one stream of the same 8 GPUs, two of
  // them may have messages in flight at once (analysis/step/step_in_flight.h): 576, 576 × 192 B =
  // 110592 B, beside the 111408 B its collectives hold running in full (sim/collective_cost.cpp)
  // and the 421204 B of its program, attempt and network (analysis/step/step_footprint.h;
  // analysis_progress_estimate_test.cpp): 643204 B, over a cap of 64 KiB; the cap quoted is that
  // figure, rounded up (645124 B before an event's state 12 bytes, not 32, since evstate
  // (sim/stream_executor.h): 96 events × 20 B fewer).
  try {
    run_with({"communication.fast_path=off", "simulation.max_memory=64 KiB"});
    FAIL("the step ran over its memory cap");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.ends_with(
        "the step would hold about 643 kB of simulation state (576 messages in flight at once), "
        "over the limit simulation.max_memory = 64 KiB; raise it to 650 kB or more (--max-sim-memory SIZE or "
        "simulation.max_memory, 0 B or unlimited = no limit) or set communication.fast_path: auto"));
  }
}

TEST_CASE(
    "budget: a memory refusal quotes what the step holds if its fold is given up, and that cap runs it") {
  // The same step: its folded attempt holds its representatives' collectives' state, is given up as
  // it runs, and the next attempt (every GPU) holds every GPU's. A cap raised to the first figure was
  // refused again by the second (issue 31); then the refusal quoted the folded attempt's 4.32 MB
  // "up to 4.73 MB" and a cap of 4.4 MB was refused by the next attempt's own 4.73 MB after the folded
  // attempt ran. Now the step's estimate (estimate_step, as a sweep's) is checked before any attempt:
  // every GPU's collectives, 16,384 messages in flight at once, and its program, arrays and network
  // (analysis/step/step_footprint.h; since tidy10 the step bound's walk over its record too), 5.08 MB
  // (5.03 before the walk was counted); a cap at the size it quotes runs the step. Under a
  // cap below what that way holds before its first message, the figure is counted from the folded
  // try's collectives, before the every-GPU set-up is built (memp); above it, where that way's try is
  // given up too and the last way (every collective in full) is what runs, from the every-GPU try's
  // collectives, before that last set-up is built (plan16k; it was built first, then refused): the
  // same 5.08 MB.
  const Refusal r = refusal_at("simulation.max_memory=1 KiB");
  CHECK(r.what.find("the step would hold about 5.08 MB of simulation state (16384 messages in flight at "
                    "once), once its fold is given up (a folded tree shares a link with an all-to-all or "
                    "transfers that may run at once) and every GPU is simulated, as counted before that is "
                    "set up, over the limit simulation.max_memory = 1 KiB; raise it to 5.1 MB or more "
                    "(--max-sim-memory SIZE") != std::string::npos);
  CHECK(r.quoted == "5.1 MB");
  CHECK(r.needed == 5'100'000);
  CHECK(
      refusal_at("simulation.max_memory=4.4 MB")
          .what.find("would hold about 5.08 MB of simulation state (16384 messages in flight at once), once "
                     "its fold is given up and every GPU is simulated with every collective in full (a "
                     "folded tree shares a link with an all-to-all or transfers that may run at once), as "
                     "counted before that is set up, over the limit simulation.max_memory = 4.4 MB; raise "
                     "it to 5.1 MB or more") != std::string::npos);
  CHECK(run_mixtral_trees("simulation.max_memory=" + r.quoted).step.events == 1081008);
}

TEST_CASE("budget: a step's folded trees are counted as their models run, once, not in full besides") {
  // GNMT DP on 16 DGX-1 (128 GPUs) under communication.algorithm auto: 9 of its 11 all-reduces run
  // as NCCL trees, folded in the folded step (fast_path bounded, the default). Their models are
  // charged as they run, and a tree over the plans, bytes and timing of an earlier one repeats its
  // runs: 6 of the 9 run nothing of their own. Before, each was estimated at its own models (the step
  // at 699,168 events for a run of 299,201) and every tree was also counted in full among what the
  // step is sure to run (1.09 M events of trees, checked against twice the cap before the first
  // event), so a cap of the run's own size was refused.
  const std::filesystem::path file =
      std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/cluster-hybrid-vs-dp.yaml";
  const std::vector<std::string> sets = {"cluster.nodes=16", "parallelism.dp=128",
                                         "communication.algorithm=auto", "workload.network=gnmt"};
  const scenarios::ResolvedScenario resolved =
      scenarios::resolve(scenarios::load_scenario(file.string(), sets));
  const analysis::StepEstimate estimate = analysis::estimate_step(analysis::step_setup(resolved));
  std::vector<std::string> capped = sets;
  capped.push_back("simulation.max_events=" + std::to_string(estimate.events()));
  const analysis::ScenarioRun run =
      analysis::run_scenario(scenarios::resolve(scenarios::load_scenario(file.string(), capped)), {});
  MESSAGE("estimate ", estimate.events(), " (sure ", estimate.sure.events, "), run ", run.step.events);
  CHECK(run.step.simulation.folded == 11);
  CHECK(static_cast<double>(estimate.events()) <= 1.25 * static_cast<double>(run.step.events));
  CHECK(static_cast<double>(estimate.events()) >= 0.8 * static_cast<double>(run.step.events));
  CHECK(estimate.sure.events == 0);  // every collective folds: none is sure to run in full
}

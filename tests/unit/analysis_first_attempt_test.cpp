// A run's step is estimated before it runs (estimate_program), which plans its fold and sets up the
// collectives of the way it counts; the ladder's first try then runs that set-up rather than making
// it again (FirstAttempt, analysis/step/step_attempt.h), and a sweep point's run counts against the
// estimate its sweep made rather than estimating again (ScenarioRunOptions::step_estimate). Made
// twice, they cost a GNMT dp 8 run 4% more instructions (tests/bench/MEASUREMENTS.md, rev).
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_attempt.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_progress.h"
#include "analysis/step/step_runner.h"
#include "analysis/step/step_series.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/collective.h"
#include "sim/stream_executor.h"
#include "tests/unit/fold_exact_case.h"
#include "tests/unit/toy_profile.h"

using namespace hybridsim;

namespace {

// Every report, due at once.
struct Recorded final : analysis::SimulationProgress {
  std::vector<analysis::SimulationProgressReport> reports;
  std::vector<std::string> what;
  Recorded() : SimulationProgress(std::chrono::seconds(0), std::chrono::seconds(0)) {}

  // Reports of the part `part` whose line starts with `label`, and of those the ones at its end.
  std::size_t finished(std::string_view label, std::string_view part) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < reports.size(); ++i)
      if (reports[i].part == part && what[i].starts_with(label) &&
          reports[i].part_done == reports[i].part_total)
        ++n;
    return n;
  }
  // Reports of the part `part` whose line starts with `label`.
  std::size_t parts(std::string_view label, std::string_view part) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < reports.size(); ++i)
      if (reports[i].part == part && what[i].starts_with(label)) ++n;
    return n;
  }

 protected:
  void report(const analysis::SimulationProgressReport& r) override {
    reports.push_back(r);
    what.emplace_back(r.what);
  }
};

void check_same_result(const analysis::StepResult& a, const analysis::StepResult& b) {
  CHECK(a.step_time == b.step_time);
  CHECK(a.events == b.events);
  CHECK(a.messages == b.messages);
  CHECK(a.simulation.strategy == b.simulation.strategy);
  CHECK(a.simulation.folded == b.simulation.folded);
  CHECK(a.simulation.gpus_simulated == b.simulation.gpus_simulated);
  CHECK(a.critical.exposed_communication == b.critical.exposed_communication);
}

}  // namespace

TEST_CASE("first attempt: a folded run's collectives are set up once, by its estimate") {
  // 4 DGX-1 on a fat tree, dp 32: folded onto one machine's representatives. Before, the estimate set
  // up the fold's collectives ("the step, estimating its events: setting up its collectives") and the
  // folded attempt set them up again ("the step, folded onto representative GPUs: setting up ...").
  const workloads::Profile p = testing::toy_chain(6, sim::Bytes::mib(4));
  const testing::FoldCase c = testing::kFourDgx1Dp32;
  const topology::Topology t = testing::fold_case_cluster(c);
  const analysis::StepSetup setup = testing::fold_case_setup(c, t, p, sim::FastPath::Auto);
  Recorded told;
  const analysis::StepResult run = analysis::simulate_steps(setup, std::nullopt, &told);
  REQUIRE(run.simulation.strategy == "folded onto representative GPUs");
  CHECK(told.parts("the step, estimating its events", "setting up its collectives") > 0);
  CHECK(told.parts("the step, folded onto representative GPUs", "setting up its collectives") == 0);
  CHECK(told.parts("the step, folded onto representative GPUs", "choosing its representatives") == 0);
  // The same step as one set up by the attempt itself (simulate_step: no estimate).
  check_same_result(run, analysis::simulate_step(setup));
  check_same_result(analysis::simulate_steps(setup), run);  // and untold
}

TEST_CASE("first attempt: a run of every GPU sets up and counts its collectives once, by its estimate") {
  // GNMT dp 8 on one DGX-1: nothing to fold onto (one machine), so every GPU is simulated first. The
  // estimate also counts the cost of the try it sets up (step_budget_cost, "counting its collectives'
  // cost"), which the run of that set-up counted again: at 1,024 GPUs 0.65% of the step's
  // instructions (tests/bench/MEASUREMENTS.md, perf of 2026-12-06 10:55). No ring is embedded here.
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/examples/dgx1-gnmt-dp8.yaml"));
  const analysis::StepSetup setup = analysis::step_setup(resolved);
  Recorded told;
  const analysis::StepResult run = analysis::simulate_steps(setup, std::nullopt, &told);
  REQUIRE(run.simulation.strategy == "every GPU simulated");
  CHECK(told.parts("the step, estimating its events", "setting up its collectives") > 0);
  CHECK(told.parts("the step, every GPU simulated", "setting up its collectives") == 0);
  CHECK(told.finished("the step, estimating its events", "counting its collectives' cost") == 1);
  CHECK(told.parts("the step, every GPU simulated", "counting its collectives' cost") == 0);
  // The same events and figures as a run that sets itself up and counts its own cost.
  check_same_result(run, analysis::simulate_step(setup));
}

TEST_CASE("first attempt: a run given its step's estimate counts against it and does not estimate again") {
  // A sweep estimates every point before any runs; its runs estimated each point again.
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/examples/dgx1-gnmt-dp8.yaml"));
  const analysis::StepSetup setup = analysis::step_setup(resolved);
  analysis::StepEstimate given = analysis::estimate_step(setup);
  given.task_events += 1000;  // a figure of its own, to tell it from one made again
  Recorded told;
  analysis::ScenarioRunOptions options;
  options.progress = &told;
  options.step_estimate = given;
  const analysis::ScenarioRun run = analysis::run_scenario(resolved, options);
  for (const std::string& line : told.what) CHECK(line.find("estimating its events") == std::string::npos);
  std::size_t loops = 0;
  for (const auto& r : told.reports)
    if (r.part.empty() && r.estimated_events > 0) {
      ++loops;
      CHECK(r.estimated_events == given.events());
    }
  CHECK(loops > 0);
  check_same_result(run.step, analysis::simulate_step(setup));
}

TEST_CASE(
    "first attempt: a step between its folded and every-GPU ways counts the every-GPU way without setting it "
    "up") {
  // GNMT on 8 DGX H100 in AMP (what-if precision-and-gpu points 6 and 7): the fold embeds rings of
  // unequal chunks whose bound the run's ties decide, and cannot run without embedding, so the
  // estimate is between the folded and the every-GPU ways (step_estimate.cpp, either_way). dp 64's
  // every-GPU way embeds its rings as the fold does; dp 32 x mp 2's is expected to be interfered with
  // (the fold's models meet the mp transfers live on its own links alone) and runs them unembedded.
  // The every-GPU figures are counted from the folded try's collectives: one set-up is counted, the
  // fold's (two before: the every-GPU way was set up to be counted, at 65,536 GPUs of GNMT DP on DGX
  // H100 about 8 s of CPU and 0.5 GB), and the estimate is the one that set-up gave (the same events
  // and memory: tests/bench/MEASUREMENTS.md, est; 8 B a stream more since a task list may hold its own
  // collective, sim::TaskList::own_collective: 3,422,176 and 12,605,840 B before; the step bound's
  // walk over the record counted since tidy10, analysis/step/step_bound.h: 3,423,200 and 12,607,888;
  // 3,463,312 and 14,101,232 before an event's state 12 bytes, not 32, since evstate (sim/stream_executor.h):
  // 576 and 12,608 events × 20 B fewer).
  struct Case {
    std::string parallelism;
    std::uint64_t events;
    std::int64_t memory;
  };
  for (const Case& c :
       {Case{"{dp: 64, mp: 1}", 1111530, 3451792}, Case{"{dp: 32, mp: 2}", 285408, 13849072}}) {
    CAPTURE(c.parallelism);
    const std::vector<std::string> sets = {"cluster.preset=dgx-h100", "workload.precision=amp",
                                           "parallelism=" + c.parallelism};
    const scenarios::ResolvedScenario resolved = scenarios::resolve(
        scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/what-if/precision-and-gpu.yaml", sets));
    const analysis::StepSetup setup = analysis::step_setup(resolved);
    Recorded told;
    const analysis::StepEstimate both = analysis::estimate_step(setup, &told);
    REQUIRE(both.way == "folded or every GPU simulated");
    CHECK(told.finished("the step, estimating its events", "counting its collectives' cost") == 1);
    CHECK(both.events() == c.events);
    CHECK(both.memory() == c.memory);
  }
}

TEST_CASE(
    "first attempt: a folded try's rings tell whether the try without embedding is refused, as that try "
    "finds") {
  // GNMT DP 64 on 8 DGX H100 in AMP: the fold embeds rings of unequal chunks, whose bound the run's ties
  // decide; without embedding a ring they share has two edges on one NVSwitch link, and that try is
  // refused before it runs. The estimate set that try up in full to learn it, beside the kept folded
  // one (at 65,536 GPUs 0.5 GB more at its peak: 1.84 GB against 1.35 GB; tests/bench/MEASUREMENTS.md,
  // mem); the folded try's own rings now tell it (Attempt::unembedded_unsuitable), and the two agree.
  const std::vector<std::string> sets = {"cluster.preset=dgx-h100", "workload.precision=amp",
                                         "parallelism={dp: 64, mp: 1}"};
  const scenarios::ResolvedScenario resolved = scenarios::resolve(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/what-if/precision-and-gpu.yaml", sets));
  const analysis::StepSetup setup = analysis::step_setup(resolved);
  const workloads::StepProgram program = analysis::build_program(setup);
  const analysis::StepFoldBasis basis = analysis::step_fold_basis(program, *setup.topology);
  // As the estimate's ladder: the classes split by what a broken fold saw, until one is counted.
  std::vector<std::uint64_t> refine;
  analysis::StepFoldPlan fold;
  analysis::Attempt embedded, plain;
  for (int i = 0; i < analysis::kFoldAttempts; ++i) {
    fold = analysis::plan_step_fold(program, *setup.topology, basis, refine);
    REQUIRE(!fold.empty());
    embedded = {};
    if (analysis::estimate_once(setup, program, fold, analysis::Embed::On, nullptr, &embedded)) break;
    REQUIRE(embedded.fold_broken);
    analysis::refine_classes(refine, embedded.signature);
  }
  REQUIRE(embedded.embed_bounded);
  CHECK(!analysis::estimate_once(setup, program, fold, analysis::Embed::Off, nullptr, &plain));
  CHECK(plain.unsuitable);
  CHECK(plain.why == "a ring they share would run in full: two ring edges share a link");
  CHECK(embedded.unembedded_unsuitable == plain.unsuitable);
  CHECK(!embedded.every_gpu_unembedded);  // so the estimate asks the folded try alone
}

namespace {

// A collective that costs `kEvents` events in full and counts how often it is asked.
struct CountedCollective final : sim::Collective {
  static constexpr std::uint64_t kEvents = 10;
  int* asked;
  explicit CountedCollective(int* a) : asked(a) {}
  void notify_rank_done(sim::EventHandler&, std::uint64_t) override {}
  void on_event(std::uint64_t) override {}
  void start(std::uint32_t) override {}
  std::uint32_t ranks() const override { return 2; }
  bool is_done() const override { return false; }
  sim::Time rank_finish_time(std::uint32_t) const override { return sim::Time::zero(); }
  sim::Time finish_time() const override { return sim::Time::zero(); }
  std::uint64_t messages_sent() const override { return 0; }
  std::array<sim::Bytes, sim::kLinkKindCount> bytes_by_link_kind() const override { return {}; }
  sim::SimulationCost full_cost() const override {
    ++*asked;
    return {.events = kEvents, .messages = 1, .state_bytes = 64, .in_flight = 1};
  }
  sim::ExpectedEvents expected_events() const override {
    ++*asked;
    return {.queue = kEvents};
  }
};

}  // namespace

TEST_CASE("first attempt: a folded step's shadows are counted as their representative, asked once") {
  // One collective of two GPUs simulated and 999 shadows of it (GPT-3 pp 16 at 16,384 GPUs: 10,636
  // simulated, 1,251,204 shadows). Each shadow costs what its representative does: 1,000 x 10 events
  // in full. Before, the representative's full_cost() and expected_events() were asked once for
  // every shadow (2,000 times here; a quarter of that step's CPU, tests/bench/MEASUREMENTS.md, pp16k).
  constexpr std::size_t kCollectives = 1000;
  workloads::StepProgram program;
  program.gpus.resize(2);
  workloads::CollectiveSpec spec;
  spec.size = sim::Bytes::mib(1);
  spec.members = {0, 1};
  program.collectives.assign(kCollectives, spec);
  int asked = 0;
  std::vector<std::unique_ptr<sim::Collective>> collectives(kCollectives);
  collectives[0] = std::make_unique<CountedCollective>(&asked);
  sim::StepFold fold;
  fold.representative = {0, 0};
  fold.shadow.assign(kCollectives, 1);
  fold.shadow[0] = 0;
  const std::vector<std::uint32_t> shadow_of(kCollectives, 0);
  const analysis::StepEstimate e = analysis::step_budget_cost(program, collectives, fold, shadow_of);
  CHECK(e.full_events == kCollectives * CountedCollective::kEvents);
  CHECK(e.every_gpu.events == kCollectives * CountedCollective::kEvents);
  CHECK(e.collective_events.queue == CountedCollective::kEvents);  // the shadows are not simulated
  CHECK(asked == 2);  // its full_cost() and its expected_events(), once each
}

// Estimates before the work and progress lines with an estimated end (issue 31): a step's estimate
// is the one its run checks (analysis/step/step_estimate.h), and every command's progress reporter
// says the fraction done and about how long is left of how long in all. Clocks are driven by hand,
// so nothing here depends on how fast the machine is.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/import/read_progress.h"
#include "analysis/output/progress_estimate.h"
#include "analysis/run/scenario_run.h"
#include "analysis/step/step_estimate.h"
#include "analysis/step/step_progress.h"
#include "analysis/study/step_run_progress.h"
#include "analysis/study/study_steps.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;

namespace {

// A clock read from `now`, which the test moves.
struct HandClock {
  double now = 100;
  analysis::ProgressClock clock() {
    return [this] { return now; };
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

scenarios::ResolvedScenario gnmt_dp8(const std::vector<std::string>& sets) {
  const std::filesystem::path file =
      std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/examples/dgx1-gnmt-dp8.yaml";
  return scenarios::resolve(scenarios::load_scenario(file.string(), sets));
}

// A study's request: GNMT on `gpus` GPUs of DGX-1 machines, dp × mp.
analysis::StepRequest request(int gpus, int mp) {
  analysis::StepRequest r{"gnmt", analysis::cluster_overlay({}, gpus, topology::presets::kEdrBandwidth)};
  for (auto o : analysis::workload_overlay("gnmt", "", {})) r.overlay.push_back(o);
  for (auto o : analysis::parallelism_overlay(gpus / mp, mp, mp == 1 ? "auto" : "stacks"))
    r.overlay.push_back(o);
  return r;
}

// The progress lines of `requests` resolved, estimated and simulated on one thread under `label`, by a
// clock that reads a second later each time (from 100), the command begun at `started`.
std::vector<std::string> step_lines(const std::vector<analysis::StepRequest>& requests,
                                    const std::string& label, double started) {
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  double now = 100;
  std::ostringstream out;
  analysis::StepCache cache;
  cache.simulate(requests, {.profiles = {{"gnmt", &profile}}},
                 {.threads = 1,
                  .on_progress = {},
                  .keep_going = false,
                  .progress = &out,
                  .label = label,
                  .clock = [&now] { return now += 1; },
                  .started = started});
  return lines_of(out.str());
}

}  // namespace

TEST_CASE("progress estimate: lines come when due and say the fraction, the time left and the total") {
  HandClock hand;
  std::ostringstream out;
  // validate's reporter: cases counted alike.
  analysis::ProgressEstimate p(&out, "validate", 20, "cases", hand.clock());
  hand.now = 101;  // 1 s in: before the first line is due (2 s)
  p.advance(5, "the last a");
  CHECK(out.str().empty());
  hand.now = 102;  // 10 of 20 in 2 s: 2 s left, 4 s in all
  p.advance(10, "the last b");
  hand.now = 106;  // the next is due 5 s after that one
  p.advance(15);
  hand.now = 107;  // 16 of 20 in 7 s: 7 × 4 / 16 = 1.75 s left, shown as 2 s; 9 s in all
  p.advance(16);
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] ==
        "validate: 2 s, 10 of 20 cases done (50%), about 2 s left of about 4 s in all; the last b");
  CHECK(lines[1] == "validate: 7 s, 16 of 20 cases done (80%), about 2 s left of about 9 s in all");
}

TEST_CASE("progress estimate: a total better known later is the next line's") {
  HandClock hand;
  std::ostringstream out;
  // import's reporter: a file first thought read 3 times, then told 12 (a trace of many segments).
  analysis::ProgressEstimate p(&out, "cases", 30, "cases", hand.clock());
  hand.now = 102;  // 10 of 30 in 2 s: 4 s left
  p.advance(10);
  p.set_total(120);
  hand.now = 107;  // 20 of 120 in 7 s: 35 s left
  p.advance(20);
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "cases: 2 s, 10 of 30 cases done (33%), about 4 s left of about 6 s in all");
  CHECK(lines[1] == "cases: 7 s, 20 of 120 cases done (17%), about 35 s left of about 42 s in all");
}

TEST_CASE("progress estimate: estimated events, sizes in bytes, and work past its estimate") {
  HandClock hand;
  // collective's reporter weighs sizes by their events in full; sweep/study/plan count events.
  analysis::ProgressEstimate events(nullptr, "study", 4e6, "events", hand.clock());
  hand.now = 110;
  CHECK(events.line(1e6, "") ==
        "study: 10 s, 1e6 of about 4e6 events done (25%), about 30 s left of about "
        "40 s in all");
  // Past its estimate the work is taken to need as much again as it has done, and the line says so
  // with the time left that gives (it said "4e6 of about 4e6 events done (100%), nearly done").
  CHECK(events.line(5e6, "x") ==
        "study: 10 s, 5e6 events done, past the estimate of about 4e6 (taken as twice what is done), "
        "about 10 s left of about 20 s in all; x");
  // An exact total reached is done.
  analysis::ProgressEstimate cases(nullptr, "validate", 4, "cases", hand.clock());
  CHECK(cases.line(4, "").ends_with("4 of 4 cases done (100%), nearly done"));
  // Estimated events with none done yet (a large step setting itself up before its first event): the
  // time left at the rate the up-front estimate quotes, 4e6 at 5e6 events/s (it said "time left not
  // yet known", 17 s without an end in plan -m gnmt --gpus 16384).
  CHECK(events.line(0, "") ==
        "study: 10 s, 0 of about 4e6 events done (0%), about 1 s left of about 11 s in "
        "all (at 5e6 events/s, none done yet)");
  // import's: bytes of the file read.
  analysis::ProgressEstimate bytes(nullptr, "import", 200e6, "bytes", hand.clock());
  hand.now = 115;  // 50 MB in 5 s: 15 s left
  CHECK(bytes.line(50e6, "") ==
        "import: 5 s, 50.0 MB of 200 MB done (25%), about 15 s left of about 20 s in all");
  CHECK(analysis::wall_text(118.2) == "119 s");
  CHECK(analysis::wall_text(600) == "10 min");
  CHECK(analysis::wall_text(3 * 3600.0) == "3.0 h");
}

namespace {

struct Recorded final : analysis::SimulationProgress {
  std::vector<analysis::SimulationProgressReport> reports;
  explicit Recorded(analysis::ProgressClock clock)
      : SimulationProgress(std::chrono::seconds(2), std::chrono::seconds(5), std::move(clock)) {}

 protected:
  void report(const analysis::SimulationProgressReport& r) override { reports.push_back(r); }
};

}  // namespace

TEST_CASE("progress estimate: run's step reports carry the step's estimate and the time left") {
  HandClock hand;
  Recorded progress(hand.clock());
  hand.now = 101;
  progress.tick("step 1", sim::Time::zero(), 1000, 4000);
  CHECK(progress.reports.empty());
  hand.now = 103;  // 1000 of 4000 events in 3 s: 9 s left
  progress.tick("step 1", sim::Time::zero(), 1000, 4000);
  REQUIRE(progress.reports.size() == 1);
  CHECK(progress.reports[0].estimated_events == 4000);
  CHECK(progress.reports[0].eta_seconds == doctest::Approx(9));
  CHECK(analysis::estimate_text(progress.reports[0].wall_seconds, progress.reports[0].eta_seconds) ==
        ", about 9 s left of about 12 s in all");
  // Past its estimate (8000 of 4000 events in 8 s) the step is taken to need as much again: 8 s
  // left, where the time left was unknown.
  hand.now = 108;
  progress.tick("step 1", sim::Time::zero(), 8000, 4000);
  REQUIRE(progress.reports.size() == 2);
  CHECK(progress.reports[1].eta_seconds == doctest::Approx(8));
}

TEST_CASE(
    "progress estimate: study, plan and sweep count finished steps' estimates and running steps' events") {
  HandClock hand;
  std::ostringstream out;
  analysis::StepRunProgress run(&out, "study", {1'000'000, 3'000'000}, "steps", hand.clock());
  analysis::StepRunProgress::Share second(run, 1);
  hand.now = 104;  // the first step done (1e6 of 4e6 in 4 s: 12 s left), the second ticking
  run.step_done(0, "gnmt N=8 dp=8 mp=1");
  second.tick("step 1", sim::Time::zero(), 1'000'000, 3'000'000);  // not due: 5 s after the last
  hand.now = 109;  // 1e6 done and the second at 2e6 of its 3e6: 3e6 of 4e6 in 9 s, 3 s left
  second.tick("step 1", sim::Time::zero(), 2'000'000, 3'000'000);
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] ==
        "study: 4 s, 1e6 of about 4e6 events done (25%), about 12 s left of about 16 s in all; "
        "1 of 2 steps done, the last gnmt N=8 dp=8 mp=1");
  CHECK(lines[1] ==
        "study: 9 s, 3e6 of about 4e6 events done (75%), about 3 s left of about 12 s in all; "
        "1 of 2 steps done");
  // A step past its estimate: the second, estimated at 3e6, reaches 5e6 events. It counts twice what
  // it has run (1e7), so the run's total grows to 1.1e7, 6e6 of it done in 14 s: about 12 s left.
  // Its events were capped at its estimate: "4e6 of about 4e6 events done (100%), nearly done".
  // Done (5 s later), it counts what it ran, and so does the total: 6e6 of 6e6.
  hand.now = 114;
  second.tick("step 1", sim::Time::zero(), 5'000'000, 3'000'000);
  hand.now = 119;
  run.step_done(1, "gnmt N=16 dp=16 mp=1");
  const std::vector<std::string> past = {
      "study: 14 s, 6e6 of about 1.1e7 events done (55%), about 12 s left of about 26 s in all; 1 of 2 steps "
      "done; one running past its estimate of about 3e6 events, taken as twice what it has run",
      "study: 19 s, 6e6 of about 6e6 events done (100%), nearly done; 2 of 2 steps done, the last gnmt N=16 "
      "dp=16 mp=1"};
  const auto all = lines_of(out.str());
  REQUIRE(all.size() == 4);
  CHECK(std::vector<std::string>(all.begin() + 2, all.end()) == past);
  CHECK(analysis::run_estimate_line("sweep", 3, 12'000'000, "point 2 (parallelism.dp=8)", 9'000'000, 96832,
                                    "points") ==
        "sweep: 3 points to simulate, about 1.2e7 events in all (about 3 s at 5e6 events/s); the largest, "
        "point 2 (parallelism.dp=8), about 9e6 events and 96.8 kB of simulation state");
}

TEST_CASE(
    "progress estimate: a study is told while it prepares (GPUs counting) before any step is estimated") {
  // Resolving a request builds its cluster's topology and its mapping, estimating builds its program:
  // both grow with its GPUs, so progress before the first step counts GPUs (8 + 16 + 16 here).
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  double now = 100;  // every reading of the clock is a second later: each request takes a second
  std::ostringstream out;
  analysis::StepCache cache;
  cache.simulate({request(8, 1), request(16, 1), request(16, 2)}, {.profiles = {{"gnmt", &profile}}},
                 {.threads = 1, .on_progress = {}, .keep_going = false, .progress = &out, .label = "study",
                  .clock = [&now] { return now += 1; }});
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() >= 4);
  // Due 2 s in, while the second request's topology is built: the first's 8 GPUs and a share of the
  // second's 16 as its parts are told (PartShare), so the line has an estimate before it is done.
  // Its end is the study's from the first line: the estimating and simulation after counted from the
  // steps' GPUs and kernels (8 + 16 + 8 workers of GNMT's 2,218 kernels; 3 x 4,436 events).
  CHECK(lines[0] ==
        "study: 3 s, 11 of 40 GPUs placed done (29%), about 8 s left of about 11 s in all (its steps' "
        "estimating and simulation after: about 70976 GPUs' tasks to estimate and at least 13308 events to "
        "simulate, at 5e6 a second, none estimated yet); resolving the configurations before any step is "
        "estimated");
  CHECK(lines[1].starts_with("study: 8 s, 40 of 40 GPUs placed done (100%), this part nearly done, about "));
  // The largest steps are estimated first, each told as its parts are (the fold, the collectives:
  // estimate_program), a share of its GPUs: the first line comes within the first 16-GPU step's. Its
  // end is the study's, the simulation after counted from below until a step is estimated (its steps'
  // kernels: 13,308 events, 3 ms, which round the 7 s left up to 8 s).
  INFO(lines[2]);
  CHECK(
      lines[2].starts_with("study: 3 s, 12 of 40 GPUs' steps estimated done (30%), about 8 s left of about "
                           "11 s in all (its simulation after: at least 13308 events, its steps' kernels, "
                           "none of the 3 steps estimated yet)"));
  CHECK(lines[2].ends_with("; before any step is simulated"));
  const auto simulate = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.starts_with("study: 3 steps to simulate, about ");
  });
  CHECK(simulate != lines.end());
}

TEST_CASE("progress estimate: the work after a part, once estimated, makes its lines the command's") {
  // plan -m gnmt --gpus 16384 estimated its steps for minutes, its lines giving that part's end only
  // ("until every step is estimated"). Once the simulation after is estimated (set_after), the time
  // left adds it and the total is the command's, "in all"; a line whose total moved by more than a
  // quarter since the last says so.
  HandClock hand;  // 100: the part starts
  std::ostringstream out;
  analysis::ProgressEstimate part(&out, "plan", 100, "GPUs' steps estimated", hand.clock(),
                                  {.first = 2, .every = 5, .since = 100, .until = "every step is estimated"});
  hand.now = 102;
  part.advance(10);  // 10 of 100 in 2 s: 18 s left of this part, its own end only
  part.set_after(60, "its simulation after: about 3e8 events at 5e6 events/s");
  hand.now = 107;
  part.advance(50);  // 50 in 7 s: 7 s left of this part, 60 s of simulation after
  part.set_after(200, "its simulation after: about 1e9 events at 5e6 events/s");
  hand.now = 112;
  part.advance(80);  // 80 in 12 s: 3 s left, 200 s after: 215 s in all, more than a quarter over 74 s
  hand.now = 117;
  part.advance(100);
  INFO(out.str());
  CHECK(lines_of(out.str()) ==
        std::vector<std::string>{
            "plan: 2 s, 10 of 100 GPUs' steps estimated done (10%), about 18 s left of about 20 s until "
            "every step is estimated",
            "plan: 7 s, 50 of 100 GPUs' steps estimated done (50%), about 67 s left of about 74 s in all "
            "(its simulation after: about 3e8 events at 5e6 events/s)",
            "plan: 12 s, 80 of 100 GPUs' steps estimated done (80%), about 4 min left of about 4 min in all "
            "(its simulation after: about 1e9 events at 5e6 events/s) (revised from about 74 s in the last "
            "line)",
            "plan: 17 s, 100 of 100 GPUs' steps estimated done (100%), this part nearly done, about 4 min "
            "left of about 4 min in all (its simulation after: about 1e9 events at 5e6 events/s)"});
}

TEST_CASE("progress estimate: a part of a longer command counts the time from the command's start") {
  // A study's third part (simulating) began 40 s after the study: its line says 50 s so far, the time
  // left at the part's own rate (1e6 of 4e6 events in 10 s: 30 s), and 80 s in all, not 40 s.
  HandClock hand;  // 100: the part starts
  analysis::ProgressEstimate part(nullptr, "study", 4e6, "events", hand.clock(), {.since = 60});
  hand.now = 110;
  CHECK(part.line(1e6, "") ==
        "study: 50 s, 1e6 of about 4e6 events done (25%), about 30 s left of about 80 s in all");
  CHECK(part.line(5e6, "").ends_with("about 10 s left of about 60 s in all"));
}

TEST_CASE("progress estimate: a study's lines count from its start in every part") {
  // The same three requests as above, the study begun 50 s before its steps were resolved (clock
  // 50): every line's time so far is from then, and the simulating part's "in all" covers the parts
  // before it (each part restarted at 0 s: its "in all" was that part's alone).
  const auto lines = step_lines({request(8, 1), request(16, 1), request(16, 2)}, "study", 50);
  REQUIRE(lines.size() >= 4);
  // Due 2 s into resolving: 54 s since the study began (the clock read at 104), the part's 8 s left.
  // Its total, 62 s, is the study's, the estimating and simulation after counted from the steps' GPUs
  // and kernels (it said "until every configuration is resolved, its steps not yet estimated").
  CHECK(
      lines[0].starts_with("study: 54 s, 11 of 40 GPUs placed done (29%), about 8 s left of about 62 s in "
                           "all (its steps' estimating and simulation after: "));
  // Every line with an end, whichever part, gives the study's: resolving's and estimating's with the
  // work after them counted, the simulating part's from the steps' estimate.
  for (const std::string& l : lines) {
    INFO(l);
    if (l.find(" left of about ") == std::string::npos) continue;
    CHECK(l.find(" in all") != std::string::npos);
    CHECK(l.find(" until ") == std::string::npos);
  }
  // Every later line, whichever part, says no less time than the one before (none starts at 0 s).
  auto seconds = [](const std::string& l) {  // "study: 54 s, ..." or "study: 3 min, ..."
    const std::string rest = l.substr(std::string("study: ").size());
    std::size_t end = 0;
    const int n = std::stoi(rest, &end);
    return rest.compare(end, 4, " min") == 0 ? 60 * n : n;
  };
  int last = 0;
  for (const std::string& l : lines) {
    if (l.starts_with("study: 3 steps to simulate")) continue;  // the estimate, not a progress line
    INFO(l);
    CHECK(seconds(l) >= std::max(last, 54));
    last = seconds(l);
  }
}

TEST_CASE("progress estimate: a plan's resolving lines give the command's end from the first line") {
  // plan -m gnmt --gpus 16384 resolved its 54 candidates for 13-17 s at load 9-10 with lines that gave
  // only the resolving's end ("until every configuration is resolved, its steps not yet estimated"),
  // the first with the plan's end 16.9 s in (issue 31, plan16k). Now the estimating after is counted
  // from each request's workers' kernels (dp 64 + 32 + 16 of GNMT's 2,218: 248,416 tasks, each at one
  // event's time) and the simulation from below (3 x 4,436 events), at 5e6 events/s.
  std::size_t resolving = 0;
  for (const std::string& l : step_lines({request(64, 1), request(64, 2), request(64, 4)}, "plan", 100)) {
    if (l.find("GPUs placed") == std::string::npos) continue;
    INFO(l);
    ++resolving;
    CHECK(l.find(" in all (its steps' estimating and simulation after: about 248416 GPUs' tasks to estimate "
                 "and at least 13308 events to simulate, at 5e6 a second, none estimated yet)") !=
          std::string::npos);
  }
  CHECK(resolving >= 2);
}

TEST_CASE(
    "progress estimate: a plan's estimating lines give the command's end before any step is estimated") {
  // plan -m gnmt --gpus 16384: its first step took seconds to estimate (20 s at load 7) and the lines
  // meanwhile gave only the estimating's end ("until every step is estimated, their simulation not yet
  // counted"). Now the simulation after is counted from below until a step is estimated: each step
  // simulates at least its worker's kernels, two events each (GNMT's 2,218: 4,436 events, 13,308 for
  // the three steps), so that every line of the estimating says the command's end, "in all", and
  // once a step is estimated, from it.
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  std::uint64_t kernels = 0;
  for (const workloads::Op& op : profile.ops) kernels += op.forward.size() + op.backward.size();
  CHECK(kernels == 2218);
  std::size_t before_any = 0, estimating = 0;
  for (const std::string& l : step_lines({request(64, 1), request(64, 2), request(64, 4)}, "plan", 100)) {
    if (l.find("GPUs' steps estimated") == std::string::npos) continue;
    INFO(l);
    ++estimating;
    CHECK(l.find(" in all (its simulation after: ") != std::string::npos);
    CHECK(l.find("until every step is estimated") == std::string::npos);
    if (l.find("(its simulation after: at least 13308 events, its steps' kernels, none of the 3 steps "
               "estimated yet)") != std::string::npos)
      ++before_any;
  }
  CHECK(estimating >= 2);
  CHECK(before_any >= 1);
}

TEST_CASE("step estimate: the figures the run checks before its event loop, without running it") {
  // analysis_budget_test.cpp derives them for GNMT DP 8 with every ring in full: 36416 task events
  // and 45696 message events; 111408 B of collective state and 576 messages in flight × 192 B (the
  // largest ring's 288, twice: two rings of one stream may have messages in flight at once); and
  // what the run holds beside (analysis/step/step_footprint.h), 421204 B: its program's 117360 B
  // (shared task lists, specs, labels), its attempt's 296980 B (a 16-byte record entry for each of
  // its 18208 tasks, and its streams', GPUs', collectives' and 96 events' slots, 12 B each) and 66
  // links × 104 B (423124 and 645124 B with an event's state 32 bytes, before evstate: 96 × 20 B more).
  const scenarios::ResolvedScenario r = gnmt_dp8({"communication.fast_path=off"});
  const analysis::StepEstimate e = analysis::estimate_step(analysis::step_setup(r));
  CHECK(e.task_events == 36416);
  CHECK(e.events() == 82112);
  CHECK(e.held_bytes == 421204);
  CHECK(e.memory() == 643204);
  CHECK_THROWS_AS(e.check({.max_events = 82111}), sim::BudgetExceeded);
  CHECK_NOTHROW(e.check({.max_events = 82112}));
  CHECK_THROWS_AS(e.check({.max_events = 0, .max_memory = 643203}), sim::BudgetExceeded);
  CHECK_NOTHROW(e.check({.max_events = 0, .max_memory = 643204}));
}

TEST_CASE("step estimate: a folded step over its cap is refused before its first event, within it runs") {
  // Inception-V3 on 4 DGX-1 with NCCL trees folds onto one machine's GPUs; its trees' models
  // (sim/fast/fold_cost.h) are most of its estimate, which the sure part alone would miss.
  const std::filesystem::path file =
      std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/examples/cluster4-inception-dp32.yaml";
  const std::vector<std::string> sets = {"communication.algorithm=tree"};
  const scenarios::ResolvedScenario r = scenarios::resolve(scenarios::load_scenario(file.string(), sets));
  analysis::StepSetup setup = analysis::step_setup(r);
  const analysis::StepEstimate e = analysis::estimate_step(setup);
  REQUIRE(e.collective_events.models > e.task_events + e.collective_events.queue);
  // One event under the estimate: refused by the estimate itself, before the event loop (a charge
  // found mid-run would name the collective starting in full instead).
  setup.limits.max_events = e.events() - 1;
  try {
    (void)analysis::simulate_step(setup);
    FAIL("the step ran past its estimate's cap");
  } catch (const sim::BudgetExceeded& over) {
    CHECK(over.estimate == e.events());
    CHECK(over.cause == analysis::kEstimatedCause);
  }
  // At the estimate it runs: its models are never charged, and a folded tree charges its model
  // runs only (a tree charged its full cost as it started, folded or not, so this step stopped at
  // twice the cap with 145,504 events charged for a run of 61,813). Folded, within a factor 2 of
  // the estimate, as without a cap.
  setup.limits.max_events = e.events();
  const analysis::StepResult at_cap = analysis::simulate_step(setup);
  setup.limits.max_events = 0;
  const analysis::StepResult run = analysis::simulate_step(setup);
  CHECK(at_cap.events == run.events);
  CHECK(run.simulation.gpus_simulated > 0);  // folded
  CHECK(run.simulation.gpus_simulated < 32);
  CHECK(run.events * 2 >= e.events());
  CHECK(run.events <= e.events() * 2);
}

TEST_CASE("progress estimate: import's reporter counts the bytes the process has read") {
  const auto before = analysis::bytes_read_by_process();
  if (!before) return;  // no /proc/self/io here: import prints no lines
  const std::filesystem::path file =
      std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "tests/data/kineto/single_gpu.json";
  std::ifstream in(file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto after = analysis::bytes_read_by_process();
  REQUIRE(after);
  CHECK(*after - *before >= static_cast<std::int64_t>(std::filesystem::file_size(file)));
  CHECK(text.size() == std::filesystem::file_size(file));
}

TEST_CASE("part share: a configuration's set-up parts each take half of what is left of its weight") {
  // A phase of 40 GPUs, 10 done before this configuration of 20; lines due at every advance. Part
  // "machines" counts 0 to 1/2 of the 20, the next part 1/2 to 3/4: 10 + 20 × (1/2 + 1/4 × 1/2).
  HandClock hand;
  std::ostringstream out;
  analysis::ProgressEstimate phase(&out, "study", 40, "GPUs placed", hand.clock(), {.first = 0, .every = 0});
  analysis::PartShare share(
      phase, [] { return 10.0; }, 20, "resolving");
  analysis::ProgramBuildTicks ticks(&share, "x");
  hand.now = 104;
  sim::work_tick(&ticks, "its machines", 0, 4, "machines");  // done 0: no rate yet, nothing told
  CHECK(share.share() == 0);
  sim::work_tick(&ticks, "its machines", 2, 4, "machines", 1);
  CHECK(share.share() == doctest::Approx(0.25));
  sim::work_tick(&ticks, "its machines", 4, 4, "machines");
  CHECK(share.share() == doctest::Approx(0.5));
  sim::work_tick(&ticks, "its links", 0, 10, "links");
  sim::work_tick(&ticks, "its links", 5, 10, "links", 1);
  CHECK(share.share() == doctest::Approx(0.625));
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 3);
  // 15 of 40 in 4 s: 25 more in about 7 s.
  CHECK(lines[0] ==
        "study: 4 s, 15 of 40 GPUs placed done (38%), about 7 s left of about 11 s in all; resolving");
  CHECK(lines[1].starts_with("study: 4 s, 20 of 40 GPUs placed done (50%)"));
  CHECK(lines[2].starts_with("study: 4 s, 23 of 40 GPUs placed done (56%)"));  // 22.5, rounded
}

TEST_CASE("step run progress: a point of several steps counts the steps done of its estimate") {
  // Two points of 100 and 300 events (the second of 4 variability steps); a line at every advance.
  HandClock hand;
  std::ostringstream out;
  analysis::StepRunProgress run(&out, "sweep", {100, 300}, "points", hand.clock(), {.first = 0, .every = 0});
  analysis::StepRunProgress::Share share(run, 1);
  hand.now = 104;  // step 1 of 4 done: a quarter of its 300
  share.run_estimate(4, 300);
  share.tick("step 2 of 4", sim::Time::zero(), 50);  // a step's own events no longer count
  hand.now = 106;
  share.step_done(2, 4, sim::Time::zero());
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 2);  // the step's events told nothing
  CHECK(lines[0].starts_with("sweep: 4 s, 75 of about 400 events done (19%), about 18 s left of about "));
  CHECK(lines[1].starts_with("sweep: 6 s, 150 of about 400 events done (38%), about 10 s left of about "));
}

TEST_CASE("step run progress: a step whose fold is given up is re-estimated at its next way's figure") {
  // Two steps estimated at 100 and 300 events (folded). The second's fold is given up after 200
  // events and it runs again with every GPU simulated, its own lines' total now 200 given up + 1,000
  // that way's estimate: the run's total jumps from 400 to 100 + 1,200 (it stayed at 400, and the
  // second step was said to be past its estimate, "taken as twice what it has run").
  HandClock hand;
  std::ostringstream out;
  analysis::StepRunProgress run(&out, "study", {100, 300}, "steps", hand.clock(), {.first = 0, .every = 0});
  analysis::StepRunProgress::Share share(run, 1);
  hand.now = 102;
  share.tick("step 1, folded onto representative GPUs", sim::Time::zero(), 150, 300);
  hand.now = 104;
  share.tick("step 1, every GPU simulated", sim::Time::zero(), 400, 1200);
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].starts_with("study: 2 s, 150 of about 400 events done (38%)"));
  CHECK(
      lines[1].starts_with("study: 4 s, 400 of about 1300 events done (31%), about 9 s left of about 13 s "
                           "in all; 0 of 2 steps done"));
  CHECK(lines[1].find("past its estimate") == std::string::npos);
}

TEST_CASE("step run progress: a step past its estimate names the way that estimate counts, as run's do") {
  // A study's or plan's step counts against its own up-front estimate (StepObservers::expected_way,
  // analysis/study/study_step_run.cpp), and its lines say which way that figure counts: past it, the
  // whole run's line said the figure alone, where `run`'s line names the way.
  HandClock hand;
  std::ostringstream out;
  analysis::StepRunProgress run(&out, "plan", {100, 300}, "steps", hand.clock(), {.first = 0, .every = 0});
  analysis::StepRunProgress::Share share(run, 1);
  hand.now = 102;
  share.tick("the step, every GPU simulated", sim::Time::zero(), 500, 300, "every GPU simulated");
  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == 1);
  CHECK(
      lines[0].ends_with("0 of 2 steps done; one running past its estimate of about 300 events (every GPU "
                         "simulated), taken as twice what it has run"));
}

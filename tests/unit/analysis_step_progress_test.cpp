// Progress lines of long steps (analysis/step/step_progress.h): the queue runs exactly as run()
// would, reports come every kTickEvents events when due, and a step simulated with progress is the
// step simulated without.
#include <doctest/doctest.h>

#include <chrono>
#include <vector>

#include "analysis/step/step_progress.h"
#include "analysis/step/step_runner.h"
#include "tests/unit/fold_exact_case.h"
#include "tests/unit/toy_profile.h"

using namespace hybridsim;

namespace {

// Schedules itself `left` more times, 3 ps apart.
struct Chain final : sim::EventHandler {
  sim::EventQueue& queue;
  std::uint64_t left;
  Chain(sim::EventQueue& q, std::uint64_t n) : queue(q), left(n) {}
  void on_event(std::uint64_t) override {
    if (left-- > 0) queue.schedule_after(sim::Time::ps(3), *this);
  }
};

struct Recorded final : analysis::SimulationProgress {
  std::vector<analysis::SimulationProgressReport> reports;
  Recorded() : SimulationProgress(std::chrono::seconds(0), std::chrono::seconds(0)) {}

 protected:
  void report(const analysis::SimulationProgressReport& r) override { reports.push_back(r); }
};

}  // namespace

TEST_CASE("progress: the queue runs to its end and reports every 2^18 events when due") {
  // 600,000 events, 3 ps apart (the first at 0): a report as the loop starts (due at once here: a
  // step whose setup took past the first report's delay says so before its first event), then after
  // 262,144 and 524,288 events, at 3 × (262,144 − 1) and 3 × (524,288 − 1) ps (the event that made
  // the count).
  sim::EventQueue queue;
  Chain chain(queue, 599'999);
  queue.schedule_at(sim::Time::zero(), chain);
  Recorded progress;
  analysis::run_with_progress(queue, &progress, "the step");
  CHECK(queue.events_processed() == 600'000);
  CHECK(queue.now() == sim::Time::ps(3 * 599'999));
  REQUIRE(progress.reports.size() == 3);
  CHECK(progress.reports[0].events == 0);
  CHECK(progress.reports[1].events == 262'144);
  CHECK(progress.reports[1].simulated == sim::Time::ps(3 * 262'143));
  CHECK(progress.reports[2].events == 524'288);
  CHECK(progress.reports[2].simulated == sim::Time::ps(3 * 524'287));
  CHECK(progress.reports[2].what == "the step");
  CHECK(progress.reports[2].wall_seconds >= progress.reports[1].wall_seconds);
}

TEST_CASE("progress: none is reported before it is due, and none without an object") {
  sim::EventQueue queue;
  Chain chain(queue, 599'999);
  queue.schedule_at(sim::Time::zero(), chain);
  struct Never final : analysis::SimulationProgress {
    int reports = 0;
    Never() : SimulationProgress(std::chrono::hours(1), std::chrono::hours(1)) {}

   protected:
    void report(const analysis::SimulationProgressReport&) override { ++reports; }
  } never;
  analysis::run_with_progress(queue, &never, "x");
  CHECK(never.reports == 0);
  CHECK(queue.events_processed() == 600'000);
  sim::EventQueue other;
  Chain again(other, 9);
  other.schedule_at(sim::Time::zero(), again);
  analysis::run_with_progress(other, nullptr, "x");
  CHECK(other.events_processed() == 10);
}

TEST_CASE("progress: a step watched is the step unwatched, folded or not") {
  const workloads::Profile p = testing::toy_chain(6, sim::Bytes::mib(4));
  using A = workloads::AllReduceAlgorithm;
  using F = topology::presets::Fabric;
  for (const testing::FoldCase c : {testing::FoldCase{4, F::FatTree, 1.0, 32, 1, A::Ring},
                                    testing::FoldCase{4, F::FatTree, 1.0, 32, 1, A::Tree}}) {
    CAPTURE(testing::describe(c));
    const topology::Topology t = testing::fold_case_cluster(c);
    Recorded progress;
    const analysis::StepResult watched =
        testing::run_fold_case(c, t, p, sim::FastPath::Auto, {.progress = &progress});
    const analysis::StepResult plain = testing::run_fold_case(c, t, p, sim::FastPath::Auto);
    CHECK(watched.events == plain.events);
    CHECK(watched.simulation.gpus_simulated == plain.simulation.gpus_simulated);
    testing::check_same_step(watched, plain);
  }
}

// Progress of a long step simulation, for the person waiting on it: `hybridsim run` prints a line on
// stderr a few seconds into a step and every few seconds after (simulated time reached, events,
// wall time, and about how long is left), so a 16,384-GPU step simulated in full says it is working.
// Wall-clock time decides only when to tell; nothing simulated depends on it.
//   struct Printer : SimulationProgress { void report(const SimulationProgressReport& r) override { ... } }
//   p; simulate_steps(setup, std::nullopt, &p);
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/output/progress_estimate.h"
#include "sim/budget.h"
#include "sim/event_queue.h"
#include "sim/model_progress.h"
#include "sim/time.h"
#include "workloads/program/build_progress.h"

namespace hybridsim::analysis {

struct SimulationProgressReport {
  std::string_view what;     // which step and how: "step 1, every GPU simulated"
  sim::Time simulated;       // the simulated clock
  std::uint64_t events = 0;  // events processed so far in this attempt
  double wall_seconds = 0;   // since the progress object was made
  // About how many wall seconds are left (< 0: unknown): within a step, from the events estimated
  // before it started (sim/budget.h); over several steps, from the steps done so far.
  double eta_seconds = -1;
  std::uint64_t estimated_events = 0;  // the step's own estimate (0: none), for the fraction done
  // A set-up part's line (part_tick): which part, and how much of it is done (total 0: not one).
  std::string_view part{};
  std::uint64_t part_done = 0;
  std::uint64_t part_total = 0;
  // Between the steps of a variability run (run_estimate, step_done): the steps done of all.
  int steps_done = 0;
  int steps_total = 0;
  // Which way of simulating the step `estimated_events` counts (StepEstimate::way; empty: the
  // attempt's own, `what`).
  std::string_view estimate_way{};
};

// ", about 12 s left" (", about 3 min left"); empty when unknown.
std::string eta_text(double eta_seconds);

class SimulationProgress {
 public:
  using Clock = std::chrono::steady_clock;
  // Reports `first` after it is made, then every `every`, by `clock` (tests pass one they drive).
  explicit SimulationProgress(Clock::duration first = std::chrono::seconds(2),
                              Clock::duration every = std::chrono::seconds(5),
                              ProgressClock clock = steady_progress_clock())
      : clock_(std::move(clock)),
        start_(clock_()),
        first_(std::chrono::duration<double>(first).count()),
        every_(std::chrono::duration<double>(every).count()),
        next_(start_ + first_) {}
  virtual ~SimulationProgress() = default;
  // Called every 2^18 events (kTickEvents): polls, then reports if one is due.
  // `estimated_events` (0: none) is the step's own estimate, for the time left.
  void tick(std::string_view what, sim::Time simulated, std::uint64_t events,
            std::uint64_t estimated_events = 0, std::string_view estimate_way = {});
  // After the first of `steps` steps (variability.steps), before the others: the whole run's
  // estimate (`events`: step 1's times the steps; its wall time from step 1's), reported at once
  // when the rest will take longer than the first report's delay.
  void run_estimate(int steps, std::uint64_t events);
  // After step `done` of `total` (variability.steps): reports, when due, how many are left.
  void step_done(int done, int total, sim::Time simulated);
  // During a step's set-up, before its first event (building its collectives takes seconds at 1,024
  // GPUs in full): `done` of `total` ranks set up (each collective's ranks, summed), reported when
  // due with the time left at this part's rate so far (a part starts when `done` is 0).
  void setup_tick(std::string_view what, std::uint64_t done, std::uint64_t total);
  // The same for any part of the set-up: "WHAT: DOING, DONE of TOTAL UNIT" ("the step, building its
  // programs: the workers' streams, 1024 of 32768 workers"), the time left at the part's rate.
  void part_tick(std::string_view what, std::string_view doing, std::uint64_t done, std::uint64_t total,
                 std::string_view unit);
  static constexpr std::uint32_t kTickEvents = 1u << 18;

 protected:
  virtual void report(const SimulationProgressReport& r) = 0;
  // Called at every tick, due or not (a few ms apart): an owner that must be able to stop a long
  // step throws here, and the step unwinds (the Python module raises KeyboardInterrupt on Ctrl-C).
  virtual void poll() {}

 private:
  ProgressClock clock_;
  double start_;  // seconds, by clock_
  double first_;
  double every_;
  double next_;
  // The parts part_tick was told of lately: each one's name, total, the seconds spent on it so far
  // (its own: not those of the parts told within it), how much was done when it was first told (its
  // rate is counted from there) and at its last tick, and the part it started within (its name and
  // total; empty: none), whose time it is again once it ends.
  struct PartClock {
    std::string name;
    std::uint64_t total = 0;
    double own = 0;
    std::uint64_t first_done = 0;
    std::uint64_t done = 0;
    std::string parent;
    std::uint64_t parent_total = 0;
  };
  static constexpr std::size_t kPartClocks = 8;
  std::vector<PartClock> parts_;
  // The last part_tick: when, and of which part (its name and total; empty: none yet). The time from
  // it to the next tick is the next tick's part's, unless that one starts then (the time is then the
  // part told last's, within which it starts, or, if that tick was its end, that part's parent's).
  double last_part_tick_ = 0;
  std::string last_part_;
  std::uint64_t last_part_total_ = 0;
  // When a run of several steps is estimated to end (by clock_; < 0: not one, or not yet known): a
  // set-up part's line between its steps gives the run's time left, not the part's.
  double run_end_ = -1;
};

// Building a step's programs (workloads/program/build_progress.h), told to a SimulationProgress as
// parts of the step's set-up: a 65,536-GPU step's workers take seconds before its collectives.
class ProgramBuildTicks final : public workloads::ProgramBuildProgress {
 public:
  // `progress` null: nothing told. `what` names the step as the progress lines do ("the step,
  // building its programs").
  ProgramBuildTicks(SimulationProgress* progress, std::string what)
      : progress_(progress), what_(std::move(what)) {}
  void built(std::string_view part, std::uint64_t done, std::uint64_t total, std::string_view unit) override;

 private:
  SimulationProgress* progress_;
  std::string what_;
};

// The ticks of a step's event loop: its queue's events and those its folded collectives' models
// process on queues of their own within one of its events (counted here from any thread as a
// sim::ModelProgress: set it as the collectives' CollectiveConfig::model_progress), against the
// events expected of both (the step's estimate, analysis/step/step_estimate.h) or, if more, those
// `budget` (optional) charged so far. A model of a few seconds so gives lines as the queue's events do.
class StepTicks final : public sim::ModelProgress {
 public:
  StepTicks(sim::EventQueue& queue, SimulationProgress* progress, std::string_view what,
            const sim::SimulationBudget* budget = nullptr, std::uint64_t expected = 0)
      : queue_(queue), progress_(progress), what_(what), budget_(budget), expected_(expected) {}
  // What to give CollectiveConfig::model_progress: null when no one is told (the models run() then).
  sim::ModelProgress* for_models() { return progress_ != nullptr ? this : nullptr; }
  SimulationProgress* progress() const { return progress_; }
  // Names its lines anew: a step's estimate sets up its first attempt under its own name, and the
  // attempt runs under the ladder's (analysis/step/attempt_stage.h, AttemptStage). `what` must outlive it.
  void set_what(std::string_view what) { what_ = what; }
  // `way`: which way of the step `expected` counts (StepEstimate::way; empty: this attempt's).
  void set_expected(std::uint64_t expected, std::string_view way = {}) {
    expected_ = expected;
    way_ = way;
  }
  // The events of the step's attempts given up before this one (a fold given up mid-run, step_runner.cpp):
  // counted as done, and in the total, so that the line is the step's, and its rate, over the wall time
  // since the step began, is not taken for this attempt's alone.
  void set_given_up(std::uint64_t events) { given_up_ = events; }
  // Runs the queue to its end, as EventQueue::run() does, ticking every kTickEvents of its events.
  void run();

 private:
  void tick() override;
  sim::EventQueue& queue_;
  SimulationProgress* progress_;
  std::string_view what_;
  const sim::SimulationBudget* budget_;
  std::uint64_t expected_;
  std::string_view way_{};
  std::uint64_t given_up_ = 0;
  std::uint64_t first_ = 0;  // the queue's events before run()
};

// Runs the queue to its end, as EventQueue::run() does, ticking `progress` (none: just run()), with
// the time left from `expected` events (StepTicks, without models).
void run_with_progress(sim::EventQueue& queue, SimulationProgress* progress, std::string_view what,
                       const sim::SimulationBudget* budget = nullptr, std::uint64_t expected = 0);

}  // namespace hybridsim::analysis

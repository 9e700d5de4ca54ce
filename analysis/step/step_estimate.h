// A step's cost before it runs, as its run checks it (sim/budget.h, check_step_budget): the events
// of the program's tasks, the full events of every collective that cannot fold, and the state its
// collectives and messages in flight hold, for the first way the run will simulate it (folded onto
// representative GPUs when it can, else every GPU, else every collective in full). Commands that run
// many steps (study, plan, sweep) sum it over their configurations and refuse before any work when
// one step is over its caps.
//   const StepEstimate e = estimate_step(setup);
//   e.check(setup.limits);   // throws sim::BudgetExceeded as the run would
//   total += e.events();
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/step/memory_gate.h"
#include "sim/budget.h"

namespace hybridsim::workloads {
struct StepProgram;
struct Profile;
}

namespace hybridsim::analysis {

struct StepSetup;
class SimulationProgress;

struct StepEstimate {
  std::uint64_t task_events = 0;  // the GPU streams' tasks, two events each
  // Every simulated collective's events as it is expected to be simulated (expected_events(),
  // sim/collective.h): on the step's queue (in full, embedded rings) and on folded models'.
  sim::ExpectedEvents collective_events{};
  std::int64_t state_bytes = 0;  // every collective's state
  // What its run holds beside: its program, its attempt's arrays and its network
  // (analysis/step/step_footprint.h), this way's.
  std::int64_t held_bytes = 0;
  sim::SimulationCost sure{};    // the collectives that cannot fold, simulated in full
  // Every GPU's tasks and every collective in full (full_cost(), sim/collective.h): the ladder's last
  // way (step_runner.cpp), where it goes when a fold is given up, and the most any of its ways is
  // expected to take. A folded step's shadows count as their representatives do.
  std::uint64_t full_events = 0;
  // The ladder's last way as its own set-up counts it: every GPU's tasks and each collective's full
  // cost (full_events takes the more of that and its expected events, which a folded ring's models
  // may pass: 16 events of a hierarchical chain on 2 DGX-1; every collective the simulator makes has
  // a full cost, sim/collective.h's default of none is a test's). Known before that set-up is built,
  // so that a step past its events cap that way is refused without building it (estimate_program).
  std::uint64_t in_full_events = 0;
  // The state that last way holds: every GPU's collectives (full_cost().state_bytes, shadows as
  // their representatives), its held bytes (every GPU's) and the most messages its network can hold
  // in flight at once (full_in_flight), as its run checks it before its event loop; more than
  // memory() wherever the step folds. What a memory cap must reach for the step to pass whichever way
  // it runs (BudgetExceeded::upper), and a bound on what it holds.
  std::int64_t full_memory = 0;
  // The ladder's every-GPU way (its second) as this way's collectives count it, a folded step's shadow
  // as its representative, without setting that way up: what the estimate of a fold that may be
  // given up counts for it (estimate_program). Where this way is every GPU's, its own figures.
  struct EveryGpu {
    // Every GPU's tasks and every collective's expected events (the set-up of every GPU counted the
    // same on the shipped points and at 65,536 GPUs: tests/bench/MEASUREMENTS.md, est).
    std::uint64_t events = 0;
    std::int64_t state_bytes = 0;  // every collective's state
    std::int64_t held_bytes = 0;   // its program and every GPU's attempt arrays
    std::uint64_t in_flight = 0;   // as `in_flight` below, over every collective
    // What it holds before its first message, whether its collectives fold or not, so that a step
    // whose fold is given up is refused before its every-GPU set-up is built where that alone is
    // past the memory cap (estimate_program).
    std::int64_t held() const;
    // And with its messages in flight: what its set-up is charged (memory()).
    std::int64_t memory() const;
  } every_gpu;
  // Those messages: each collective's most in flight (full_cost().in_flight) summed over those that
  // can have messages in flight at once (analysis/step/step_in_flight.h). `sure.in_flight` is the
  // same over the collectives that cannot fold.
  std::uint64_t full_in_flight = 0;
  // The same over the collectives this way simulates (a folded step's shadows left out): the most
  // messages it can hold in flight at once, each collective's own most in full whether it folds,
  // embeds or falls back to full as it starts, summed over those that can have messages in flight
  // together. What memory() counts, and what a fallback is checked against (sim/budget.h).
  std::uint64_t in_flight = 0;
  // Which of the ladder's ways it counts (estimate_program): "folded onto representative GPUs",
  // "every GPU simulated", "every GPU and collective simulated in full", or "folded or every GPU
  // simulated" (the geometric mean of two where the plan cannot tell which holds). Progress lines say it.
  std::string_view way = {};
  // Where the every-GPU way is refused before its set-up is built (estimate_program: what it would
  // hold alone is past the memory cap), or every collective in full (its memory or its events past
  // the caps, as the try before counted it), the refusal charge() and check() throw.
  std::optional<sim::BudgetExceeded> refused;
  // Where it foresees the ladder's first fold given up after its run (a collective they share
  // expected in full as it starts: estimate_program), the refusal that run would end in; empty: none
  // foreseen. The run takes it and does not try that fold (FirstAttempt::fold_given_up): `run`'s from
  // its own estimate, sweep's, study's and plan's from the estimate they made of every step before
  // any ran. BigLSTM DP on 128 DGX-1 ran 74.3 M events folded before throwing them away
  // (tests/bench/MEASUREMENTS.md, skipfold).
  std::string fold_given_up;
  std::uint64_t events() const { return task_events + collective_events.total(); }
  // What a cap must reach for the step to pass whichever way it runs.
  std::uint64_t most_events() const { return std::max(events(), full_events); }
  std::uint64_t queue_events() const { return task_events + collective_events.queue; }
  // A bound on what its run holds: every collective's state, its held bytes and `in_flight` messages.
  std::int64_t memory() const {
    return sim::SimulationCost{.state_bytes = state_bytes + held_bytes, .in_flight = in_flight}.memory();
  }
  // Records its sure figures in `budget` and throws sim::BudgetExceeded past its caps, as before the
  // run's event loop: the sure part, and events() past `max_events` (cause kEstimatedCause), saying
  // full_events (or full_memory) where it is more (BudgetExceeded::upper); `refused` where set.
  void charge(sim::SimulationBudget& budget, std::uint64_t max_events) const;
  // The same against a budget of its own.
  void check(const sim::SimulationLimits& limits) const;
};

// The limits a step's run charges its collectives against once its estimate passed `limits`: the
// events cap times kFallbackTolerance (0 stays none). The estimate is within a factor of 2 of what
// the run simulates, not a bound: a collective that falls back to full simulation as it starts (a
// tree whose links are still busy in a first folded attempt) is charged its full cost, so a step
// the estimate passed is stopped only past twice its cap.
inline constexpr std::uint64_t kFallbackTolerance = 2;
sim::SimulationLimits run_limits(const sim::SimulationLimits& limits);

// What a refusal for the expected events says (sim::BudgetExceeded::cause).
inline constexpr std::string_view kEstimatedCause =
    "its folded collectives' models are counted (as estimated before its first event)";

// A floor of a step's events known from its profile alone, before its cluster or program is built:
// every kernel of one worker's ops, forward and backward, is a task of some GPU simulated (a fold
// keeps one GPU of each program), two events each. Throws sim::BudgetExceeded past `max_events` (0:
// no limit), so that `--max-events 1` at 65,536 GPUs is refused at once, not after minutes of
// building (plan, study, run).
void check_event_floor(const workloads::Profile& profile, std::uint64_t max_events);
// That floor: two events for each kernel of the worker's ops, forward and backward.
std::uint64_t event_floor(const workloads::Profile& profile);

// The refusal of the ladder's every-GPU way before its set-up is built, the fold given up for `why`:
// `bytes`, what that way holds (with `in_flight` messages in flight), past `cap`. The estimate's
// (estimate_program) and the run's (step_runner.cpp, where the estimate counted the fold alone) alike.
sim::BudgetExceeded every_gpu_refusal(std::int64_t bytes, std::uint64_t in_flight, std::int64_t cap,
                                      const std::string& why);

// Builds the step's program and its first attempt's collectives (no event is run). `progress` (null:
// none) hears of the program's building, as build_program's. `shared` (null: none): the memory
// budget of the steps estimated at once on other threads (analysis/step/memory_gate.h), which each
// of the ladder's later set-ups (every GPU, every collective in full) holds its count against while
// it is built, where a folded try counted it first; the caller holds nothing on it meanwhile. `held`
// (null: none): the caller's hold on that budget for the step instead (the plan's reservation of a
// candidate, StepRunOptions::memory), grown to each later set-up's count before it is built, as a
// run's are (StepObservers::shared).
StepEstimate estimate_step(const StepSetup& setup, SimulationProgress* progress = nullptr,
                           MemoryGate* shared = nullptr, MemoryGate::Hold* held = nullptr);
// The same for a program already built (build_program(setup)); `progress` hears of the fold's and
// the collectives' set-up, part by part. `first` (null: not wanted) receives the ladder's first try
// as set up here (analysis/step/step_attempt.h), for simulate_program(setup, program, ..., first).
struct FirstAttempt;
StepEstimate estimate_program(const StepSetup& setup, const workloads::StepProgram& program,
                              SimulationProgress* progress = nullptr, FirstAttempt* first = nullptr,
                              MemoryGate* shared = nullptr, MemoryGate::Hold* held = nullptr);

}  // namespace hybridsim::analysis

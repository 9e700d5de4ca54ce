// The whole run of a StepCache (study, plan) for the person waiting: before any step is simulated,
// one line with the sum of the steps' estimates (analysis/step/step_estimate.h); then, every few
// seconds, the events done of that sum (finished steps count their estimate, running ones the
// events they reached; a step past its estimate counts twice what it has run, and the line says so)
// and about how long is left of how long in all (analysis/output/progress_estimate.h). Steps on
// several threads report to one object.
//   StepRunProgress p(&std::cerr, "study", {1'000'000, 20'000});
//   p.start_line(...);  StepRunProgress::Share share(p, 0);  simulate_step(setup, {.progress = &share});
//   p.step_done(0, "gnmt N=64 dp=64 mp=1");
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/output/progress_estimate.h"
#include "analysis/step/step_progress.h"

namespace hybridsim::analysis {

// "study: 57 steps to simulate, about 3.1e6 events in all (about 1 s at 5e6 events/s); the largest,
// gnmt N=64 dp=64 mp=1, about 1.2e6 events and 3.4 MB of simulation state".
std::string run_estimate_line(std::string_view label, std::size_t steps, std::uint64_t events,
                              std::string_view largest, std::uint64_t largest_events,
                              std::int64_t largest_memory, std::string_view noun = "steps");

class StepRunProgress {
 public:
  // `events[i]`: step i's estimate; `noun` counts them in the lines ("steps", "points").
  StepRunProgress(std::ostream* out, std::string label, std::vector<std::uint64_t> events,
                  std::string noun = "steps", ProgressClock clock = steady_progress_clock(),
                  ProgressTiming timing = {});
  // Step i has processed `events` so far (the attempts it gave up counted done). `estimated`: its own
  // lines' total (SimulationProgressReport::estimated_events; 0: none), which jumps where its fold is
  // given up and it runs again another way (the events given up and that way's estimate): where more
  // than its estimate so far, the step is re-estimated at it, and the whole run's total with it.
  // `way`: which way of simulating the step that total counts (StepEstimate::way; empty: unknown),
  // said where the step runs past it.
  void step_events(std::size_t i, std::uint64_t events, std::uint64_t estimated = 0,
                   std::string_view way = {});
  // Step i (a point of several steps) has done `share` (0 to 1) of its estimate.
  void step_share(std::size_t i, double share);
  // Step i finished (or failed): it counts its whole estimate from now on.
  void step_done(std::size_t i, std::string_view what);
  std::size_t lines() const { return progress_.lines(); }

  // A step's own ticks, passed on (StepObservers::progress).
  class Share final : public SimulationProgress {
   public:
    Share(StepRunProgress& run, std::size_t i)
        : SimulationProgress(std::chrono::seconds(0), std::chrono::seconds(0), run.clock_),
          run_(run),
          i_(i) {}

   protected:
    // A step's events; a point of several steps (variability), the steps done of its estimate.
    void report(const SimulationProgressReport& r) override {
      if (r.steps_total > 0) steps_ = true;
      if (r.steps_total > 0)
        run_.step_share(i_, static_cast<double>(r.steps_done) / r.steps_total);
      else if (!steps_)
        run_.step_events(i_, r.events, r.estimated_events, r.estimate_way);
    }

   private:
    StepRunProgress& run_;
    std::size_t i_;
    bool steps_ = false;  // told of its steps: their share counts, not one step's events
  };

 private:
  void advance_locked(std::string_view what);
  void count_as(std::size_t i, std::uint64_t events);  // step i's share of the total
  ProgressClock clock_;
  std::vector<std::uint64_t> estimate_;
  std::vector<std::uint64_t> counted_;  // per step: its share of the total (its estimate, or more)
  std::vector<std::uint64_t> reached_;  // per step: its events so far
  std::vector<std::string> way_;        // per step: the way its estimate counts, where told
  std::uint64_t total_ = 0;
  std::uint64_t done_ = 0;              // finished steps' estimates (or more) and running steps' events
  std::optional<std::size_t> past_;     // the step last seen running past its estimate
  std::size_t finished_ = 0;
  std::string noun_;
  std::mutex lock_;
  ProgressEstimate progress_;
};

// One configuration's set-up (its cluster's topology, its program), told to the phase's progress as
// a share of its `weight` (its GPUs): at 16,384 GPUs one takes seconds, and the largest comes first,
// before any is done to estimate from. Its parts (machines, links, workers...) are not known ahead,
// so each takes half of what is left of the weight: the first 0 to 1/2, the next to 3/4, and so on.
//   PartShare share(resolving, [&] { return resolved; }, weights[i], "resolving the configurations");
//   ProgramBuildTicks ticks(&share, ""); scenarios::build_topology(s, &ticks);
class PartShare final : public SimulationProgress {
 public:
  // `before`: what the phase had done when this one started (read at each line: other threads'
  // configurations may finish meanwhile).
  PartShare(ProgressEstimate& phase, std::function<double()> before, double weight, std::string what)
      : SimulationProgress(std::chrono::seconds(0), std::chrono::seconds(0)),
        phase_(phase),
        before_(std::move(before)),
        weight_(weight),
        what_(std::move(what)) {}
  // The share of the weight done so far, 0 to below 1.
  double share() const { return share_; }

 protected:
  void report(const SimulationProgressReport& r) override;

 private:
  ProgressEstimate& phase_;
  std::function<double()> before_;
  double weight_;
  std::string what_;
  std::string part_;  // the part told of last
  double from_ = 0;   // its share's start
  double span_ = 1;   // and its length
  double share_ = 0;
};

}  // namespace hybridsim::analysis

// The whole run of a StepCache (study, plan) for the person waiting: before any step is simulated,
// one line with the sum of the steps' estimates (analysis/step/step_estimate.h); then, every few
// seconds, the events done of that sum (finished steps count their estimate, running ones the
// events they reached) and about how long is left of how long in all (analysis/output/
// progress_estimate.h). Steps on several threads report to one object.
//   StepRunProgress p(&std::cerr, "study", {1'000'000, 20'000});
//   p.start_line(...);  StepRunProgress::Share share(p, 0);  simulate_step(setup, {.progress = &share});
//   p.step_done(0, "gnmt N=64 dp=64 mp=1");
#pragma once
#include <cstdint>
#include <iosfwd>
#include <mutex>
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
  // Step i has processed `events` so far (in its current attempt).
  void step_events(std::size_t i, std::uint64_t events);
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
    void report(const SimulationProgressReport& r) override { run_.step_events(i_, r.events); }

   private:
    StepRunProgress& run_;
    std::size_t i_;
  };

 private:
  void advance_locked(std::string_view what);
  ProgressClock clock_;
  std::vector<std::uint64_t> estimate_;
  std::vector<std::uint64_t> reached_;  // per step: its events so far, at most its estimate
  std::uint64_t done_ = 0;              // finished steps' estimates and running steps' events
  std::size_t finished_ = 0;
  std::string noun_;
  std::mutex lock_;
  ProgressEstimate progress_;
};

}  // namespace hybridsim::analysis

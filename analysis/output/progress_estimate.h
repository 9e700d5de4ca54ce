// Progress with an estimated end, for every command that can run long (run, sweep, study, plan,
// import, validate, collective): a line on stderr a couple of seconds into the work and every few
// seconds after, with the time so far, the fraction of the estimated work done, and about how long
// is left of about how long in all. The clock is passed in (tests drive it by hand); wall-clock
// time decides only when to tell and what the estimate says, nothing computed depends on it.
//   ProgressEstimate p(&std::cerr, "sweep", 40, "points");
//   p.advance(3, "point 3 done");  // prints when due: "sweep: 3 s, 3 of 40 points (8%), about 37 s
//                                  //  left of about 40 s in all; point 3 done"
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>
#include <string_view>

namespace hybridsim::analysis {

// Seconds since a fixed origin (any): steady_progress_clock() reads std::chrono::steady_clock.
using ProgressClock = std::function<double()>;
ProgressClock steady_progress_clock();

// When lines are due: the first `first` seconds after the start, then every `every` seconds. Both
// well inside the 10 s a command may run without a word (README.md, "Progress").
struct ProgressTiming {
  double first = 2;
  double every = 5;
  // The whole command's start by the same clock (< 0: this object's own start). A command of several
  // parts (study: resolving, estimating, simulating) gives each part's lines its start, so that they
  // say the time since the command began and "in all" covers the parts before (the time left is the
  // part's, at its own rate).
  double since = -1;
  // Where the work after this part is not estimated yet (a study resolving or estimating its steps
  // before any is simulated): what its total covers, said instead of "in all" ("until every step is
  // estimated, their simulation not yet counted"); empty: "in all", the whole command's.
  std::string_view until{};
  // Items counted done only when whole (validate's cases, a running case's share in the percentage
  // alone): "0 of 1 cases done (65%)", not "1 of 1".
  bool whole_items = false;
};

// "12 s", "3 min", "2.5 h": a wall time as a progress line says it.
std::string wall_text(double seconds);
// ", about 12 s left of about 40 s in all" from the time so far and the time left (< 0: unknown,
// empty text); with `until` (ProgressTiming::until) ", about 12 s left of about 40 s until ...".
std::string estimate_text(double elapsed, double left, std::string_view until = {});
// About how many seconds are left when `done` of `total` took `elapsed` (< 0: not yet known).
double seconds_left(double elapsed, double done, double total);
// The total an estimated one stands for once `done` has passed it: the work is taken to need as
// much again as it has done (twice `done`), so a line past its estimate still has a time left.
double past_estimate_total(double done, double total);
// The seconds and words a part's set_after gives a simulation counted from what was estimated so far:
// about `events` events at sim::kEventsPerSecond, "its simulation after: about 3e8 events at 5e6
// events/s, from the 3 of 54 steps estimated" (`from`: "steps estimated", "sizes weighed").
struct SimulationAfter {
  double seconds;
  std::string how;
};
SimulationAfter simulation_after(double events, std::size_t done, std::size_t of, std::string_view from);

class ProgressEstimate {
 public:
  // `out` null: silent. `unit` names what `total` counts ("points", "events", "bytes": shown as
  // sizes); the total may be an estimate (events) or exact (points, cases, bytes of a file).
  ProgressEstimate(std::ostream* out, std::string label, double total, std::string unit,
                   ProgressClock clock = steady_progress_clock(), ProgressTiming timing = {});
  // `done` of the total so far; prints a line when one is due. `what`: what is being worked on
  // (empty: nothing said). Safe to call from several threads.
  void advance(double done, std::string_view what = {});
  // The line advance() prints now, whether due or not.
  std::string line(double done, std::string_view what) const;
  double elapsed() const { return clock_() - start_; }
  std::size_t lines() const { return lines_; }
  // The total, once better known (a file read more times than first thought); the next line's share
  // and time left are of it.
  void set_total(double total);
  // The work after this part, once it can be estimated (a plan's or study's simulation, from the
  // steps estimated so far): `seconds` more are added to the time left, the line's total is the whole
  // command's ("in all", ProgressTiming::until no longer said) and `how` says how they were counted.
  // A line whose total moved by more than a quarter since the last one says it was revised.
  void set_after(double seconds, std::string how);

 private:
  std::ostream* out_;
  std::string label_;
  double total_;
  std::string unit_;
  ProgressClock clock_;
  ProgressTiming timing_;
  double start_;
  double next_;
  std::size_t lines_ = 0;
  double after_ = -1;  // set_after's seconds (< 0: none)
  std::string after_how_;
  double last_whole_ = -1;  // the last line's whole time (elapsed + left), for "revised from"
  std::string line_locked(double done, std::string_view what, double* whole) const;
  mutable std::mutex lock_;
};

}  // namespace hybridsim::analysis

#include "analysis/step/step_progress.h"

#include "analysis/step/memory_gate.h"

#include <algorithm>
#include <cmath>

namespace hybridsim::analysis {

std::string eta_text(double eta_seconds) {
  if (!(eta_seconds >= 0)) return {};
  const auto s = static_cast<long long>(std::ceil(eta_seconds));
  if (s < 120) return ", about " + std::to_string(s) + " s left";
  return ", about " + std::to_string((s + 59) / 60) + " min left";
}

void SimulationProgress::tick(std::string_view what, sim::Time simulated, std::uint64_t events,
                              std::uint64_t estimated_events, std::string_view estimate_way) {
  poll();
  const double now = clock_();
  if (now < next_) return;
  next_ = now + every_;
  const double wall = now - start_;
  // The estimate is within a factor of 2 of most steps, not a bound; past it the step is taken to
  // need as much again as it has run (past_estimate_total), so the line still has a time left.
  const double done = static_cast<double>(events);
  const double eta =
      estimated_events > 0 && events > 0
          ? seconds_left(wall, done, past_estimate_total(done, static_cast<double>(estimated_events)))
          : -1;
  SimulationProgressReport r{what, simulated, events, wall, eta, estimated_events};
  r.estimate_way = estimate_way;
  report(r);
}

void SimulationProgress::run_estimate(int steps, std::uint64_t events) {
  poll();
  const double now = clock_();
  const double wall = now - start_;
  const double left = wall * (steps - 1);
  if (steps > 1) run_end_ = now + left;
  if (steps <= 1 || left < first_) return;
  next_ = now + every_;
  report({"1 of " + std::to_string(steps) + " steps done; the whole run about " +
              sim::BudgetExceeded::count_text(events) + " events (step 1's times " + std::to_string(steps) +
              ")",
          sim::Time::zero(),
          0,
          wall,
          left,
          0,
          {},
          0,
          0,
          1,
          steps});
}

void SimulationProgress::step_done(int done, int total, sim::Time simulated) {
  poll();
  const double now = clock_();
  if (done <= 0 || done >= total) return;
  const double wall = now - start_;
  const double left = wall * (total - done) / done;
  run_end_ = now + left;
  if (now < next_) return;
  next_ = now + every_;
  const std::string what = std::to_string(done) + " of " + std::to_string(total) + " steps done";
  report({what, simulated, 0, wall, left, 0, {}, 0, 0, done, total});
}

void SimulationProgress::setup_tick(std::string_view what, std::uint64_t done, std::uint64_t total) {
  part_tick(what, "setting up its collectives", done, total, "collective ranks");
}

void SimulationProgress::part_tick(std::string_view what, std::string_view doing, std::uint64_t done,
                                   std::uint64_t total, std::string_view unit) {
  poll();
  const double now = clock_();
  const auto same = [&](const PartClock& p, std::string_view name, std::uint64_t of) {
    return p.name == name && p.total == of;
  };
  // Parts nest (a collective's set-up finds its ring's routes): each keeps its own clock, from its
  // first tick (done 0, or where it was first told of), and a part told again at done 0 starts anew.
  auto part =
      std::find_if(parts_.begin(), parts_.end(), [&](const PartClock& p) { return same(p, doing, total); });
  const bool starts = part == parts_.end() || done < part->done;
  // Each part's clock counts only its own time: the first of 11 all-reduces over 65,536 GPUs sets up
  // in seconds within its ring's search and routes (parts of their own, told within it), the other
  // ten in a second each; counted from the part's start, the search's time was taken for the first
  // collective's and the set-up was said to take 10 minutes where it took 30 s.
  const double since = now - last_part_tick_;
  // The part the time up to a part's start was spent in: the part told last, or, if that tick was
  // its end, the part it had started within (the time between a nested part's end and its next
  // sibling's start is their parent's: a collective's own work between two of its parts' searches).
  const auto find = [&](std::string_view name, std::uint64_t of) {
    return std::find_if(parts_.begin(), parts_.end(), [&](const PartClock& p) { return same(p, name, of); });
  };
  std::string within_name = last_part_;
  std::uint64_t within_total = last_part_total_;
  if (const auto last = find(last_part_, last_part_total_);
      last != parts_.end() && last->done == last->total) {
    within_name = last->parent;
    within_total = last->parent_total;
  }
  if (!starts) {
    part->own += since;
  } else if (!within_name.empty()) {
    if (const auto within = find(within_name, within_total); within != parts_.end()) within->own += since;
  }
  if (starts) {
    PartClock started{std::string(doing), total, 0, done, done, within_name, within_total};
    if (part == parts_.end()) {
      if (parts_.size() == kPartClocks) parts_.erase(parts_.begin());
      part = parts_.insert(parts_.end(), std::move(started));
    } else {
      *part = std::move(started);
    }
  }
  part->done = done;
  last_part_tick_ = now;
  last_part_.assign(doing);
  last_part_total_ = total;
  // Nothing done yet of this part: no rate to estimate from, so no line (the next tick has one).
  if (done == 0 || now < next_) return;
  const double rate_done = static_cast<double>(done - part->first_done);
  const double eta = run_end_ >= 0 ? std::max(0.0, run_end_ - now)
                     : total > done && rate_done > 0
                         ? part->own * static_cast<double>(total - done) / rate_done
                         : -1;
  // A line with no time left (a part done, its rate told nothing) does not take the turn of the next
  // line that has one: that one is due after the first delay, not a whole period (a done line of one
  // call, then 5 s of the next part's ticks, made 10.9 s without an estimate at 65,536 GPUs).
  next_ = now + (eta >= 0 ? every_ : std::min(every_, first_));
  // A part of one call (sim::work_part) is told only at its end: "WHAT: DOING done".
  const std::string line = std::string(what) + ": " + std::string(doing) +
                           (unit == "part" ? std::string(" done")
                                           : ", " + std::to_string(done) + " of " + std::to_string(total) +
                                                 " " + std::string(unit));
  report({line, sim::Time::zero(), 0, now - start_, eta, 0, doing, done, total});
}

void ProgramBuildTicks::built(std::string_view part, std::uint64_t done, std::uint64_t total,
                              std::string_view unit) {
  if (progress_ != nullptr) progress_->part_tick(what_, part, done, total, unit);
}

void StepTicks::tick() {
  const std::uint64_t charged = budget_ != nullptr ? budget_->events() : 0;
  progress_->tick(what_, queue_.now(), given_up_ + queue_.events_processed() - first_ + events(),
                  given_up_ + std::max(expected_, charged), way_);
}

void StepTicks::run() {
  if (progress_ == nullptr) {
    queue_.run();
    return;
  }
  // step() processes the events run() would, in the same order, and stops where run() would: a
  // step's embedded attempt stops at the first interference with its rings (sim::LinkClaims).
  first_ = queue_.events_processed();
  // Before the first event, a report if one is already due: building a large step's program and
  // collectives takes seconds, and the person waiting hears of it with the step's estimate.
  // told(), not tick(): where a tick throws, the models run ahead on workers stop with the step.
  told();
  std::uint32_t count = 0;
  HeapReturn heap(std::chrono::seconds(2));  // a trim takes milliseconds: a tick is about 0.1 s
  while (!queue_.stop_requested() && queue_.step())
    if (++count % SimulationProgress::kTickEvents == 0) {
      told();
      heap.when_due();
    }
}

void run_with_progress(sim::EventQueue& queue, SimulationProgress* progress, std::string_view what,
                       const sim::SimulationBudget* budget, std::uint64_t expected) {
  StepTicks(queue, progress, what, budget, expected).run();
}

}  // namespace hybridsim::analysis

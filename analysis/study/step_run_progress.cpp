#include "analysis/study/step_run_progress.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "sim/budget.h"
#include "sim/units.h"

namespace hybridsim::analysis {

namespace {

double sum(const std::vector<std::uint64_t>& v) {
  return static_cast<double>(std::accumulate(v.begin(), v.end(), std::uint64_t{0}));
}

}  // namespace

std::string run_estimate_line(std::string_view label, std::size_t steps, std::uint64_t events,
                              std::string_view largest, std::uint64_t largest_events,
                              std::int64_t largest_memory, std::string_view noun) {
  const double seconds = static_cast<double>(events) / sim::kEventsPerSecond;
  std::string out = std::string(label) + ": " + std::to_string(steps) + " " + std::string(noun) +
                    " to simulate, about " + sim::BudgetExceeded::count_text(events) + " events in all (" +
                    (seconds < 1 ? std::string("under a second") : "about " + wall_text(seconds)) + " at " +
                    sim::BudgetExceeded::count_text(static_cast<std::uint64_t>(sim::kEventsPerSecond)) +
                    " events/s)";
  if (!largest.empty())
    out += "; the largest, " + std::string(largest) + ", about " +
           sim::BudgetExceeded::count_text(largest_events) + " events and " +
           sim::human_bytes(sim::Bytes::of(largest_memory)) + " of simulation state";
  return out;
}

StepRunProgress::StepRunProgress(std::ostream* out, std::string label, std::vector<std::uint64_t> events,
                                 std::string noun, ProgressClock clock, ProgressTiming timing)
    : clock_(clock),
      estimate_(std::move(events)),
      counted_(estimate_),
      reached_(estimate_.size(), 0),
      way_(estimate_.size()),
      total_(std::accumulate(estimate_.begin(), estimate_.end(), std::uint64_t{0})),
      noun_(std::move(noun)),
      progress_(out, std::move(label), sum(estimate_), "events", std::move(clock), timing) {}

void StepRunProgress::count_as(std::size_t i, std::uint64_t events) {
  if (counted_[i] == events) return;
  total_ = total_ - counted_[i] + events;
  counted_[i] = events;
  progress_.set_total(static_cast<double>(total_));
}

void StepRunProgress::step_events(std::size_t i, std::uint64_t events, std::uint64_t estimated,
                                  std::string_view way) {
  std::lock_guard guard(lock_);
  if (i >= reached_.size()) return;
  if (!way.empty()) way_[i] = way;
  // Re-estimated by its own run: a fold given up (every GPU simulated after it) costs the step what
  // that way's estimate says, not what the folded one's did.
  estimate_[i] = std::max(estimate_[i], estimated);
  // A step past its estimate (within a factor of 2 of most steps, not a bound: a step whose fold is
  // given up runs its attempts one after another) is taken to need as much again as it has run, and
  // the whole run's total grows by as much, so the line keeps a time left, from the steps left too.
  done_ = done_ - reached_[i] + events;
  reached_[i] = events;
  const bool past = events > estimate_[i];
  count_as(i, past ? 2 * events : estimate_[i]);
  if (past) past_ = i;
  advance_locked({});
}

void StepRunProgress::step_share(std::size_t i, double share) {
  if (i >= estimate_.size()) return;
  step_events(i, static_cast<std::uint64_t>(static_cast<double>(estimate_[i]) * std::clamp(share, 0.0, 1.0)));
}

void StepRunProgress::step_done(std::size_t i, std::string_view what) {
  std::lock_guard guard(lock_);
  if (i >= reached_.size()) return;
  // Done, it counts its estimate, or what it ran past it.
  const std::uint64_t whole = std::max(reached_[i], estimate_[i]);
  done_ = done_ - reached_[i] + whole;
  reached_[i] = whole;
  count_as(i, whole);
  if (past_ == i) past_.reset();
  ++finished_;
  advance_locked(what);
}

void PartShare::report(const SimulationProgressReport& r) {
  if (r.part_total == 0) return;
  if (r.part != part_) {  // the next part: half of what is left
    part_ = r.part;
    from_ = share_;
    span_ = (1 - share_) / 2;
  }
  const double in_part =
      static_cast<double>(std::min(r.part_done, r.part_total)) / static_cast<double>(r.part_total);
  share_ = std::max(share_, from_ + span_ * in_part);
  phase_.advance(before_() + weight_ * share_, what_);
}

void StepRunProgress::advance_locked(std::string_view what) {
  std::string said =
      std::to_string(finished_) + " of " + std::to_string(estimate_.size()) + " " + noun_ + " done";
  if (!what.empty()) said += ", the last " + std::string(what);
  if (past_)
    said += "; one running past its estimate of about " + sim::BudgetExceeded::count_text(estimate_[*past_]) +
            " events" + (way_[*past_].empty() ? "" : " (" + way_[*past_] + ")") +
            ", taken as twice what it has run";
  progress_.advance(static_cast<double>(done_), said);
}

}  // namespace hybridsim::analysis

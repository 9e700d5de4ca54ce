#include "analysis/output/progress_estimate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ostream>
#include <utility>

#include "sim/budget.h"
#include "sim/units.h"

namespace hybridsim::analysis {

namespace {

std::string count(double v) {
  return sim::BudgetExceeded::count_text(static_cast<std::uint64_t>(std::max(0.0, std::round(v))));
}

// "12.0 MB of 200 MB", "1.2e6 of about 3.1e6 events", "3 of 40 points".
std::string amounts(double done, double total, std::string_view unit) {
  if (unit == "bytes")
    return sim::human_bytes(sim::Bytes::of(static_cast<std::int64_t>(std::max(0.0, done)))) + " of " +
           sim::human_bytes(sim::Bytes::of(static_cast<std::int64_t>(std::max(0.0, total))));
  return count(done) + " of " + (unit == "events" ? "about " : "") + count(total) + " " + std::string(unit);
}

}  // namespace

ProgressClock steady_progress_clock() {
  return [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
}

std::string wall_text(double seconds) {
  const auto s = static_cast<long long>(std::ceil(std::max(0.0, seconds)));
  if (s < 120) return std::to_string(s) + " s";
  if (s < 2 * 3600) return std::to_string((s + 59) / 60) + " min";
  const long long tenths = (s * 10 + 1799) / 3600;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " h";
}

double seconds_left(double elapsed, double done, double total) {
  if (!(done > 0) || !(total >= done) || !(elapsed >= 0)) return -1;
  return elapsed * (total - done) / done;
}

std::string estimate_text(double elapsed, double left, std::string_view until) {
  if (!(left >= 0)) return {};
  return ", about " + wall_text(left) + " left of about " + wall_text(elapsed + left) +
         (until.empty() ? std::string(" in all") : " until " + std::string(until));
}

ProgressEstimate::ProgressEstimate(std::ostream* out, std::string label, double total, std::string unit,
                                   ProgressClock clock, ProgressTiming timing)
    : out_(out),
      label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      clock_(std::move(clock)),
      timing_(timing),
      start_(clock_()),
      next_(start_ + timing.first) {}

double past_estimate_total(double done, double total) { return done > total && done > 0 ? 2 * done : total; }

SimulationAfter simulation_after(double events, std::size_t done, std::size_t of, std::string_view from) {
  const auto count = [](double v) { return sim::BudgetExceeded::count_text(static_cast<std::uint64_t>(v)); };
  return {events / sim::kEventsPerSecond, "its simulation after: about " + count(events) + " events at " +
                                              count(sim::kEventsPerSecond) + " events/s, from the " +
                                              std::to_string(done) + " of " + std::to_string(of) + " " +
                                              std::string(from)};
}

std::string ProgressEstimate::line(double done, std::string_view what) const {
  std::lock_guard guard(lock_);
  return line_locked(done, what, nullptr);
}

std::string ProgressEstimate::line_locked(double done, std::string_view what, double* whole) const {
  const double now = clock_();
  const double own = now - start_;  // this part's: its rate gives the time left
  const double elapsed = timing_.since >= 0 ? now - timing_.since : own;
  // An estimated total (events) can be passed: the estimate is within a factor of 2 of most runs,
  // not a bound. Past it the work is taken to need as much again as it has done, and the line says
  // so, with the time left that gives: "nearly done" with no time left, 10 s before the end of a
  // plan whose second step ran 2.5 times its estimate, was no estimate at all (issue 31). An exact
  // total (points, cases, bytes) is done when reached.
  // With the work after this part estimated, its time is added and the total is the command's.
  const std::string_view until = after_ >= 0 ? std::string_view() : timing_.until;
  const auto estimate = [&](double left) {
    if (left >= 0 && after_ >= 0) left += after_;
    if (whole != nullptr) *whole = left >= 0 ? elapsed + left : -1;
    std::string text = estimate_text(elapsed, left, until);
    if (!text.empty() && after_ >= 0) text += " (" + after_how_ + ")";
    return text;
  };
  if (unit_ == "events" && done > total_ && total_ > 0) {
    std::string out = label_ + ": " + wall_text(elapsed) + ", " + count(done) +
                      " events done, past the estimate of about " + count(total_) +
                      " (taken as twice what is done)" +
                      estimate(seconds_left(own, done, past_estimate_total(done, total_)));
    if (!what.empty()) out += "; " + std::string(what);
    return out;
  }
  const double shown = std::min(done, total_);
  const long percent = total_ > 0 ? std::lround(100 * shown / total_) : 0;
  std::string out = label_ + ": " + wall_text(elapsed) + ", " +
                    amounts(timing_.whole_items ? std::floor(shown) : shown, total_, unit_) + " done (" +
                    std::to_string(percent) + "%)";
  if (!(done > 0) && unit_ == "events" && total_ > 0)
    // None done yet (a plan's largest step of 16,384 GPUs set itself up for 10 s and more before its
    // first event, its lines saying no end): the time left at the rate the up-front estimate quotes.
    out += estimate(total_ / sim::kEventsPerSecond) + " (at " + count(sim::kEventsPerSecond) +
           " events/s, none done yet)";
  else if (!(done > 0))
    out += ", time left not yet known";
  else if (done >= total_)
    out += after_ >= 0 ? ", this part nearly done" + estimate(0) : ", nearly done";
  else
    out += estimate(seconds_left(own, shown, total_));
  if (!what.empty()) out += "; " + std::string(what);
  return out;
}

void ProgressEstimate::set_after(double seconds, std::string how) {
  std::lock_guard guard(lock_);
  if (after_ < 0) last_whole_ = -1;  // the lines before gave this part's end, not the command's
  after_ = std::max(0.0, seconds);
  after_how_ = std::move(how);
}

void ProgressEstimate::set_total(double total) {
  std::lock_guard guard(lock_);
  total_ = total;
}

void ProgressEstimate::advance(double done, std::string_view what) {
  if (out_ == nullptr) return;
  std::lock_guard guard(lock_);
  const double now = clock_();
  if (now < next_) return;
  next_ = now + timing_.every;
  ++lines_;
  double whole = -1;
  std::string text = line_locked(done, what, &whole);
  // A whole command's estimate that moved by more than a quarter says so: the person waiting sees
  // that the end moved, and by how much.
  if (after_ >= 0 && whole >= 0 && last_whole_ > 0 && std::abs(whole - last_whole_) > 0.25 * last_whole_)
    text += " (revised from about " + wall_text(last_whole_) + " in the last line)";
  if (whole >= 0) last_whole_ = whole;
  *out_ << text << "\n" << std::flush;
}

}  // namespace hybridsim::analysis

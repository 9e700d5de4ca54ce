// A segment of ProfilerStep windows and the streamed Kineto import's pass 2 over it
// (import_kineto_stream.h): the windows held, where each window's events lie in the file, and the GPU
// activities counted per window; then the segment's batches (passes 3.., fold_segment). Not a public
// API: the two files of the streamed import share these, import_kineto_stream.cpp running passes 1 and
// 2, import_kineto_batches.cpp the batches.
//   Assign assign(w, true, nullptr);  read_kineto_trace(path, &assign);  assign.finish();
//   fold_segment(path, head, w, assign, kBatchActivities, false, fold, counts);
#pragma once
#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workloads/import/import_kineto_launches.h"
#include "workloads/import/import_kineto_stream.h"

namespace hybridsim::workloads::kineto_detail {

// The latest `limit` ProfilerStep windows that begin before `before` (sorted_windows' order), so that
// an import holds a bounded segment of them at once; `earlier` counts all those that do.
class LatestWindows {
 public:
  LatestWindows(sim::Time before, std::size_t limit) : before_(before), limit_(limit) {}
  std::int64_t earlier = 0;
  void offer(const KinetoTrace& t, const KinetoCpuEvent& e) {
    if (e.kind != KinetoCpuKind::Annotation || e.start >= before_ ||
        !t.name_of(e.name).starts_with(kProfilerStep))
      return;
    ++earlier;
    held_.push_back({t.name_of(e.name), e.start, e.start + e.duration, e.duration});
    if (held_.size() >= limit_ + limit_ / 4 + 1) drop_earliest();  // a quarter over: amortized
  }
  // The segment, sorted by begin; the earliest of them dropped until none shares a begin with a
  // window left for a later segment. nullopt when that leaves none (a pile of windows at one time).
  std::optional<IterationWindows> take() {
    if (held_.size() > limit_) drop_earliest();
    if (static_cast<std::int64_t>(held_.size()) < earlier)
      std::erase_if(held_, [&](const IterationWindow& w) { return w.begin <= dropped_; });
    if (held_.empty() && earlier > 0) return std::nullopt;
    return sorted_windows(std::move(held_));
  }
  std::size_t limit() const { return limit_; }
  // Whether the segment taken holds every window left: the earliest segment.
  bool all_taken(const IterationWindows& segment) const {
    return static_cast<std::int64_t>(segment.windows.size()) == earlier;
  }

 private:
  // Keeps the latest `limit_` by begin, remembering the latest begin dropped.
  void drop_earliest() {
    const auto cut = held_.end() - static_cast<std::ptrdiff_t>(limit_);
    std::nth_element(held_.begin(), cut, held_.end(),
                     [](const IterationWindow& a, const IterationWindow& b) { return a.begin < b.begin; });
    for (auto it = held_.begin(); it != cut; ++it) dropped_ = max(dropped_, it->begin);
    held_.erase(held_.begin(), cut);
  }
  sim::Time before_;
  std::size_t limit_;
  sim::Time dropped_ = sim::Time::ps(INT64_MIN);
  std::vector<IterationWindow> held_;
};

// Where a GPU activity goes: the window of its launch, else of its start (assign_to_windows), among
// the segment's windows. The segment answers for the times [from, to): the earlier ones are a later
// segment's (from: its first window's begin, or the earliest time for the earliest segment), the
// later ones an earlier segment's.
struct Windows {
  const std::vector<IterationWindow>& list;
  int device = 0;
  sim::Time from = sim::Time::ps(INT64_MIN), to = sim::Time::max();
  std::optional<std::size_t> of(sim::Time launch_or_start) const { return window_at(list, launch_or_start); }
  bool answers_for(sim::Time launch_or_start) const {
    return launch_or_start >= from && launch_or_start < to;
  }
};

// Where in the file the events a batch may hold lie: from the first one's opening brace (and its
// index in traceEvents) to just after the last one's closing brace.
struct Extent {
  std::int64_t first_byte = INT64_MAX, first_index = 0, last_end = -1;
  void add(const KinetoEventPlace& at, std::int64_t end) {
    if (at.byte < first_byte) first_byte = at.byte, first_index = at.index;
    last_end = std::max(last_end, end);
  }
  void add(const Extent& e) {
    if (e.first_byte < first_byte) first_byte = e.first_byte, first_index = e.first_index;
    last_end = std::max(last_end, e.last_end);
  }
};

// An event a batch of windows [lo, hi] may hold when a <= hi and b >= lo (Batch's rule): one over
// more than two windows is remembered apart.
struct WideEvent {
  std::size_t a, b;
  Extent extent;
};

// Pass 2 of a segment: the device's activities counted per window of the segment, and where each
// window's events lie in the file (so that a batch reads only its part of it); in the first
// segment's pass, every activity of the device checked in time order (check_time_order). With
// `next`, the windows of the following (earlier) segment are gathered on the way.
class Assign : public KinetoKeep {
 public:
  static constexpr std::size_t kMaxWide = 4096;  // beyond: batches read the whole file
  Assign(const Windows& w, bool check_order, LatestWindows* next)
      : per_window(w.list.size()), extents(w.list.size()), check_order_(check_order), next_(next), w_(w) {}
  std::vector<std::int64_t> per_window;
  std::vector<Extent> extents;
  std::vector<WideEvent> wide;
  bool ranges = true;
  Extent first;  // the first event of the file
  TimeOrder order;
  bool over_limit = false;
  std::int64_t outside = 0;
  LaunchTable launches;
  bool gpu(const KinetoTrace&, const KinetoGpuActivity& a) override {
    note();
    const bool mine = a.device == w_.device;
    const auto found = launches.find(a.correlation, {a.start, a.at, end_byte, mine, false});
    if (!mine) return false;
    if (check_order_) over_limit |= !order.add(a.duration);
    if (found.status == LaunchTable::Status::Found)
      count(a.start, a.at, end_byte, found.launch);
    else if (found.status != LaunchTable::Status::Pending)
      count(a.start, a.at, end_byte, std::nullopt);
    return false;
  }
  bool cpu(const KinetoTrace& t, const KinetoCpuEvent& e) override {
    note();
    if (next_) next_->offer(t, e);
    if (e.kind == KinetoCpuKind::Runtime) {
      for (const auto& a : launches.launch(e.correlation, e.start))
        if (a.mine) count(a.start, a.at, a.end_byte, e.start);
    }
    span(e.start, e.start + e.duration);
    return false;
  }
  // The end of the pass: the activities whose launch never came go by their start.
  void finish() {
    for (const auto& a : launches.finish())
      if (a.mine) count(a.start, a.at, a.end_byte, std::nullopt);
  }
  bool flow(const KinetoTrace&, const KinetoFlowPoint& f) override {
    note();
    span(f.time, f.time);
    return false;
  }

 private:
  void note() {
    if (first.last_end < 0) first.add(at, end_byte);
  }
  void span(sim::Time from, sim::Time to);
  // One activity of the device, with its launch's time when it has one.
  void count(sim::Time start, const KinetoEventPlace& place, std::int64_t end,
             std::optional<sim::Time> launch) {
    if (launch && check_order_) order.launched_at(start, *launch);
    if (!w_.answers_for(launch.value_or(start))) return;
    if (const auto w = w_.of(launch.value_or(start))) {
      ++per_window[*w];
      extents[*w].add(place, end);
    } else {
      ++outside;
    }
  }
  bool check_order_;
  LatestWindows* next_;
  const Windows& w_;
};

// The segment's windows, latest first, in batches of at most `batch_activities` GPU activities
// (fold_batch); false when the trace must be imported whole.
bool fold_segment(const std::string& path, const KinetoTrace& head, const Windows& w, const Assign& pass,
                  std::int64_t batch_activities, bool keep_gaps, IterationFold& fold,
                  StreamedImportCounts& counts);

}  // namespace hybridsim::workloads::kineto_detail

// The streamed Kineto import (import_kineto_stream.h): the passes over the file and the checks
// that a batch of windows holds everything its iterations refer to.
#include "workloads/import/import_kineto_stream.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <unordered_map>

#include "workloads/import/import_kineto_launches.h"
#include "workloads/import/import_kineto_reader.h"

namespace hybridsim::workloads::kineto_detail {

namespace {

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

// Pass 1: the first segment of ProfilerStep windows and the GPU activities counted per device;
// nothing stored in the trace.
class Survey : public KinetoKeep {
 public:
  explicit Survey(std::size_t limit) : windows(sim::Time::max(), limit) {}
  std::map<int, std::int64_t> per_device;
  LatestWindows windows;
  bool gpu(const KinetoTrace&, const KinetoGpuActivity& a) override {
    ++per_device[a.device];
    return false;
  }
  bool cpu(const KinetoTrace& t, const KinetoCpuEvent& e) override {
    windows.offer(t, e);
    return false;
  }
  bool flow(const KinetoTrace&, const KinetoFlowPoint&) override { return false; }
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
    if (found.status == LaunchTable::Status::Found) count(a.start, a.at, end_byte, found.launch);
    else if (found.status != LaunchTable::Status::Pending) count(a.start, a.at, end_byte, std::nullopt);
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

void Assign::span(sim::Time from, sim::Time to) {
  const auto& l = w_.list;
  const auto a = static_cast<std::size_t>(
      std::upper_bound(l.begin(), l.end(), from,
                       [](sim::Time t, const IterationWindow& w) { return t < w.end; }) -
      l.begin());
  const auto after = static_cast<std::size_t>(
      std::upper_bound(l.begin(), l.end(), to,
                       [](sim::Time t, const IterationWindow& w) { return t < w.begin; }) -
      l.begin());
  if (a >= l.size() || after == 0) return;  // before or after every window: in no batch
  const std::size_t b = after - 1;
  Extent e;
  e.add(at, end_byte);
  extents[a].add(e);
  extents[b].add(e);
  if (b >= a + 2) {
    wide.push_back({a, b, e});
    ranges &= wide.size() <= kMaxWide;
  }
}

// Passes 3..: the events of windows [lo, hi]: GPU activities by window, CPU events that overlap
// the batch's time (ending at or after its begin: top_level_at's spans hold their end), flows by
// time. Remembers, per thread, where a CPU op not held could change the nesting of one held.
class Batch : public KinetoKeep {
 public:
  Batch(const Windows& w, std::size_t lo, std::size_t hi)
      : w_(w), lo_(lo), hi_(hi), begin_(w.list[lo].begin), end_(w.list[hi].end) {}
  // An activity met before its launch is held by its start; its launch, when it comes, must agree.
  bool gpu(const KinetoTrace&, const KinetoGpuActivity& a) override {
    const bool mine = a.device == w_.device;
    LaunchTable::Activity pending{a.start, a.at, end_byte, mine, mine && in_batch(a.start)};
    const auto found = launches_.find(a.correlation, pending);
    if (!mine) return false;
    return found.status == LaunchTable::Status::Found ? in_batch(found.launch) : pending.held;
  }
  bool cpu(const KinetoTrace&, const KinetoCpuEvent& e) override {
    if (e.kind == KinetoCpuKind::Runtime) {
      for (const auto& a : launches_.launch(e.correlation, e.start))
        launches_agree_ &= !a.mine || a.held == in_batch(e.start);
    }
    const bool held = e.start < end_ && e.start + e.duration >= begin_;
    if (held && e.kind == KinetoCpuKind::Op) earliest_op_ = min(earliest_op_, e.start);
    if (e.kind == KinetoCpuKind::Op && e.start < begin_) {
      auto& [dropped_end, held_start] =
          threads_.try_emplace(e.thread, sim::Time::ps(INT64_MIN), sim::Time::max()).first->second;
      if (held) held_start = min(held_start, e.start);
      else dropped_end = max(dropped_end, e.start + e.duration);
    }
    return held;
  }
  bool flow(const KinetoTrace&, const KinetoFlowPoint& f) override {
    return f.time >= begin_ && f.time < end_;
  }
  sim::Time earliest_op() const { return earliest_op_; }
  // Every activity held or left out as its launch (the first with its id in the part) has it.
  bool launches_known() {
    launches_.finish();
    return launches_agree_ && launches_.exact();
  }
  std::int64_t launches_high_water() const { return launches_.high_water(); }
  // No op left out ends after one held (on its thread) starts: the held nesting is the whole one.
  bool nesting_held() const {
    return std::all_of(threads_.begin(), threads_.end(),
                       [](const auto& th) { return th.second.first <= th.second.second; });
  }

 private:
  const Windows& w_;
  std::size_t lo_, hi_;
  sim::Time begin_, end_;
  sim::Time earliest_op_ = sim::Time::max();
  std::unordered_map<std::uint32_t, std::pair<sim::Time, sim::Time>> threads_;
  LaunchTable launches_;
  bool launches_agree_ = true;
  bool in_batch(sim::Time launch_or_start) const {
    const auto w = w_.of(launch_or_start);
    return w && *w >= lo_ && *w <= hi_;
  }
};

// Every flow's backward end has its forward end in the batch, one flow a backward op, and every
// activity's External id is a held op's: what the index resolves is what the whole trace would.
bool references_held(const KinetoTrace& t, const KinetoIndex& index) {
  std::unordered_map<std::int64_t, std::pair<int, int>> ends;  // id → (starts, finishes)
  for (const auto& f : t.fwdbwd) ++(f.is_start ? ends[f.id].first : ends[f.id].second);
  std::unordered_map<std::uint32_t, int> flows_of;
  for (const auto& f : t.fwdbwd) {
    const auto [starts, finishes] = ends[f.id];
    if (starts > 1 || finishes > 1 || (!f.is_start && starts == 0)) return false;
    if (f.is_start) continue;
    if (const auto bwd = index.top_level_at(f.thread, f.time); bwd && ++flows_of[*bwd] > 1) return false;
  }
  return std::all_of(t.gpu.begin(), t.gpu.end(), [&](const KinetoGpuActivity& a) {
    return a.external_id < 0 || index.knows_external(a.external_id);
  });
}

// The bytes [from, to) of a file (whole trace events) as a trace of their own:
// {"traceEvents":[ ... ]}.
class RangeBuffer : public std::streambuf {
 public:
  static constexpr std::string_view kHead = "{\"traceEvents\":[", kTail = "]}";
  RangeBuffer(std::istream& in, std::int64_t from, std::int64_t to) : in_(in), left_(to - from) {
    in_.seekg(from);
  }

 protected:
  int_type underflow() override {
    if (stage_ == 0) {
      chunk_.assign(kHead);
      stage_ = 1;
    } else if (stage_ == 1 && left_ > 0 && in_) {
      chunk_.resize(static_cast<std::size_t>(std::min<std::int64_t>(left_, 1 << 16)));
      in_.read(chunk_.data(), static_cast<std::streamsize>(chunk_.size()));
      chunk_.resize(static_cast<std::size_t>(in_.gcount()));
      left_ -= static_cast<std::int64_t>(chunk_.size());
      if (chunk_.empty()) left_ = 0;
    } else if (stage_ == 1) {
      chunk_.assign(kTail);
      stage_ = 2;
    } else {
      return traits_type::eof();
    }
    if (chunk_.empty()) return underflow();
    setg(chunk_.data(), chunk_.data(), chunk_.data() + chunk_.size());
    return traits_type::to_int_type(chunk_[0]);
  }

 private:
  std::istream& in_;
  std::int64_t left_;
  int stage_ = 0;
  std::string chunk_;
};

// The events of `range` read as the whole file would read them (their places, times relative to
// the file's first kept event); nullopt when the part does not parse alone.
std::optional<KinetoTrace> read_range(const std::string& path, const Extent& range, const KinetoTrace& head,
                                      KinetoKeep& keep) {
  std::ifstream in(path, std::ios::binary);
  RangeBuffer part(in, range.first_byte, range.last_end);
  CountingBuffer counted_part(&part, range.first_byte - static_cast<std::int64_t>(RangeBuffer::kHead.size()));
  std::istream stream(&counted_part);
  KinetoTrace t;
  t.source = path;
  t.events_read = range.first_index;
  t.origin_us = head.origin_us;
  t.origin_sub_ps = head.origin_sub_ps;
  TraceSax sax(t, path, 0, counted_part, &keep);
  sax.builder().set_origin(static_cast<Wide>(head.origin_us) * kPsPerUs + head.origin_sub_ps);
  if (!nlohmann::json::sax_parse(stream, &sax)) return std::nullopt;
  return t;
}

// One batch read (its part of the file when `range`), checked and folded; false when it must be
// imported whole.
bool fold_batch(const std::string& path, const KinetoTrace& head, const Windows& w, const Assign& pass,
                std::size_t lo, std::size_t hi, bool keep_gaps, IterationFold& fold,
                StreamedImportCounts& counts) {
  Batch keep(w, lo, hi), whole(w, lo, hi);
  Batch* used = &keep;
  Extent range = lo == 0 ? pass.first : pass.extents[lo - 1];
  for (std::size_t i = lo; i <= hi; ++i) range.add(pass.extents[i]);
  for (const WideEvent& e : pass.wide)
    if (e.a <= hi && e.b >= lo) range.add(e.extent);
  std::optional<KinetoTrace> part;
  if (pass.ranges) part = read_range(path, range, head, keep);
  // A held op from before the window ahead of the batch: ops it may nest with lie outside the part.
  if (!part || (lo > 0 && keep.earliest_op() < w.list[lo - 1].begin)) {
    part = read_kineto_trace(path, &whole);
    used = &whole;
  }
  if (!used->launches_known()) return false;
  counts.launches = std::max(counts.launches, used->launches_high_water());
  counts.events = std::max(counts.events, static_cast<std::int64_t>(part->gpu.size() + part->cpu.size() +
                                                                    part->fwdbwd.size()));
  const KinetoTrace& t = *part;
  const KinetoIndex index(t);
  const WindowAssignment a = assign_to_windows(t, index, w.list, w.device);
  std::size_t held = 0;
  for (std::size_t i = lo; i <= hi; ++i) {
    if (static_cast<std::int64_t>(a.content[i].gpu.size()) != pass.per_window[i]) return false;
    held += a.content[i].gpu.size();
  }
  if (held != t.gpu.size() || !used->nesting_held() || !references_held(t, index)) return false;
  for (std::size_t i = hi + 1; i-- > lo;) {
    if (fold.wants(w.list[i].name, pass.per_window[i] > 0))
      fold.add(w.list[i].name, extract_iteration(t, index, w.list[i], a.content[i], keep_gaps));
  }
  return true;
}

// The segment's windows, latest first, in batches of at most `batch_activities` GPU activities
// (fold_batch); false when the trace must be imported whole.
bool fold_segment(const std::string& path, const KinetoTrace& head, const Windows& w, const Assign& pass,
                  std::int64_t batch_activities, bool keep_gaps, IterationFold& fold,
                  StreamedImportCounts& counts) {
  const auto& per_window = pass.per_window;
  for (std::size_t hi = w.list.size(); hi > 0;) {
    if (fold.full() || per_window[hi - 1] == 0) {  // nothing to extract: no pass
      fold.wants(w.list[hi - 1].name, per_window[hi - 1] > 0);
      --hi;
      continue;
    }
    std::size_t lo = hi - 1;
    for (std::int64_t held = per_window[lo]; lo > 0 && held + per_window[lo - 1] <= batch_activities;)
      held += per_window[--lo];
    if (!fold_batch(path, head, w, pass, lo, hi - 1, keep_gaps, fold, counts)) return false;
    hi = lo;
  }
  return true;
}

}  // namespace

std::optional<KinetoImport> import_kineto_streamed(const std::string& path, const KinetoImportOptions& o,
                                                   std::int64_t batch_activities,
                                                   StreamedImportCounts* counted,
                                                   std::int64_t segment_windows) {
  check_options(o);
  StreamedImportCounts ignored;
  StreamedImportCounts& counts = counted ? *counted : ignored;
  Survey survey(static_cast<std::size_t>(std::max<std::int64_t>(segment_windows, 1)));
  const KinetoTrace head = read_kineto_trace(path, &survey);
  if (survey.per_device.empty()) return std::nullopt;  // the whole import names what is wrong
  KinetoImport result;
  KinetoImportReport& r = result.report;
  start_report(r, head, choose_device(head, survey.per_device, o.device));
  LatestWindows picked = std::move(survey.windows);
  // The windows, then each segment's own read, then its batches' parts (about the file once in all).
  const std::int64_t limit = static_cast<std::int64_t>(std::max<std::size_t>(picked.limit(), 1));
  const std::int64_t segments = std::max<std::int64_t>(1, (picked.earlier + limit - 1) / limit);
  if (segments > 1 && o.passes_known)
    o.passes_known(static_cast<int>(std::min<std::int64_t>(2 + segments, 1 << 20)));
  std::optional<IterationWindows> segment = picked.take();
  if (!segment || segment->whole_trace) return std::nullopt;
  IterationFold fold(o.steps);
  std::int64_t outside = 0;
  // Segments of windows latest first, each with its own pass 2 and batches (one segment unless the
  // trace has more than `segment_windows` iterations).
  sim::Time to = sim::Time::max();  // where the segment's times end: the later segment's first begin
  while (true) {
    if (!segment) return std::nullopt;
    const auto& list = segment->windows;
    const bool earliest = picked.all_taken(*segment);
    const sim::Time first_begin = list.front().begin;
    counts.windows = std::max(counts.windows, static_cast<std::int64_t>(list.size()));
    const Windows w{list, r.device, earliest ? sim::Time::ps(INT64_MIN) : first_begin, to};
    LatestWindows next(first_begin, picked.limit());
    const bool first = to == sim::Time::max();
    Assign assign(w, first, earliest ? nullptr : &next);
    read_kineto_trace(path, &assign);
    assign.finish();
    counts.launches = std::max(counts.launches, assign.launches.high_water());
    if (!assign.launches.exact() || assign.over_limit || assign.order.reversed()) return std::nullopt;
    if (first)
      for (auto& note : assign.order.notes(r.device)) r.notes.push_back(std::move(note));
    outside += assign.outside;
    if (!fold_segment(path, head, w, assign, batch_activities, o.keep_gaps, fold, counts))
      return std::nullopt;
    if (earliest) break;
    picked = std::move(next);
    segment = picked.take();
    to = first_begin;
  }
  note_windows(r, IterationWindows{}, outside);
  counts.iteration_records = fold.records_high_water();
  return finish_import(fold, std::move(result), o);
}

}  // namespace hybridsim::workloads::kineto_detail

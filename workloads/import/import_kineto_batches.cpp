// The streamed Kineto import's passes 3.. (import_kineto_segment.h, fold_segment): a segment's windows
// in batches, each reading only its part of the file, checked to hold everything its iterations refer
// to, and folded. A file of its own: reading a part of the file as a trace and the checks that make
// its result the whole import's are apart from the passes that find the windows.
#include "workloads/import/import_kineto_segment.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <unordered_map>

#include "workloads/import/import_kineto_reader.h"

namespace hybridsim::workloads::kineto_detail {

namespace {

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
      if (held)
        held_start = min(held_start, e.start);
      else
        dropped_end = max(dropped_end, e.start + e.duration);
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
  counts.events = std::max(
      counts.events, static_cast<std::int64_t>(part->gpu.size() + part->cpu.size() + part->fwdbwd.size()));
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

}  // namespace

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

}  // namespace hybridsim::workloads::kineto_detail

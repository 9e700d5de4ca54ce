// The streamed Kineto import (import_kineto_stream.h): passes 1 and 2 over the file, segment by
// segment (import_kineto_segment.h); each segment's batches are import_kineto_batches.cpp's.
#include "workloads/import/import_kineto_stream.h"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <utility>

#include "workloads/import/import_kineto_launches.h"
#include "workloads/import/import_kineto_reader.h"
#include "workloads/import/import_kineto_segment.h"

namespace hybridsim::workloads::kineto_detail {

namespace {

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

}  // namespace

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

// One iteration of a Kineto trace made into draft ops: GPU activities launched in the window are
// attributed to the outermost CPU op that launched them (forward), to the forward op of the backward
// op that launched them (fwdbwd), or to the optimizer (launched after backward began, outside it);
// overlapping streams are clipped to the device's busy time, idle time is measured as launch gaps
// (and kept, on request, as idle time before the activity after each gap). The gradients and the
// final ops are in import_kineto_ops.cpp.
#include <algorithm>
#include <map>

#include "workloads/import/import_kineto_detail.h"

namespace hybridsim::workloads::kineto_detail {

namespace {

constexpr std::string_view kEvaluatePrefix = "autograd::engine::evaluate_function: ";
// Keys of the slots of activities no CPU op launched: above every CPU event index.
constexpr std::uint64_t kOrphanKeyBase = std::uint64_t{1} << 40;

}  // namespace

std::size_t DraftSlots::slot_for(std::uint64_t key, std::string base, sim::Time order, bool own_backward) {
  const auto [it, inserted] = slot_of_.try_emplace(key, slots_.size());
  if (inserted) slots_.push_back({std::move(base), order, own_backward, {}, {}});
  return it->second;
}

std::size_t DraftSlots::forward_slot(const KinetoTrace& t, std::uint32_t event) {
  const auto& e = t.cpu[event];
  return slot_for(event, t.name_of(e.name), e.start, false);
}

std::size_t DraftSlots::orphan_slot(std::uint32_t gpu, sim::Time start) {
  return slot_for(kOrphanKeyBase + gpu, "(no cpu op)", start, false);
}

std::vector<WindowActivity> order_activities(const KinetoTrace& t, const KinetoIndex& index,
                                             const WindowContent& content, IterationDraft& d) {
  std::vector<WindowActivity> items;
  for (const std::uint32_t i : content.gpu) {
    const KinetoGpuActivity& a = t.gpu[i];
    const auto launch = index.launch_of(a);
    if (!launch) ++d.notes["GPU activities without a launch record, attributed by their start time"];
    items.push_back({i, launch ? launch->time : a.start, index.is_nccl(a)});
  }
  d.stats.activities = static_cast<std::int64_t>(items.size());
  std::sort(items.begin(), items.end(), [&](const WindowActivity& x, const WindowActivity& y) {
    const auto& a = t.gpu[x.gpu];
    const auto& b = t.gpu[y.gpu];
    if (a.start != b.start) return a.start < b.start;
    if (a.duration != b.duration) return a.duration < b.duration;
    return x.gpu < y.gpu;
  });
  // One stream runs one activity at a time: one starting before the previous one on its stream
  // ends is a measurement that is off, said so (its overlap is clipped, as across streams).
  std::map<std::int64_t, sim::Time> stream_end;
  for (const WindowActivity& it : items) {
    const KinetoGpuActivity& a = t.gpu[it.gpu];
    auto [end, first] = stream_end.try_emplace(a.stream, a.start + a.duration);
    if (first) continue;
    if (a.start < end->second)
      ++d.notes["GPU activities starting before the previous one on their stream ends (a stream runs one at "
                "a time: the trace's times are off; the overlap is clipped)"];
    end->second = max(end->second, a.start + a.duration);
  }
  return items;
}

BackwardOps find_backward_ops(const KinetoTrace& t, const KinetoIndex& index, const IterationWindow& w,
                              DraftSlots& slots) {
  BackwardOps b;
  for (const auto& top : index.top_levels_in(w.begin, w.end))
    if (index.is_backward(top.event)) b.ops.push_back(top);
  if (!b.ops.empty()) b.begin = b.ops.front().start;
  b.owner.assign(b.ops.size(), kNoSlot);
  bool any_linked = false;
  for (std::size_t i = 0; i < b.ops.size(); ++i) {
    b.position[b.ops[i].event] = i;
    if (const auto fwd = index.forward_of(b.ops[i].event)) {
      b.owner[i] = slots.forward_slot(t, *fwd);
      any_linked = true;
    }
  }
  if (any_linked) {
    std::size_t prev = kNoSlot;
    for (auto& o : b.owner) {
      if (o == kNoSlot) o = prev;
      else prev = o;
    }
    const auto first =
        std::find_if(b.owner.begin(), b.owner.end(), [](std::size_t o) { return o != kNoSlot; });
    for (auto it = b.owner.begin(); it != first; ++it) *it = *first;
  } else {
    for (std::size_t i = 0; i < b.ops.size(); ++i) {
      std::string name = t.name_of(t.cpu[b.ops[i].event].name);
      if (name.starts_with(kEvaluatePrefix)) name = name.substr(kEvaluatePrefix.size());
      b.owner[i] = slots.slot_for(b.ops[i].event, name, b.ops[i].start, true);
    }
  }
  return b;
}

sim::Time covered_by(const Intervals& merged, sim::Time from, sim::Time to) {
  sim::Time total;
  for (const auto& [s, e] : merged) {
    if (e <= from) continue;
    if (s >= to) break;
    total += min(e, to) - max(s, from);
  }
  return total;
}

Intervals measure_span_and_nccl(const KinetoTrace& t, const std::vector<WindowActivity>& activities,
                                IterationDraft& d) {
  Intervals nccl;
  sim::Time span_begin, span_end;
  bool first = true;
  for (const WindowActivity& it : activities) {
    const auto& a = t.gpu[it.gpu];
    if (first || a.start < span_begin) span_begin = a.start;
    if (first || a.start + a.duration > span_end) span_end = a.start + a.duration;
    first = false;
    if (!it.nccl) continue;
    d.stats.communication += a.duration;
    if (!nccl.empty() && a.start <= nccl.back().second)
      nccl.back().second = max(nccl.back().second, a.start + a.duration);
    else nccl.emplace_back(a.start, a.start + a.duration);
  }
  d.stats.span = span_end - span_begin;
  return nccl;
}

void attribute_kernels(const KinetoTrace& t, const KinetoIndex& index,
                       const std::vector<WindowActivity>& activities, const Intervals& nccl,
                       const BackwardOps& backward, bool keep_gaps, DraftSlots& slots, IterationDraft& d) {
  if (activities.empty()) return;
  sim::Time span_begin = t.gpu[activities.front().gpu].start;  // sorted by start
  sim::Time covered = span_begin;
  for (const WindowActivity& it : activities) {
    if (it.nccl) continue;
    const auto& a = t.gpu[it.gpu];
    const sim::Time end = a.start + a.duration;
    sim::Time gap;
    if (a.start > covered) {
      gap = a.start - covered - covered_by(nccl, covered, a.start);
      if (gap > sim::Time::zero()) {
        d.stats.launch_gaps += gap;
        ++d.stats.gap_count;
        d.stats.largest_gap = max(d.stats.largest_gap, gap);
      }
    }
    const sim::Time exclusive = max(sim::Time::zero(), end - max(a.start, covered));
    d.stats.stream_overlap += a.duration - exclusive;
    d.stats.busy += exclusive;
    covered = max(covered, end);
    const sim::Time idle = keep_gaps ? max(gap, sim::Time::zero()) : sim::Time::zero();
    DraftKernel k{short_kernel_name(t.name_of(a.name)), exclusive, a.stream, idle};

    const auto top = index.owner_of(a);
    const auto pos = top ? backward.position.find(*top) : backward.position.end();
    if (pos != backward.position.end()) {
      slots[backward.owner[pos->second]].op.backward.push_back(std::move(k));
      d.stats.backward += exclusive;
    } else if ((top ? t.cpu[*top].start : it.anchor) >= backward.begin) {
      d.optimizer += exclusive;
      d.optimizer_idle += idle;
      d.stats.optimizer += exclusive;
    } else {
      const std::size_t s = top ? slots.forward_slot(t, *top) : slots.orphan_slot(it.gpu, a.start);
      slots[s].streams.push_back(a.stream);
      slots[s].op.forward.push_back(std::move(k));
      d.stats.forward += exclusive;
    }
  }
  d.stats.exposed_communication = d.stats.span - d.stats.busy - d.stats.launch_gaps;
}

IterationDraft extract_iteration(const KinetoTrace& t, const KinetoIndex& index, const IterationWindow& w,
                                 const WindowContent& content, bool keep_gaps) {
  IterationDraft d;
  d.stats.name = w.name;
  d.stats.cpu_duration = w.cpu_duration;
  const std::vector<WindowActivity> activities = order_activities(t, index, content, d);
  if (activities.empty()) return d;
  DraftSlots slots;
  const BackwardOps backward = find_backward_ops(t, index, w, slots);
  const Intervals nccl = measure_span_and_nccl(t, activities, d);
  attribute_kernels(t, index, activities, nccl, backward, keep_gaps, slots, d);
  attach_nccl_gradients(t, index, activities, backward, slots, d);
  attach_accumulate_gradients(t, content, backward, slots, d);
  d.optimizer_name = optimizer_name(t, content);
  finish_ops(slots, d);
  return d;
}

}  // namespace hybridsim::workloads::kineto_detail

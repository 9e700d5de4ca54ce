// One iteration of a Kineto trace made into draft ops: GPU activities launched in the window are
// attributed to the outermost CPU op that launched them (forward), to the forward op of the backward
// op that launched them (fwdbwd), or to the optimizer (launched after backward began, outside it);
// overlapping streams are clipped to the device's busy time, idle time is measured as launch gaps
// (and kept, on request, as idle time before the activity after each gap).
#include <algorithm>
#include <unordered_map>

#include "workloads/import_kineto_detail.h"
#include "workloads/import_kineto_values.h"
#include "sim/text.h"

namespace hybridsim::workloads::kineto_detail {

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);
constexpr std::string_view kEvaluatePrefix = "autograd::engine::evaluate_function: ";

struct Item {
  std::uint32_t gpu = 0;
  sim::Time anchor;  // launch time, else GPU start
  bool nccl = false;
};

struct Slot {
  std::string base;
  sim::Time order;
  bool own_backward = false;  // a backward op without a forward op (no fwdbwd flows at all)
  DraftOp op;
  std::vector<std::int64_t> streams;  // of its forward kernels
  bool has_kernels() const { return !op.forward.empty() || !op.backward.empty(); }
};

// Length of [from, to) covered by the merged, sorted intervals.
sim::Time covered_by(const std::vector<std::pair<sim::Time, sim::Time>>& merged, sim::Time from,
                     sim::Time to) {
  sim::Time total;
  for (const auto& [s, e] : merged) {
    if (e <= from) continue;
    if (s >= to) break;
    total += min(e, to) - max(s, from);
  }
  return total;
}

}  // namespace

IterationDraft extract_iteration(const KinetoTrace& t, const KinetoIndex& index,
                                 const IterationWindow& w, const WindowContent& content,
                                 bool keep_gaps) {
  IterationDraft d;
  d.stats.name = w.name;
  d.stats.cpu_duration = w.cpu_duration;

  std::vector<Item> items;
  for (const std::uint32_t i : content.gpu) {
    const KinetoGpuActivity& a = t.gpu[i];
    const auto launch = index.launch_of(a);
    if (!launch) ++d.notes["GPU activities without a launch record, attributed by their start time"];
    items.push_back({i, launch ? launch->time : a.start, index.is_nccl(a)});
  }
  d.stats.activities = static_cast<std::int64_t>(items.size());
  if (items.empty()) return d;
  std::sort(items.begin(), items.end(), [&](const Item& x, const Item& y) {
    const auto& a = t.gpu[x.gpu];
    const auto& b = t.gpu[y.gpu];
    if (a.start != b.start) return a.start < b.start;
    if (a.duration != b.duration) return a.duration < b.duration;
    return x.gpu < y.gpu;
  });

  // Slots: one per forward outermost op (or own backward op), created on first use.
  std::vector<Slot> slots;
  std::unordered_map<std::uint64_t, std::size_t> slot_of;
  auto slot_for = [&](std::uint64_t key, std::string base, sim::Time order, bool own) {
    const auto [it, inserted] = slot_of.try_emplace(key, slots.size());
    if (inserted) slots.push_back({std::move(base), order, own, {}, {}});
    return it->second;
  };
  auto forward_slot = [&](std::uint32_t event) {
    const auto& e = t.cpu[event];
    return slot_for(event, t.name_of(e.name), e.start, false);
  };

  // Backward outermost ops of the window and the slot each one's kernels go to.
  std::vector<TopLevelOp> bwd;
  for (const auto& top : index.top_levels_in(w.begin, w.end))
    if (index.is_backward(top.event)) bwd.push_back(top);
  const sim::Time backward_begin = bwd.empty() ? sim::Time::max() : bwd.front().start;
  std::vector<std::size_t> owner(bwd.size(), kNone);
  std::unordered_map<std::uint32_t, std::size_t> bwd_pos;
  bool any_linked = false;
  for (std::size_t i = 0; i < bwd.size(); ++i) {
    bwd_pos[bwd[i].event] = i;
    if (const auto fwd = index.forward_of(bwd[i].event)) {
      owner[i] = forward_slot(*fwd);
      any_linked = true;
    }
  }
  if (any_linked) {
    // Unlinked backward ops (AccumulateGrad, hooks, GraphRoot) belong to the op before them; the
    // ones before the first linked op to the first linked op.
    std::size_t prev = kNone;
    for (auto& o : owner) {
      if (o == kNone) o = prev;
      else prev = o;
    }
    const auto first = std::find_if(owner.begin(), owner.end(), [](std::size_t o) { return o != kNone; });
    for (auto it = owner.begin(); it != first; ++it) *it = *first;
  } else {
    for (std::size_t i = 0; i < bwd.size(); ++i) {
      std::string name = t.name_of(t.cpu[bwd[i].event].name);
      if (name.starts_with(kEvaluatePrefix)) name = name.substr(kEvaluatePrefix.size());
      owner[i] = slot_for(bwd[i].event, name, bwd[i].start, true);
    }
  }

  // The GPU timeline: clip overlapping streams, measure idle gaps (not counting NCCL-only time).
  std::vector<std::pair<sim::Time, sim::Time>> nccl;
  sim::Time span_begin, span_end;
  bool first = true;
  for (const Item& it : items) {
    const auto& a = t.gpu[it.gpu];
    if (first || a.start < span_begin) span_begin = a.start;
    if (first || a.start + a.duration > span_end) span_end = a.start + a.duration;
    first = false;
    if (!it.nccl) continue;
    d.stats.communication += a.duration;
    if (!nccl.empty() && a.start <= nccl.back().second) nccl.back().second = max(nccl.back().second, a.start + a.duration);
    else nccl.emplace_back(a.start, a.start + a.duration);
  }
  sim::Time covered = span_begin;
  for (const Item& it : items) {
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
    const sim::Time duration = exclusive;
    const sim::Time idle = keep_gaps ? max(gap, sim::Time::zero()) : sim::Time::zero();
    DraftKernel k{short_kernel_name(t.name_of(a.name)), duration, a.stream, idle};

    const auto top = index.owner_of(a);
    const auto pos = top ? bwd_pos.find(*top) : bwd_pos.end();
    if (pos != bwd_pos.end()) {
      slots[owner[pos->second]].op.backward.push_back(std::move(k));
      d.stats.backward += duration;
    } else if ((top ? t.cpu[*top].start : it.anchor) >= backward_begin) {
      d.optimizer += duration;
      d.optimizer_idle += idle;
      d.stats.optimizer += duration;
    } else {
      const std::size_t s = top ? forward_slot(*top)
                                : slot_for((std::uint64_t{1} << 40) + it.gpu, "(no cpu op)", a.start, false);
      slots[s].streams.push_back(a.stream);
      slots[s].op.forward.push_back(std::move(k));
      d.stats.forward += duration;
    }
  }
  d.stats.span = span_end - span_begin;
  d.stats.exposed_communication = d.stats.span - d.stats.busy - d.stats.launch_gaps;

  // Gradients land on the op whose backward ran last before them (with kernels of its own).
  auto anchor_slot = [&](sim::Time when) -> std::size_t {
    auto it = std::upper_bound(bwd.begin(), bwd.end(), when,
                               [](sim::Time x, const TopLevelOp& op) { return x < op.start; });
    while (it != bwd.begin()) {
      --it;
      const std::size_t s = owner[static_cast<std::size_t>(it - bwd.begin())];
      if (s != kNone && slots[s].has_kernels()) return s;
    }
    return kNone;
  };
  for (const Item& it : items) {
    if (!it.nccl) continue;
    const auto& a = t.gpu[it.gpu];
    const KinetoCollective* c = index.collective_of(a);
    if (!c) {
      ++d.skipped["NCCL kernels without collective arguments (no message size recorded)"];
      continue;
    }
    const std::string kind = sim::lowercase(c->name);
    if (kind != "allreduce" && kind != "all_reduce") {
      ++d.skipped["NCCL " + (c->name.empty() ? std::string("collective") : c->name) +
                  " kernels: not gradient all-reduces"];
      continue;
    }
    // A data-parallel gradient bucket is all-reduced over every rank; one over a subgroup (tensor
    // or pipeline parallelism, a hybrid layout) is something else.
    const int ranks = c->group_ranks.empty() ? c->group_size : count_group_ranks(c->group_ranks);
    if (t.world_size && ranks > 0 && ranks < *t.world_size) {
      const std::string group = describe_group(c->group_name, c->group_ranks);
      ++d.skipped["NCCL all-reduces over " + (group.empty() ? std::string("a process group") : group) +
                  " (" + std::to_string(ranks) + " of " + std::to_string(*t.world_size) +
                  " ranks): not the whole world, so not data-parallel gradient buckets"];
      continue;
    }
    const auto element = kineto_dtype_bytes(c->dtype);
    if (c->in_elements < 0 || !element) {
      ++d.skipped["NCCL all-reduces without \"In msg nelems\" or a known dtype"];
      continue;
    }
    const std::size_t s = anchor_slot(it.anchor);
    if (s == kNone) {
      ++d.skipped["NCCL all-reduces launched before the backward pass"];
      continue;
    }
    const sim::Bytes bytes = sim::Bytes::of(c->in_elements * *element);
    slots[s].op.nccl_bytes += bytes;
    d.buckets.push_back({static_cast<std::uint32_t>(s), bytes, c->dtype, c->group_size, a.duration,
                         c->group_name, c->group_ranks});
    d.dtype = c->dtype;
  }
  for (const std::uint32_t j : content.cpu) {
    const KinetoCpuEvent& e = t.cpu[j];
    if (e.input_elements < 0) continue;
    if (e.input_element_bytes == 0) {
      ++d.skipped["AccumulateGrad ops with an unknown dtype"];
      continue;
    }
    const std::size_t s = anchor_slot(e.start);
    if (s == kNone) continue;
    slots[s].op.accumulate_bytes += sim::Bytes::of(e.input_elements * e.input_element_bytes);
    if (d.dtype.empty()) d.dtype = e.input_element_bytes == 4 ? "Float" : e.input_element_bytes == 2 ? "Half" : "";
  }
  for (const std::uint32_t j : content.cpu) {
    const KinetoCpuEvent& e = t.cpu[j];
    const std::string& name = t.name_of(e.name);
    if (e.kind != KinetoCpuKind::Annotation) continue;
    if (!name.starts_with("Optimizer.step#")) continue;
    const std::string rest = name.substr(15);
    d.optimizer_name = rest.substr(0, rest.find('.'));
  }

  // Keep slots with kernels or gradients: forward ops by start, then own backward ops latest first
  // (the replay runs backward in reverse op order, so their measured order is kept).
  std::vector<std::size_t> order;
  for (std::size_t s = 0; s < slots.size(); ++s) {
    const DraftOp& op = slots[s].op;
    if (slots[s].has_kernels() || op.nccl_bytes.count() > 0 || op.accumulate_bytes.count() > 0)
      order.push_back(s);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (slots[a].own_backward != slots[b].own_backward) return !slots[a].own_backward;
    return slots[a].own_backward ? slots[a].order > slots[b].order : slots[a].order < slots[b].order;
  });
  std::vector<std::size_t> final_index(slots.size(), kNone);
  std::unordered_map<std::string, int> occurrences;
  std::unordered_map<std::int64_t, std::uint32_t> last_on_stream;
  for (const std::size_t s : order) {
    const auto i = static_cast<std::uint32_t>(d.ops.size());
    final_index[s] = i;
    DraftOp op = std::move(slots[s].op);
    op.name = slots[s].base + "#" + std::to_string(occurrences[slots[s].base]++);
    for (const std::int64_t stream : slots[s].streams) {
      if (const auto it = last_on_stream.find(stream); it != last_on_stream.end() && it->second != i)
        op.inputs.push_back(it->second);
    }
    for (const std::int64_t stream : slots[s].streams) last_on_stream[stream] = i;
    std::sort(op.inputs.begin(), op.inputs.end());
    op.inputs.erase(std::unique(op.inputs.begin(), op.inputs.end()), op.inputs.end());
    if (op.inputs.empty() && i > 0) op.inputs.push_back(i - 1);  // first on its streams: program order
    d.ops.push_back(std::move(op));
  }
  for (auto& b : d.buckets) b.op = static_cast<std::uint32_t>(final_index[b.op]);
  return d;
}

}  // namespace hybridsim::workloads::kineto_detail

// The last steps of one Kineto iteration (see import_kineto_iteration.cpp): gradients from the
// NCCL all-reduces and the AccumulateGrad shapes on the op whose backward ran last before them, the
// optimizer's name, and the slots made into ordered draft ops with stream-order dependencies.
#include <algorithm>
#include <unordered_map>

#include "sim/error.h"
#include "sim/text.h"
#include "workloads/import/import_kineto_detail.h"
#include "workloads/import/import_kineto_values.h"

namespace hybridsim::workloads::kineto_detail {

namespace {

// Why an NCCL kernel is not a data-parallel gradient bucket; "" when it is one.
std::string not_a_bucket(const KinetoTrace& t, const KinetoCollective* c) {
  if (!c) return "NCCL kernels without collective arguments (no message size recorded)";
  const std::string kind = sim::lowercase(c->name);
  if (kind != "allreduce" && kind != "all_reduce")
    return "NCCL " + (c->name.empty() ? std::string("collective") : c->name) +
           " kernels: not gradient all-reduces";
  // A data-parallel gradient bucket is all-reduced over every rank; one over a subgroup (tensor
  // or pipeline parallelism, a hybrid layout) is something else.
  const int ranks = c->group_ranks.empty() ? c->group_size : count_group_ranks(c->group_ranks);
  if (t.world_size && ranks > 0 && ranks < *t.world_size) {
    const std::string group = describe_group(c->group_name, c->group_ranks);
    return "NCCL all-reduces over " + (group.empty() ? std::string("a process group") : group) + " (" +
           std::to_string(ranks) + " of " + std::to_string(*t.world_size) +
           " ranks): not the whole world, so not data-parallel gradient buckets";
  }
  if (t.world_size && ranks > *t.world_size)
    return "NCCL all-reduces over " + std::to_string(ranks) + " ranks in a world of " +
           std::to_string(*t.world_size) + " (distributedInfo): the trace contradicts itself";
  if (c->in_elements < 0 || !kineto_dtype_bytes(c->dtype))
    return "NCCL all-reduces without \"In msg nelems\" or a known dtype";
  if (c->in_elements == 0) return "NCCL all-reduces of 0 elements (nothing exchanged)";
  return "";
}

// Adds one tensor's bytes to an iteration's total, which must stay below 2^62 B (each tensor is at
// most kMaxTensorBytes, checked when read; only millions of them could pass it).
void add_to_total(sim::Bytes& total, sim::Bytes bytes, const KinetoTrace& t, const std::string& event,
                  const IterationDraft& d) {
  if (bytes.count() > (std::int64_t{1} << 62) - total.count())
    throw InputError(t.source + ": " + event + ": with it the gradients of " + d.stats.name +
                     " add up to more than 2^62 B; expected the gradients of one iteration of one GPU");
  total += bytes;
}

}  // namespace

std::size_t anchor_slot(const BackwardOps& backward, const DraftSlots& slots, sim::Time when) {
  const auto& ops = backward.ops;
  auto it = std::upper_bound(ops.begin(), ops.end(), when,
                             [](sim::Time x, const TopLevelOp& op) { return x < op.start; });
  while (it != ops.begin()) {
    --it;
    const std::size_t s = backward.owner[static_cast<std::size_t>(it - ops.begin())];
    if (s != kNoSlot && slots[s].has_kernels()) return s;
  }
  return kNoSlot;
}

void attach_nccl_gradients(const KinetoTrace& t, const KinetoIndex& index,
                           const std::vector<WindowActivity>& activities, const BackwardOps& backward,
                           DraftSlots& slots, IterationDraft& d) {
  sim::Bytes total;
  for (const WindowActivity& it : activities) {
    if (!it.nccl) continue;
    const auto& a = t.gpu[it.gpu];
    const KinetoCollective* c = index.collective_of(a);
    if (const std::string why = not_a_bucket(t, c); !why.empty()) {
      ++d.skipped[why];
      continue;
    }
    const std::size_t s = anchor_slot(backward, slots, it.anchor);
    if (s == kNoSlot) {
      ++d.skipped["NCCL all-reduces launched before the backward pass"];
      continue;
    }
    const sim::Bytes bytes = sim::Bytes::of(c->in_elements * *kineto_dtype_bytes(c->dtype));
    add_to_total(total, bytes, t, t.describe(a), d);
    slots[s].op.nccl_bytes += bytes;
    d.buckets.push_back({static_cast<std::uint32_t>(s), bytes, c->dtype, c->group_size, a.duration,
                         c->group_name, c->group_ranks});
    d.dtype = c->dtype;
  }
}

void attach_accumulate_gradients(const KinetoTrace& t, const WindowContent& content,
                                 const BackwardOps& backward, DraftSlots& slots, IterationDraft& d) {
  sim::Bytes total;
  for (const std::uint32_t j : content.cpu) {
    const KinetoCpuEvent& e = t.cpu[j];
    if (e.input_elements < 0) continue;
    if (e.input_element_bytes == 0) {
      ++d.skipped["AccumulateGrad ops with an unknown dtype"];
      continue;
    }
    const std::size_t s = anchor_slot(backward, slots, e.start);
    if (s == kNoSlot) continue;
    const sim::Bytes bytes = sim::Bytes::of(e.input_elements * e.input_element_bytes);
    add_to_total(total, bytes, t, t.describe(e), d);
    slots[s].op.accumulate_bytes += bytes;
    if (d.dtype.empty())
      d.dtype = e.input_element_bytes == 4 ? "Float" : e.input_element_bytes == 2 ? "Half" : "";
  }
}

std::string optimizer_name(const KinetoTrace& t, const WindowContent& content) {
  std::string found;
  for (const std::uint32_t j : content.cpu) {
    const KinetoCpuEvent& e = t.cpu[j];
    const std::string& name = t.name_of(e.name);
    if (e.kind != KinetoCpuKind::Annotation || !name.starts_with(kOptimizerStep)) continue;
    const std::string rest = name.substr(kOptimizerStep.size());
    found = rest.substr(0, rest.find('.'));
  }
  return found;
}

void finish_ops(DraftSlots& slots, IterationDraft& d) {
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
  std::vector<std::size_t> final_index(slots.size(), kNoSlot);
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
}

}  // namespace hybridsim::workloads::kineto_detail

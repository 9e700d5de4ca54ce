// The index over a read Kineto trace: which outermost CPU op launched each GPU activity, and which
// forward op each backward op belongs to.
#include <algorithm>

#include "workloads/import/import_kineto_detail.h"

namespace hybridsim::workloads::kineto_detail {

namespace {

constexpr std::string_view kEvaluateFunction = "autograd::engine::evaluate_function";

}  // namespace

std::string short_kernel_name(const std::string& name) {
  std::string_view s = name;
  if (s.starts_with("void ")) s.remove_prefix(5);
  const auto cut = s.find_first_of("<(");
  if (cut != std::string_view::npos && cut > 0) s = s.substr(0, cut);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s.empty() ? name : std::string(s);
}

KinetoIndex::KinetoIndex(const KinetoTrace& trace) : t_(trace) {
  const std::size_t threads = trace.threads.size();
  top_by_thread_.resize(threads);
  comms_by_thread_.resize(threads);
  std::vector<std::vector<std::uint32_t>> ops(threads);
  for (std::uint32_t i = 0; i < trace.cpu.size(); ++i) {
    const KinetoCpuEvent& e = trace.cpu[i];
    if (e.kind == KinetoCpuKind::Runtime) {
      runtime_by_correlation_.try_emplace(e.correlation, i);
      continue;
    }
    if (e.collective >= 0) comms_by_thread_[e.thread].push_back(i);
    if (e.kind != KinetoCpuKind::Op) continue;
    ops[e.thread].push_back(i);
    if (e.external_id >= 0) op_by_external_id_.try_emplace(e.external_id, i);
  }
  // Outermost ops: sorted by start (longest first on ties), an op starting before the current
  // outermost one ends is nested in it.
  for (std::size_t th = 0; th < threads; ++th) {
    auto& list = ops[th];
    std::sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
      const auto& x = trace.cpu[a];
      const auto& y = trace.cpu[b];
      if (x.start != y.start) return x.start < y.start;
      if (x.duration != y.duration) return x.duration > y.duration;
      return a < b;
    });
    auto& tops = top_by_thread_[th];
    for (std::uint32_t i : list) {
      const auto& e = trace.cpu[i];
      const sim::Time end = e.start + e.duration;
      if (!tops.empty() && e.start < tops.back().end) {
        tops.back().end = max(tops.back().end, end);
        continue;
      }
      tops.push_back({e.start, end, i});
    }
    auto& comms = comms_by_thread_[th];
    std::sort(comms.begin(), comms.end(), [&](std::uint32_t a, std::uint32_t b) {
      return trace.cpu[a].start != trace.cpu[b].start ? trace.cpu[a].start < trace.cpu[b].start : a < b;
    });
  }
  // fwdbwd flows: "s" at the forward op, "f" at the backward op, paired by id.
  std::unordered_map<std::int64_t, std::pair<const KinetoFlowPoint*, const KinetoFlowPoint*>> flows;
  for (const auto& f : trace.fwdbwd) (f.is_start ? flows[f.id].first : flows[f.id].second) = &f;
  for (const auto& [id, ends] : flows) {
    if (!ends.first || !ends.second) continue;
    const auto fwd = top_level_at(ends.first->thread, ends.first->time);
    const auto bwd = top_level_at(ends.second->thread, ends.second->time);
    if (fwd && bwd && *fwd != *bwd) forward_of_.try_emplace(*bwd, *fwd);
  }
}

std::optional<std::uint32_t> KinetoIndex::top_level_at(std::uint32_t thread, sim::Time time) const {
  if (thread >= top_by_thread_.size()) return std::nullopt;
  const auto& tops = top_by_thread_[thread];
  auto it = std::upper_bound(tops.begin(), tops.end(), time,
                             [](sim::Time t, const TopLevelOp& op) { return t < op.start; });
  if (it == tops.begin()) return std::nullopt;
  --it;
  if (time <= it->end) return it->event;
  return std::nullopt;
}

std::vector<TopLevelOp> KinetoIndex::top_levels_in(sim::Time begin, sim::Time end) const {
  std::vector<TopLevelOp> out;
  for (const auto& tops : top_by_thread_) {
    auto it = std::lower_bound(tops.begin(), tops.end(), begin,
                               [](const TopLevelOp& op, sim::Time t) { return op.start < t; });
    for (; it != tops.end() && it->start < end; ++it) out.push_back(*it);
  }
  std::sort(out.begin(), out.end(), [](const TopLevelOp& a, const TopLevelOp& b) {
    return a.start != b.start ? a.start < b.start : a.event < b.event;
  });
  return out;
}

std::optional<Launch> KinetoIndex::launch_of(const KinetoGpuActivity& a) const {
  if (a.correlation < 0) return std::nullopt;
  const auto it = runtime_by_correlation_.find(a.correlation);
  if (it == runtime_by_correlation_.end()) return std::nullopt;
  const KinetoCpuEvent& r = t_.cpu[it->second];
  return Launch{r.thread, r.start, it->second};
}

std::optional<std::uint32_t> KinetoIndex::owner_of(const KinetoGpuActivity& a) const {
  if (const auto launch = launch_of(a)) {
    if (auto top = top_level_at(launch->thread, launch->time)) return top;
  }
  if (a.external_id >= 0) {
    const auto it = op_by_external_id_.find(a.external_id);
    if (it != op_by_external_id_.end()) {
      const KinetoCpuEvent& op = t_.cpu[it->second];
      return top_level_at(op.thread, op.start);
    }
  }
  return std::nullopt;
}

std::optional<std::uint32_t> KinetoIndex::forward_of(std::uint32_t backward_event) const {
  const auto it = forward_of_.find(backward_event);
  if (it == forward_of_.end()) return std::nullopt;
  return it->second;
}

bool KinetoIndex::is_backward(std::uint32_t event) const {
  return forward_of_.contains(event) || t_.name_of(t_.cpu[event].name).starts_with(kEvaluateFunction);
}

const KinetoCollective* KinetoIndex::collective_of(const KinetoGpuActivity& a) const {
  if (a.collective >= 0) return &t_.collectives[a.collective];
  if (const auto launch = launch_of(a); launch && launch->thread < comms_by_thread_.size()) {
    const auto& comms = comms_by_thread_[launch->thread];
    auto it = std::upper_bound(comms.begin(), comms.end(), launch->time,
                               [&](sim::Time t, std::uint32_t e) { return t < t_.cpu[e].start; });
    // The innermost (latest-starting) one that still holds the launch; comms ops nest shallowly.
    for (int looked = 0; it != comms.begin() && looked < 8; ++looked) {
      --it;
      const auto& e = t_.cpu[*it];
      if (launch->time <= e.start + e.duration) return &t_.collectives[e.collective];
    }
  }
  if (a.external_id >= 0) {
    const auto it = op_by_external_id_.find(a.external_id);
    if (it != op_by_external_id_.end() && t_.cpu[it->second].collective >= 0)
      return &t_.collectives[t_.cpu[it->second].collective];
  }
  return nullptr;
}

bool KinetoIndex::is_nccl(const KinetoGpuActivity& a) const {
  if (a.kind != KinetoGpuKind::Kernel) return false;
  if (a.collective >= 0) return true;
  const std::string name = short_kernel_name(t_.name_of(a.name));
  return name.starts_with("nccl") || name.starts_with("ncclDev");
}

}  // namespace hybridsim::workloads::kineto_detail

// GroupInserter and insert_group_collectives (group_collectives.h): a group's streams rebuilt
// (tp_rank_tasks.h), or, where its ranks read an earlier group's lists, that group's result shifted.
#include "workloads/program/group_collectives.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "sim/error.h"
#include "workloads/program/shared_task_lists.h"

namespace hybridsim::workloads {

namespace tp_parts {

GroupInserter::GroupInserter(StepProgram& p, std::span<const TpSync> syncs, CollectiveRole role)
    : p_(p), role_(role) {
  for (const TpSync& s : syncs) {
    at_[{s.op, s.backward, s.after}].push_back(&s);
    overlapped_ = overlapped_ || s.overlap > 0;
  }
}

void GroupInserter::plan_events(const std::vector<sim::TaskList*>& lists) {
  if (!overlapped_) return;
  for (const SharedGroup& g : shared_groups(lists)) {
    const std::uint64_t n = 2 * overlapped_in(*g.lists[0]);
    const std::optional<GroupEvents> e = events_alike(g, p_.event_count, n);
    if (e && p_.event_count + e->added <= UINT32_MAX) {
      p_.event_count = static_cast<std::uint32_t>(p_.event_count + e->added);
      for (std::size_t k = 0; k < g.lists.size(); ++k) events_[g.lists[k]] = {*e, g.event_shift[k], n};
      continue;
    }
    for (sim::TaskList* list : g.lists) {
      if (p_.event_count + n > UINT32_MAX)
        throw InputError("tensor parallel: more events than an index holds");
      events_[list] = {
          {p_.event_count, std::max<std::uint64_t>(n, 1), std::max<std::uint64_t>(n, 1), n}, 0, n};
      apart_.insert(list);
      p_.event_count = static_cast<std::uint32_t>(p_.event_count + n);
    }
  }
}

void GroupInserter::insert(const std::vector<int>& group, const GradientSync& gradients) {
  std::vector<sim::TaskList*> lists;
  std::vector<const void*> key;
  std::vector<const RankEvents*> events;
  bool shared = true;
  for (const int g : group) {
    lists.push_back(&compute_stream_of(p_.gpus[static_cast<std::size_t>(g)]).tasks);
    key.push_back(lists.back()->same_tasks());
    shared = shared && lists.back()->is_shared() && free_(*lists.back()) && !apart_.contains(lists.back());
    const auto e = events_.find(lists.back());
    events.push_back(e == events_.end() ? nullptr : &e->second);
  }
  const auto it = shared ? done_.find(key) : done_.end();
  if (it == done_.end() || !shifts_up(it->second, lists)) {
    Done d{{}, {}, {}, {}, {}};
    for (const sim::TaskList* list : lists) {
      d.event_shift.push_back(list->event_shift());
      if (shared) d.kept.push_back(*list);
    }
    d.specs = insert_replica(p_, at_, group, role_, gradients, events);
    for (const int g : group) {
      sim::GpuProgram& gpu = p_.gpus[static_cast<std::size_t>(g)];
      d.result.push_back(&compute_stream_of(gpu).tasks);
      d.tp.push_back(tp_stream_of(gpu));  // none where its ops overlap nothing
    }
    if (shared) done_.try_emplace(std::move(key), std::move(d));
    return;
  }
  const Done& d = it->second;
  const auto first = static_cast<std::uint32_t>(p_.collectives.size());
  for (const std::uint32_t c : d.specs) {  // the earlier group's, over this group's GPUs
    CollectiveSpec spec = p_.collectives[c];
    spec.members = group;
    p_.collectives.push_back(std::move(spec));
  }
  const std::uint32_t shift = d.specs.empty() ? 0 : first - d.specs.front();
  for (std::size_t r = 0; r < lists.size(); ++r) {
    const std::vector<sim::Task> own = lists[r]->own_collectives();  // not the earlier group's
    const std::uint32_t event_shift = lists[r]->event_shift() - d.event_shift[r];
    *lists[r] = sim::TaskList::shifted_from(*d.result[r], event_shift, shift);
    lists[r]->set_own_collectives(own);
    if (d.tp[r] != nullptr)  // `lists[r]` moves
      p_.gpus[static_cast<std::size_t>(group[r])].streams.push_back(
          {kTpStream, sim::TaskList::shifted_from(*d.tp[r], event_shift, shift)});
  }
}

std::uint64_t GroupInserter::overlapped_in(const sim::TaskList& list) const {
  std::uint64_t n = 0;
  for (const sim::Task& t : list.stored()) {
    if (t.kind != sim::TaskKind::Kernel || t.id >= p_.labels.size()) continue;
    const KernelLabel& label = p_.labels[t.id];
    if (label.phase != Phase::Forward && label.phase != Phase::Backward) continue;
    for (const bool before : {true, false})
      for (const TpSync* sync : syncs_at(at_, label, before)) n += sync->overlap > 0 ? 1 : 0;
  }
  return n;
}

bool GroupInserter::shifts_up(const Done& d, const std::vector<sim::TaskList*>& lists) {
  for (std::size_t r = 0; r < lists.size(); ++r)
    if (lists[r]->event_shift() < d.event_shift[r]) return false;
  return true;
}

}  // namespace tp_parts

void insert_group_collectives(StepProgram& p, std::span<const TpSync> syncs,
                              const std::vector<std::vector<int>>& groups, CollectiveRole role) {
  tp_parts::GroupInserter inserter(p, syncs, role);
  for (const std::vector<int>& group : groups) inserter.insert(group);
}

}  // namespace hybridsim::workloads

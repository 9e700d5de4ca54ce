#include "workloads/program/shared_task_lists.h"

#include <algorithm>
#include <map>

namespace hybridsim::workloads {

std::vector<SharedGroup> shared_groups(const std::vector<sim::TaskList*>& lists) {
  std::vector<SharedGroup> out;
  std::map<const void*, std::size_t> group_of;  // by the tasks read; only looked up, never ordered by
  for (sim::TaskList* list : lists) {
    const auto [it, fresh] = group_of.try_emplace(list->same_tasks(), out.size());
    if (fresh) out.emplace_back();
    out[it->second].lists.push_back(list);
  }
  for (SharedGroup& g : out) {
    std::stable_sort(g.lists.begin(), g.lists.end(), [](const sim::TaskList* a, const sim::TaskList* b) {
      return a->event_shift() < b->event_shift();
    });
    for (const sim::TaskList* list : g.lists) {
      g.event_shift.push_back(list->event_shift() - g.lists[0]->event_shift());
      g.collective_shift.push_back(list->collective_shift() - g.lists[0]->collective_shift());
    }
  }
  return out;
}

std::vector<sim::Task> tasks_keeping_own(const sim::TaskList& list) {
  std::vector<sim::Task> tasks;
  tasks.reserve(list.size());
  for (const sim::Task& t : list.stored())
    tasks.push_back(sim::TaskList::is_own_collective(t) ? t : list.shifted(t));
  return tasks;
}

std::optional<GroupEvents> events_alike(const SharedGroup& g, std::uint64_t first, std::uint64_t n) {
  std::uint64_t gap = std::max<std::uint64_t>(n, 1);
  for (std::size_t k = 1; k < g.event_shift.size(); ++k)
    gap = std::min<std::uint64_t>(gap, g.event_shift[k] - g.event_shift[k - 1]);
  if (gap == 0) return std::nullopt;
  const std::uint64_t span = (g.event_shift.empty() ? 0 : g.event_shift.back()) + gap;
  return GroupEvents{first, gap, span, (n + gap - 1) / gap * span};
}

void edit_alike(const SharedGroup& group, const std::function<void(std::vector<sim::Task>&)>& edit) {
  if (group.lists.size() == 1 && !group.lists[0]->is_shared()) {
    edit(group.lists[0]->mutate());
    return;
  }
  // Read with its shifts, but the tasks that are each list's own collectives kept as stored: the
  // base's would otherwise be written into every list's.
  std::vector<sim::Task> tasks = tasks_keeping_own(*group.lists[0]);
  edit(tasks);
  sim::TaskList edited(std::move(tasks));
  for (std::size_t k = 0; k < group.lists.size(); ++k) {
    const std::vector<sim::Task> own = group.lists[k]->own_collectives();
    *group.lists[k] = sim::TaskList::shifted_from(edited, group.event_shift[k], group.collective_shift[k]);
    group.lists[k]->set_own_collectives(own);
  }
}

}  // namespace hybridsim::workloads

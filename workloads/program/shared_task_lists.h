// Edits of GPUs' task lists that keep them shared (sim::TaskList): GPUs whose streams read one list
// of tasks, each with its own event and collective shifts, get one edited list, still shared, in
// place of a copy each (a pass that copied 64 GPUs' compute streams held 64 programs).
//   for (const SharedGroup& g : shared_groups(lists)) edit_alike(g, [](std::vector<sim::Task>& t) {});
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "sim/gpu_program.h"

namespace hybridsim::workloads {

struct SharedGroup {
  std::vector<sim::TaskList*> lists;       // lists[0] is the base: the smallest event shift
  std::vector<std::uint32_t> event_shift;  // each list's, less the base's
  std::vector<std::uint32_t> collective_shift;
};

// The lists grouped by the tasks they read (a list of its own is a group alone), in the order each
// group's first list comes.
std::vector<SharedGroup> shared_groups(const std::vector<sim::TaskList*>& lists);

// The list's tasks read with its shifts, but those stored as its own collectives
// (sim::TaskList::own_collective) kept as stored, so that an edit of them made a list again
// (sim::TaskList::set_own_collectives, with_own_collectives) still reads each list's own.
std::vector<sim::Task> tasks_keeping_own(const sim::TaskList& list);

// Ids for n events added alike to a group's lists: id(j) as the base reads it, id(j) + event_shift[k]
// in list k, none twice. They go in blocks of `gap` consecutive ids from `first` (the least distance
// between two lists' shifts), each block spanning every list's shift: `added` ids in all, from
// `first`. One list alone: n consecutive ids.
struct GroupEvents {
  std::uint64_t first = 0, gap = 1, span = 1, added = 0;
  std::uint32_t id(std::size_t j) const {
    return static_cast<std::uint32_t>(first + j / gap * span + j % gap);
  }
};
// None where two lists' shifts are alike (their events would be one).
std::optional<GroupEvents> events_alike(const SharedGroup& group, std::uint64_t first, std::uint64_t n);

// Runs `edit` once on the tasks as the group's base reads them (its shifts applied), then makes
// every list of the group read the result, shifted from it as it was from the base. An event the
// edit adds, id e, is e + event_shift[k] in list k: the caller keeps those apart.
void edit_alike(const SharedGroup& group, const std::function<void(std::vector<sim::Task>&)>& edit);

}  // namespace hybridsim::workloads

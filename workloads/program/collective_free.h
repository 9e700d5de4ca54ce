// Whether a GPU's task list holds a collective that a split or an insertion of group collectives
// must rewrite: none but its own (sim::TaskList::own_collective) is "free", and a shared list is
// read once however many GPUs share it (gradient_split.cpp, group_collectives.cpp).
//   CollectiveFree free;  if (free(stream.tasks)) { /* only its own collectives to rewrite */ }
#pragma once
#include <algorithm>
#include <unordered_map>
#include <utility>

#include "sim/gpu_program.h"

namespace hybridsim::workloads {

// Whether a list holds no collective task but its own ones (sim::TaskList::own_collective: ZeRO's
// gathers, each list's, which no shift of its tasks moves), the tasks of shared lists read once however
// many GPUs share them (each kept alive meanwhile, so that no other list's tasks take their address).
class CollectiveFree {
 public:
  bool operator()(const sim::TaskList& list) {
    if (!list.is_shared()) return none(list);
    const auto [it, fresh] = free_.try_emplace(list.same_tasks(), list, false);
    if (fresh) it->second.second = none(list);
    return it->second.second;
  }

 private:
  static bool none(const sim::TaskList& list) {
    return std::ranges::none_of(list.stored(), [](const sim::Task& t) {
      return t.kind == sim::TaskKind::Collective && !sim::TaskList::is_own_collective(t);
    });
  }
  // By the tasks read; only looked up, never ordered by.
  std::unordered_map<const void*, std::pair<sim::TaskList, bool>> free_;
};

}  // namespace hybridsim::workloads

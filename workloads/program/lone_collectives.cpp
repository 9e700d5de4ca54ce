#include "workloads/program/lone_collectives.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/error.h"

namespace hybridsim::workloads {
namespace {

constexpr std::uint32_t kDropped = UINT32_MAX;

bool is_collective(const sim::Task& t) {
  return t.kind == sim::TaskKind::Collective && !sim::TaskList::is_own_collective(t);
}

// A list's own collectives (ZeRO's gathers, one per GPU) pointed at their new indices.
void renumber_own(sim::TaskList& list, const std::vector<std::uint32_t>& to) {
  std::vector<sim::Task> own = list.own_collectives();
  bool changed = false;
  for (sim::Task& t : own) {
    if (sim::TaskList::is_own_collective(t) || t.id >= to.size()) continue;  // not set
    if (to[t.id] == kDropped) throw InternalError("a GPU's own collective has one member");
    changed = changed || to[t.id] != t.id;
    t.id = to[t.id];
  }
  if (changed) list.set_own_collectives(own);
}

// The one amount every collective of a shared list moves down by, where none of them is dropped and
// they all move alike (a TP group's collectives, all above the dropped buckets); none otherwise.
std::optional<std::uint32_t> uniform_move(const sim::TaskList& list, const std::vector<std::uint32_t>& to) {
  std::optional<std::uint32_t> move;
  for (const sim::Task& stored : list.stored()) {
    if (!is_collective(stored)) continue;
    const std::uint32_t id = list.shifted(stored).id;
    if (to[id] == kDropped || (move && *move != id - to[id])) return std::nullopt;
    move = id - to[id];
  }
  return move.value_or(0);
}

void renumber(sim::TaskList& list, const std::vector<std::uint32_t>& to) {
  renumber_own(list, to);
  if (list.is_shared())
    if (const std::optional<std::uint32_t> move = uniform_move(list, to)) {
      // Shifts add modulo 2^32 (sim::TaskList): a shift of −move keeps the list shared.
      if (*move != 0) list = sim::TaskList::shifted_from(list, 0, 0U - *move);
      return;
    }
  std::vector<sim::Task>& tasks = list.mutate();
  std::erase_if(tasks, [&](const sim::Task& t) { return is_collective(t) && to[t.id] == kDropped; });
  for (sim::Task& t : tasks)
    if (is_collective(t)) t.id = to[t.id];
}

}  // namespace

void drop_lone_collectives(StepProgram& p, const std::function<bool(const CollectiveSpec&)>& droppable) {
  const std::size_t n = p.collectives.size();
  std::vector<std::uint32_t> to(n, kDropped), unexchanged(n, kDropped);
  std::vector<CollectiveSpec> kept;
  kept.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const CollectiveSpec& c = p.collectives[i];
    if (c.role == CollectiveRole::GradientAllReduce && c.members.size() == 1 && droppable(c)) {
      unexchanged[i] = static_cast<std::uint32_t>(p.unexchanged_buckets.size());
      p.unexchanged_buckets.push_back(c);
      continue;
    }
    to[i] = static_cast<std::uint32_t>(kept.size());
    kept.push_back(c);
  }
  if (kept.size() == n) return;
  for (sim::GpuProgram& gpu : p.gpus)
    for (sim::StreamProgram& stream : gpu.streams) renumber(stream.tasks, to);
  // A copy's label names its bucket's collective: the kept one's new index, or the bucket that is no
  // longer exchanged (StepProgram::copy_bucket).
  for (KernelLabel& label : p.labels)
    if (is_gradient_copy(label.phase) && label.kernel < n)
      label.kernel = to[label.kernel] != kDropped ? to[label.kernel]
                                                  : StepProgram::kUnexchanged - unexchanged[label.kernel];
  p.collectives = std::move(kept);
}

}  // namespace hybridsim::workloads

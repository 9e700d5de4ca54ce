// One group member's compute stream with its group's collectives inserted (tensor parallelism's
// TP groups, expert parallelism's EP groups; group_collectives.h decides which groups share the
// result): the syncs (workloads/profile/tp_sync.h) by the kernel that issues them, each rank's
// events for its overlapped collectives, and insert_replica, which rebuilds one group's streams.
//   std::vector<std::uint32_t> specs = insert_replica(p, at, group, role, gradients, events);
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "sim/error.h"
#include "workloads/profile/tp_sync.h"
#include "workloads/program/shared_task_lists.h"
#include "workloads/program/step_program_types.h"

namespace hybridsim::workloads::tp_parts {

using SyncKey = std::tuple<std::uint32_t, bool, std::uint32_t>;  // op, backward, kernel

// (A const GPU's: const.)
template <class Gpu>
auto& compute_stream_of(Gpu& gpu) {
  for (auto& s : gpu.streams)
    if (s.name == "compute") return s;
  throw InternalError("tensor parallel: a GPU without a compute stream");
}

inline constexpr const char* kTpStream = "tensor-parallel";

// The GPU's TP stream's tasks (null: it has none).
sim::TaskList* tp_stream_of(sim::GpuProgram& gpu);

// A group's all-reduce of its TpGradients before the optimizer: their bytes summed (zero: none)
// and the last op that holds some.
struct GradientSync {
  sim::Bytes bytes;
  std::uint32_t op = 0;
};

// The syncs issued right after the kernel `label` names, or (`before`) before it, where it is its
// op's first (TpSync::kBeforeFirst).
std::span<const TpSync* const> syncs_at(const std::map<SyncKey, std::vector<const TpSync*>>& at,
                                        const KernelLabel& label, bool before);

// A TP rank's events for its overlapped collectives (TpSync::overlap), two each: the j-th id as its
// compute list reads it. Past the `count` planned for it (GroupInserter::plan_events), an id would be
// another list's: refused.
struct RankEvents {
  GroupEvents ids;
  std::uint32_t shift = 0;  // its list's event shift less its shared group's base's
  std::uint64_t count = 0;
  std::uint32_t id(std::size_t j) const {
    if (j >= count) throw InternalError("tensor parallel: more overlapped collectives than events planned");
    return ids.id(j) + shift;
  }
};

// The TP collectives of replica q: rank 0's stream creates them in the order it issues them; the
// other ranks, whose compute streams are the same kernels, join the same ones in the same order.
// `gradients` goes before the first optimizer kernel (after the data-parallel gradients' wait and
// copies out: step_program_streams.cpp), at the end where there is none. Overlapped collectives
// go on each rank's "tensor-parallel" stream, with events[r] (null: none).
// Returns the collectives created, in that order.
std::vector<std::uint32_t> insert_replica(StepProgram& p,
                                          const std::map<SyncKey, std::vector<const TpSync*>>& at,
                                          const std::vector<int>& group, CollectiveRole role,
                                          const GradientSync& gradients,
                                          const std::vector<const RankEvents*>& events);

}  // namespace hybridsim::workloads::tp_parts

// Inserting collectives of groups of GPUs into their compute streams after the kernels that issue
// them (tensor parallelism's TP groups, expert parallelism's EP groups), a group whose streams read
// an earlier group's lists (sim::TaskList) sharing that group's result, shifted.
//   insert_group_collectives(p, options.syncs, groups, CollectiveRole::ExpertParallel);
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "workloads/profile/tp_sync.h"
#include "workloads/program/collective_free.h"
#include "workloads/program/step_program_types.h"
#include "workloads/program/tp_rank_tasks.h"

namespace hybridsim::workloads {

// Inserts `syncs` into the compute streams of each group (global GPU ranks, in collective-rank
// order, all running the same kernels) after the kernels that issue them: new collectives of `role`
// over the group, created in the order its first GPU issues them, group by group (also for
// expert_parallel.h). Groups whose streams read one list share the result, as TP groups do.
void insert_group_collectives(StepProgram& program, std::span<const TpSync> syncs,
                              const std::vector<std::vector<int>>& groups, CollectiveRole role);

namespace tp_parts {

// TP groups whose ranks' compute streams read the same tasks as an earlier group's, rank by rank,
// each shifted (sim::TaskList) and none with a collective before: such a group's streams after
// insertion are the earlier group's, their events shifted as before and their new collectives by
// where its own begin (created alike, only over its own GPUs). At 16,384 GPUs of a pipeline, 128
// groups are built and 16,256 share theirs, where each GPU's stream was copied and rebuilt before.
class GroupInserter {
 public:
  GroupInserter(StepProgram& p, std::span<const TpSync> syncs, CollectiveRole role);
  // Before any insert: the events of the overlapped collectives (TpSync::overlap) of every compute
  // list in `lists`, laid out alike for lists that read one (events_alike), so that a group whose
  // ranks read an earlier group's lists reads its result shifted; else each list's own.
  void plan_events(const std::vector<sim::TaskList*>& lists);
  void insert(const std::vector<int>& group, const GradientSync& gradients = {});

 private:
  struct Done {
    std::vector<std::uint32_t> specs;        // consecutive
    std::vector<std::uint32_t> event_shift;  // [rank]: its list's before insertion
    std::vector<sim::TaskList*> result;      // [rank]: its list after
    std::vector<sim::TaskList> kept;         // [rank]: its list before, kept (see CollectiveFree)
    std::vector<sim::TaskList*> tp;          // [rank]: its TP stream (null: none)
  };
  // How many overlapped collectives a compute list issues (its kernels are read unshifted).
  std::uint64_t overlapped_in(const sim::TaskList& list) const;
  static bool shifts_up(const Done& d, const std::vector<sim::TaskList*>& lists);
  StepProgram& p_;
  CollectiveRole role_;
  std::map<SyncKey, std::vector<const TpSync*>> at_;
  CollectiveFree free_;
  std::map<std::vector<const void*>, Done> done_;      // by the tasks each rank read; only looked up
  bool overlapped_ = false;                            // any TpSync::overlap
  std::map<const sim::TaskList*, RankEvents> events_;  // by compute list (plan_events); only looked up
  std::set<const sim::TaskList*> apart_;               // lists whose events are their own
};

}  // namespace tp_parts

}  // namespace hybridsim::workloads

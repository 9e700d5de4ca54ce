// Whether one folded try at a step may hold and whether it held (private to analysis/step/): before
// its run, every ring that representatives and members share must be able to fold; after it, every
// such collective must have folded and every member seen what its representative did.
//   if (!shared_rings_may_fold(program, fold, collectives.owned, attempt, progress)) ...;  // attempt.why
//   check_step_fold(fold, program, collectives, executor, attempt);  // attempt.fold_broken
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/step/attempt_collectives.h"
#include "analysis/step/step_attempt.h"
#include "analysis/step/step_fold.h"
#include "sim/collective.h"
#include "sim/stream_executor.h"
#include "sim/work_progress.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// Whether every ring of representatives and members may fold as far as its plan tells: one that
// cannot (two of its edges on one link, as every data-parallel ring on an NVSwitch machine) would
// run in full and the step's fold be given up after the run (check_step_fold), so it is not tried,
// and the step's estimate is every GPU's.
// Told ring by ring (`progress`, null: none): each one's check sorts the links of its routes, a few
// hundredths of a second at 65,536 GPUs, unless it takes the same routes as the ring checked before
// it (a step's buckets over one member set), which then hands it its answer.
bool shared_rings_may_fold(const workloads::StepProgram& program, const StepFoldPlan& fold,
                           const std::vector<std::unique_ptr<sim::Collective>>& collectives, Attempt& attempt,
                           sim::WorkProgress* progress);

// Why a folded step was given up where a collective its representatives and members share ran in
// full (`reason`, the collective's): check_step_fold's words; where the estimate foresaw it and the
// fold was not tried (Attempt::run_refusal), words that say so rather than that it ran.
std::string shared_ran_in_full(std::string_view reason, bool foreseen = false);

// Whether a folded step held: a collective shared by representatives and members must have
// folded (in full, its messages in the members' machines would miss the shadows' traffic there),
// and every member must have seen what its representative did.
void check_step_fold(const StepFoldPlan& fold, const workloads::StepProgram& program,
                     const StepCollectives& collectives, const sim::StreamExecutor& executor,
                     Attempt& attempt);

}  // namespace hybridsim::analysis

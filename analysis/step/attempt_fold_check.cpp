#include "analysis/step/attempt_fold_check.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/step/fold_forecast.h"
#include "sim/fast/folded_ring.h"
#include "sim/fast/unfolded_reason.h"

namespace hybridsim::analysis {

bool shared_rings_may_fold(const workloads::StepProgram& program, const StepFoldPlan& fold,
                           const std::vector<std::unique_ptr<sim::Collective>>& collectives, Attempt& attempt,
                           sim::WorkProgress* progress) {
  const std::size_t n = collectives.size();
  const sim::FoldedRing* previous = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    auto* ring = dynamic_cast<sim::FoldedRing*>(collectives[i].get());
    const bool checked = ring != nullptr && spans_members(fold, program.collectives[i]);
    sim::work_tick(progress, "checking its shared rings' links", i, n, "collectives",
                   checked ? 1 : sim::kWorkTickEvery);
    if (!checked) continue;
    if (previous != nullptr) ring->share_edge_answer(*previous);
    if (const char* why = ring->plan_only_refusal()) {
      attempt.unsuitable = true;
      attempt.why = "a ring they share would run in full: " + std::string(why);
      return false;
    }
    previous = ring;
  }
  sim::work_tick(progress, "checking its shared rings' links", n, n, "collectives");
  return true;
}

std::string shared_ran_in_full(std::string_view reason, bool foreseen) {
  return (foreseen ? "a ring they share would run in full, foreseen before the run (the fold not tried): "
                   : "a ring they share ran in full: ") +
         std::string(reason);
}

void check_step_fold(const StepFoldPlan& fold, const workloads::StepProgram& program,
                     const StepCollectives& collectives, const sim::StreamExecutor& executor,
                     Attempt& attempt) {
  const auto& owned = collectives.owned;
  for (std::size_t i = 0; i < owned.size() && !attempt.fold_broken; ++i) {
    if (owned[i] == nullptr || owned[i]->simulation_path().folded) continue;
    attempt.fold_broken = spans_members(fold, program.collectives[i]);
    if (attempt.fold_broken) {  // the same ring would run in full again
      attempt.unsuitable = true;
      attempt.why = shared_ran_in_full(sim::unfolded_reason(owned[i]->simulation_path()));
    }
  }
  if (!attempt.fold_broken) attempt.fold_broken = !executor.fold_held();
  if (attempt.fold_broken) attempt.signature = executor.fold_signature();
}

}  // namespace hybridsim::analysis

// The try again without embedding, after a folded try with embedded rings was given up (private to
// analysis/step/): its set-up built before the run, or the step refused at once where only every
// GPU and collective in full would remain and that is past the events cap.
//   StagedAttempt plain = set_up_retry_or_refuse(setup, program, observers, fold, attempt, given_up, what);
#pragma once
#include <cstdint>
#include <string_view>

#include "analysis/step/step_attempt.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_runner.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

// Before a fold given up with its rings embedded (`tried`) is tried again without: the retry's
// set-up, built here as the run builds it (`observers`, named `what`) and returned for the run to
// take, or the step refused. Where every GPU and collective in full, the ladder's last way, is past
// the events cap, the retry is set up to ask whether it is foreseen crossed (CrossingForecast, on its
// own set-up); if it is, the every-GPU way is too (its folded collectives are the same rings:
// estimate_staged counts it as that last way), and the step is refused now
// (refuse_only_in_full_remains), before the every-GPU set-up is built: GNMT dp 4,096 x mp 4 on 2,048
// DGX-1 at --max-events 2e9 ran both tries, built the every-GPU set-up (3.8 GB) and was refused for
// the same 3.6e9 events after 25-150 s (tests/bench/MEASUREMENTS.md, escal). Where the last way fits,
// nothing is set up here (null: the run builds its own); where the retry is not foreseen crossed, its
// set-up is returned: built once, where it was let go and built again, GNMT dp 32 x mp 2 on 8 DGX
// H100 at --max-events 676479 ran 5.2% more instructions (tests/bench/MEASUREMENTS.md, nice).
StagedAttempt set_up_retry_or_refuse(const StepSetup& setup, const workloads::StepProgram& program,
                                     const StepObservers& observers, const StepFoldPlan& fold,
                                     const Attempt& tried, std::uint64_t given_up, std::string_view what);

}  // namespace hybridsim::analysis

// simulate_steps_with_trace: a run of several steps (variability.steps) with one of them traced,
// the first, a numbered one or the slowest, and the run's figures combined over all of them as
// simulate_steps does.
#include <string>
#include <vector>

#include "analysis/step/step_series.h"
#include "analysis/trace/step_trace.h"
#include "sim/error.h"

namespace hybridsim::analysis {

StepResult simulate_steps_with_trace(const StepSetup& setup, const std::filesystem::path& path,
                                     const StepTraceOptions& options, StepTraceSummary* summary,
                                     SimulationProgress* progress) {
  const int n = std::max(1, setup.variability.steps);
  if (options.step > n)
    throw InputError("trace step " + std::to_string(options.step) + ": the run has " + std::to_string(n) +
                     (n == 1 ? " step" : " steps") +
                     " (variability.steps); expected first, slowest or 1 to " + std::to_string(n));
  // Alike steps (nothing drawn, step_series.h): the traced step (the slowest is the first of equals,
  // step 1) and one untraced step, which stands for every other (a trace may take another path and
  // count other events), are all that is simulated.
  const bool alike = steps_alike(setup);
  std::vector<StepResult> steps(static_cast<std::size_t>(alike ? 0 : n));
  StepSetup one = setup;
  workloads::StepProgram program = build_program(setup, progress);
  auto untraced = [&](int i) {
    one.step_index = i;
    apply_step_variability(one, program);
    steps[static_cast<std::size_t>(i)] = simulate_program(one, program, {.progress = progress});
  };
  // One step is the slowest: traced once, as the first (simulated twice, its traced run, in full
  // where the untraced one folded within its bound, was refused as taking another time: exit 3).
  const bool slowest = options.step == kSlowestStep && n > 1;
  int traced = options.step == kSlowestStep ? 0 : options.step - 1;
  // Every step first, then the slowest (the first of equals) again.
  if (slowest && !alike) {
    for (int i = 0; i < n; ++i) {
      untraced(i);
      if (steps[static_cast<std::size_t>(i)].step_time > steps[static_cast<std::size_t>(traced)].step_time)
        traced = i;
    }
  }
  StepTraceOptions t = options;
  const std::string which = "step " + std::to_string(traced + 1) + " of " + std::to_string(n) +
                            (options.step == kSlowestStep ? " (the slowest)" : "") +
                            (n > 1 ? "; the run's figures are the mean of all " + std::to_string(n) : "");
  if (n > 1) t.other_data.insert(t.other_data.begin(), {"traced_step", which});
  one.step_index = traced;
  StepResult r = simulate_step_with_trace(one, path, t, summary, progress);
  if (alike) {
    if (summary != nullptr) summary->shows = which + "; " + summary->shows;
    one.step_index = traced == 0 ? 1 : 0;  // an untraced one: each is step 1's program again
    const StepResult other = simulate_program(one, program, {.progress = progress});
    return repeat_step_with(other, n, r, traced, *setup.profile);
  }
  auto& slot = steps[static_cast<std::size_t>(traced)];
  if (slowest && r.step_time != slot.step_time)
    throw InternalError("the slowest step simulated again for its trace took another time");
  slot = std::move(r);
  if (!slowest)
    for (int i = 0; i < n; ++i)
      if (i != traced) untraced(i);
  if (summary != nullptr && n > 1) summary->shows = which + "; " + summary->shows;
  return combine_steps(steps, *setup.profile);
}

}  // namespace hybridsim::analysis

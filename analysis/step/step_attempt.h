// One try at simulating a step (private to analysis/step/): the step's collectives planned and
// built on a network of their own, its GPU streams run, and its figures read off; with the GPUs
// folded onto representatives or not, rings that share links embedded or not. What the try found
// out about the fast path's assumptions is left in an Attempt, for the strategy ladder in
// step_runner.cpp to decide whether the result holds.
//   Attempt attempt;
//   StepResult r = simulate_attempt(setup, program, observers, fold, attempt, "the step");
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/step/step_estimate.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_runner.h"
#include "sim/work_progress.h"

namespace hybridsim::analysis {

// How one attempt went: whether a folded ring was interfered with, and, for a folded step,
// whether its members saw what their representatives did (and their signatures if not).
struct Attempt {
  bool interfered = false;
  bool fold_broken = false;
  bool unsuitable = false;  // splitting the classes cannot help (why says why)
  bool embed_unbounded = false;  // an embedded ring's chunks of unequal size strayed from its bound
  bool embed_off = false;        // the result is simulate_attempt's second try, without embedding
  // An estimate's (estimate_once): an embedded ring has chunks of unequal size, so whether it stays
  // within its bound (and the attempt holds) is known only once it runs.
  bool embed_bounded = false;
  // Events of a try whose result was thrown away before this one (simulate_attempt's first, with
  // embedding, when it was interfered with or strayed from its bound): its queue's and models'.
  std::uint64_t given_up_events = 0;
  // Events of the strategies' attempts given up before this try (step_runner.cpp's ladder): its
  // progress lines count them done.
  std::uint64_t before = 0;
  std::string why;

  std::vector<std::uint64_t> signature;
};

// Whether rings that share links are folded together (sim/fast/ring_embedding.h).
enum class Embed : std::uint8_t { Off, On };

// One try: `fold` empty simulates every GPU; `what` names it in progress lines.
StepResult simulate_once(const StepSetup& setup, const workloads::StepProgram& program,
                         StepObservers observers, const StepFoldPlan& fold, Attempt& attempt, Embed embed,
                         std::string_view what);

// One attempt with rings that share links folded together; if one of them with chunks of unequal
// size strays from its bound (more than 0.1% of its time), or the network was interfered with while
// rings were embedded, again without (its lines say so: `what` then ", again without embedding its
// rings"). A try with embedded rings stops at the first interference: its result would be thrown
// away, and running it to its end cost Llama 2 7B ZeRO-3 on 8 DGX A100 two whole steps of its three
// attempts (now 4.1e6 events before the one that holds, 9.3e7).
StepResult simulate_attempt(const StepSetup& setup, const workloads::StepProgram& program,
                            StepObservers observers, const StepFoldPlan& fold, Attempt& attempt,
                            std::string_view what);

// What simulate_once checks before its event loop, without running it (analysis/step/step_estimate.h);
// nullopt when the attempt would be refused before it starts (a fold a collective cannot take, members
// where their representatives' embedded rings do not repeat) or is expected to be given up after its
// run (a ring they share that will run in full, or a folded collective that another party is expected
// to cross, interfered: analysis/step/fold_forecast.h); `refused` (null: not wanted) then says how, as
// the run's Attempt would (its signature where the fold broke).
// `progress` (null: none) is told of its collectives' set-up and ring embedding, part by part.
std::optional<StepEstimate> estimate_once(const StepSetup& setup, const workloads::StepProgram& program,
                                          const StepFoldPlan& fold, Embed embed,
                                          SimulationProgress* progress = nullptr, Attempt* refused = nullptr);
// check_step_budget's figures: the program's task events, the collectives' state, and the full cost
// of those that cannot fold (step_runner.cpp); under a fold, only the representatives' tasks. Its
// full_events count every GPU and collective, a shadow (null) as the collective `shadow_of` names.
// `progress` (null: none) is told collective by collective (a ring of 65,536 GPUs: milliseconds).
StepEstimate step_budget_cost(const workloads::StepProgram& program,
                              const std::vector<std::unique_ptr<sim::Collective>>& collectives,
                              const sim::StepFold& fold = {},
                              const std::vector<std::uint32_t>& shadow_of = {},
                              sim::WorkProgress* progress = nullptr);

// What a progress line says the step is doing.
std::string attempt_label(const StepSetup& setup, std::string_view how);

}  // namespace hybridsim::analysis

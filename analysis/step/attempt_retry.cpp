#include "analysis/step/attempt_retry.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/step/attempt_estimate.h"
#include "analysis/step/attempt_stage.h"
#include "analysis/step/embedding_forecast.h"
#include "analysis/step/fold_forecast.h"
#include "sim/budget.h"
#include "sim/units.h"

namespace hybridsim::analysis {

namespace {

// The step refused before the try without embedding is set up again for the run (set_up_retry_or_refuse
// below), where every GPU and collective in full, the last way left, is past the events cap (`tried`'s
// counts; `crossed_why`: why that try is foreseen crossed; `given_up`: the events run and thrown away).
// The refusal names the cap the ladder would meet first: the every-GPU way's memory, checked before its
// set-up (step_runner.cpp, every_gpu), where that passes the memory cap, else the events of every
// collective in full; each saying where the other cap is passed too, so that one raise is not
// refused by the other.
[[noreturn]] void refuse_only_in_full_remains(const StepSetup& setup, const Attempt& tried,
                                              const std::string& crossed_why, std::uint64_t given_up) {
  const std::uint64_t cap = setup.limits.max_events;
  const std::string thrown_away =
      given_up > 0 ? " (" + sim::BudgetExceeded::count_text(given_up) + " events run, thrown away)" : "";
  const std::string crossed =
      "its fold was given up with its rings embedded, and without embedding it is foreseen crossed (" +
      crossed_why + ")";
  const std::int64_t memory_cap = setup.limits.max_memory;
  const std::string in_full_events = "about " + sim::BudgetExceeded::count_text(tried.full_events_set_up) +
                                     " events, past the events limit (" +
                                     sim::BudgetExceeded::count_text(cap) + ") too";
  if (memory_cap != 0 && tried.every_gpu_set_up && tried.every_gpu_set_up->memory() > memory_cap) {
    const std::int64_t every_gpu = tried.every_gpu_set_up->memory();
    sim::BudgetExceeded over(sim::BudgetExceeded::Kind::Memory, static_cast<std::uint64_t>(every_gpu),
                             static_cast<std::uint64_t>(memory_cap), tried.every_gpu_set_up->in_flight,
                             crossed + ", so every GPU would be simulated, as counted before that is set up" +
                                 thrown_away + "; every collective in full after it would simulate " +
                                 in_full_events);
    over.upper = static_cast<std::uint64_t>(std::max(every_gpu, tried.full_memory_set_up));
    throw over;
  }
  std::string cause =
      crossed +
      ", as every GPU's way would be: every GPU and collective would be simulated in full, as "
      "counted before that is set up";
  if (memory_cap != 0 && tried.full_memory_set_up > memory_cap)
    cause += " (holding about " + sim::human_bytes(sim::Bytes::of(tried.full_memory_set_up)) +
             " of simulation state, past the memory limit (" + sim::human_bytes(sim::Bytes::of(memory_cap)) +
             ") too)";
  sim::BudgetExceeded over(sim::BudgetExceeded::Kind::Events, tried.full_events_set_up, cap,
                           tried.full_in_flight_set_up, cause + thrown_away);
  over.upper = tried.full_events_set_up;
  throw over;
}

}  // namespace

StagedAttempt set_up_retry_or_refuse(const StepSetup& setup, const workloads::StepProgram& program,
                                     const StepObservers& observers, const StepFoldPlan& fold,
                                     const Attempt& tried, std::uint64_t given_up, std::string_view what) {
  const std::uint64_t cap = setup.limits.max_events;
  if (fold.empty() || cap == 0 || tried.full_events_set_up <= cap) return nullptr;
  Attempt plain;
  CrossingForecast crossing(setup.topology->links().size());
  StagedAttempt stage = set_up_attempt(setup, program, fold, Embed::Off, observers.progress, what, plain,
                                       nullptr, &crossing, observers.plans, observers.network);
  if (!stage) return nullptr;  // refused before it starts: the run's try finds it so again
  const EmbeddingForecast no_embedding(0);
  if (estimate_staged(setup, program, fold, Embed::Off, nullptr, plain, *stage, no_embedding, crossing) ||
      !plain.interfered) {
    stage->counted.reset();  // the run counts its try itself, as where it sets it up
    return stage;
  }
  stage = nullptr;  // let go before the refusal is made
  refuse_only_in_full_remains(setup, tried, plain.why, given_up);
}

}  // namespace hybridsim::analysis

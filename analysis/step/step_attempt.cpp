#include "analysis/step/step_attempt.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "analysis/step/attempt_embedding.h"
#include "analysis/step/attempt_fold_check.h"
#include "analysis/step/attempt_result.h"
#include "analysis/step/attempt_retry.h"
#include "analysis/step/attempt_stage.h"
#include "analysis/step/step_fold_p2p.h"
#include "analysis/step/step_series.h"
#include "sim/error.h"
#include "sim/fast/link_claims.h"
#include "sim/stream_executor.h"

namespace hybridsim::analysis {

namespace {

// The events a run has taken so far: its queue's and its folded collectives' models' (as
// step_result counts them once it is done).
std::uint64_t events_so_far(const sim::EventQueue& queue,
                            const std::vector<std::unique_ptr<sim::Collective>>& collectives) {
  std::uint64_t events = queue.events_processed();
  for (const auto& c : collectives)
    if (c != nullptr) events += c->simulation_path().private_events;
  return events;
}

// The record entries a try takes from the one before it and leaves to the next, on every way out
// of simulate_once (StepObservers::record_storage; null: none handed on).
class RecordHandOn {
 public:
  RecordHandOn(sim::StreamExecutor& executor, sim::ExecutionRecord::Storage* kept)
      : executor_(executor), kept_(kept) {
    if (kept_ != nullptr) executor_.reuse_record_storage(std::move(*kept_));
  }
  RecordHandOn(const RecordHandOn&) = delete;
  RecordHandOn& operator=(const RecordHandOn&) = delete;
  ~RecordHandOn() {
    if (kept_ != nullptr) *kept_ = executor_.take_record_storage();
  }

 private:
  sim::StreamExecutor& executor_;
  sim::ExecutionRecord::Storage* kept_;
};

// An attempt's estimate charged before its event loop. Refused once a fold was given up, the run had
// begun, and the refusal says so (Mixtral 8x7B ep 8 with trees at --max-events 995600 said nothing of
// its first attempt's 289,986 events).
void charge_attempt(const StepEstimate& estimate, sim::SimulationBudget& budget, std::uint64_t max_events,
                    std::uint64_t given_up) {
  try {
    estimate.charge(budget, max_events);
  } catch (sim::BudgetExceeded& over) {
    if (given_up > 0)
      over.cause += std::string(over.cause.empty() ? "" : " and ") + "its earlier attempts were given up (" +
                    sim::BudgetExceeded::count_text(given_up) + " events run, thrown away)";
    throw;
  }
}

// A fallback's charge past twice the cap, mid-run, in the words of the user's cap (`max_events`).
[[noreturn]] void refuse_fallback(sim::BudgetExceeded& over, const StepEstimate& estimate,
                                  std::uint64_t max_events) {
  // Memory: a collective started in full holds more messages than estimated; quote every one's.
  if (over.kind != sim::BudgetExceeded::Kind::Events) {
    over.upper = static_cast<std::uint64_t>(estimate.full_memory);
    throw;  // the exception being handled (refuse_fallback runs inside simulate_once's handler)
  }
  // The cap to raise it to: every GPU and collective in full (the most any way of the step takes,
  // each of its attempts charged against twice the cap), or what this one charged if more.
  sim::BudgetExceeded again(over.kind, over.estimate, max_events, over.in_flight,
                            over.cause + ", past twice the limit its estimate passed");
  again.upper = std::max(estimate.full_events, over.estimate);
  throw again;
}

// What a try's count says of the ladder's later ways, for the ladder (Attempt::every_gpu_set_up and
// after): every GPU in full's memory always; a folded try with embedded rings' every-GPU way and its
// events in full.
void note_later_ways(const StepEstimate& estimate, bool folded_embedded, Attempt& attempt) {
  attempt.full_memory_set_up = estimate.full_memory;
  if (!folded_embedded) return;
  attempt.every_gpu_set_up = estimate.every_gpu;
  attempt.full_events_set_up = estimate.full_events;
  attempt.full_in_flight_set_up = estimate.full_in_flight;
}

}  // namespace

StepResult simulate_once(const StepSetup& setup, const workloads::StepProgram& program,
                         StepObservers observers, const StepFoldPlan& fold, Attempt& attempt, Embed embed,
                         std::string_view what, StagedAttempt staged) {
  if (setup.profile == nullptr || setup.topology == nullptr)
    throw InternalError("a step setup needs a profile and a topology");
  // A set-up told to other progress, or made without this run's plan or network observer, is made
  // again.
  if (staged && (staged->ticks.progress() != observers.progress || staged->plans != observers.plans ||
                 staged->network.observer() != observers.network))
    staged = nullptr;
  // The parts of the set-up that are one call each, told at their start and end (a second each at
  // 65,536 GPUs), and those grown in batches (the network's links, the executor's state): a line
  // when one is due, so none waits past the next.
  if (!staged)
    staged = set_up_attempt(setup, program, fold, embed, observers.progress, what, attempt, nullptr, nullptr,
                            observers.plans, observers.network);
  if (!staged) return {};
  AttemptStage& stage = *staged;
  ProgramBuildTicks parts(observers.progress, std::string(what));
  sim::EventQueue& queue = stage.queue;
  sim::Network& network = stage.network;
  sim::SimulationBudget& budget = stage.budget;
  StepTicks& ticks = stage.ticks;
  ticks.set_what(what);
  StepCollectives& collectives = stage.collectives;
  const sim::EmbedPlan& embedded = stage.embedded;
  const std::vector<sim::EmbeddedRing*>& rings = stage.rings;
  if (embed == Embed::On) set_embedded_to_run(*setup.topology, fold, embedded, network);
  if (!fold.empty() && !shared_rings_may_fold(program, fold, collectives.owned, attempt, &parts)) return {};
  const StepEstimate estimate = stage.counted && embedded.rings == 0
                                    ? *stage.counted
                                    : step_budget_cost(program, collectives.owned, fold.fold, fold.shadow_of,
                                                       &parts, attempt_shape(setup));
  note_later_ways(estimate, !fold.empty() && embed == Embed::On, attempt);
  const std::uint64_t given_up = attempt.before + attempt.given_up_events;
  charge_attempt(estimate, budget, setup.limits.max_events, given_up);

  // Told GPU by GPU: at 65,536 GPUs its check, fold and start take seconds.
  sim::StreamExecutor executor(queue, program.gpus, collectives.pointers, program.event_count, setup.executor,
                               std::move(collectives.loads), &parts);
  const RecordHandOn hand_on(executor, observers.record_storage);
  executor.set_observer(observers.stream);
  if (!fold.empty()) executor.set_fold(fold.fold);
  executor.start();
  try {
    ticks.set_expected(observers.expected_events > 0 ? observers.expected_events : estimate.events(),
                       observers.expected_way);  // the step's (StepObservers), else this attempt's
    ticks.set_given_up(given_up);
    ticks.run();
  } catch (sim::BudgetExceeded& over) {  // a fallback's charge: in the words of the user's cap
    refuse_fallback(over, estimate, setup.limits.max_events);
  }
  if (embedded.rings > 0 && sim::interfered(network)) {  // stopped there (or ran out after it)
    attempt.interfered = true;
    StepResult r;
    r.simulation.embedded = embedded.rings;
    r.events = events_so_far(queue, collectives.owned);
    return r;
  }
  if (!executor.is_done())
    throw InternalError("the step deadlocked:\n" + executor.describe_stuck());
  if (embedded.bounded)
    for (sim::EmbeddedRing* ring : rings)
      if (ring != nullptr) attempt.embed_unbounded = attempt.embed_unbounded || !ring->bound_holds();

  StepResult r = sim::work_part(&parts, "reading off its figures", [&] {
    return step_result(setup, program, fold, executor, collectives, queue.events_processed());
  });
  r.simulation.embedded = embedded.rings;
  r.simulation.most_in_flight = network.most_messages_in_flight();
  r.simulation.model_in_flight = models_in_flight(collectives.owned, *collectives.uniform_trees, embedded);
  attempt.interfered = sim::interfered(network);
  if (!fold.empty()) {
    r.simulation.gpus_simulated = working_representatives(program, fold);
    check_step_fold(fold, program, collectives, executor, attempt);
    if (auto why = fold_p2p_apart_held(program, fold, executor.record()); why && !attempt.fold_broken) {
      attempt.unsuitable = true;  // the same plan would run the same way again
      attempt.why = *why;
    }
  }
  return r;
}

// One attempt with rings that share links folded together; if one of them with chunks of unequal
// size strays from its bound (more than 0.1% of its time), or the network was interfered with,
// again without.
StepResult simulate_attempt(const StepSetup& setup, const workloads::StepProgram& program,
                            StepObservers observers, const StepFoldPlan& fold, Attempt& attempt,
                            std::string_view what, StagedAttempt staged) {
  StepResult r = simulate_once(setup, program, observers, fold, attempt, Embed::On, what, std::move(staged));
  // Rings embedded together assume their models' messages never tie with another route's at a
  // link; a ring whose channels share links in lockstep (a TP group's on an NVSwitch) ties at once.
  // Without embedding such a ring runs plain and claims nothing, so the others may still fold.
  const bool embedding_failed = attempt.interfered && r.simulation.embedded > 0;
  if (!attempt.embed_unbounded && !embedding_failed) return r;
  const std::string again = std::string(what) + ", again without embedding its rings";
  StagedAttempt plain =
      set_up_retry_or_refuse(setup, program, observers, fold, attempt, attempt.before + r.events, again);
  const std::uint64_t before = attempt.before;
  std::optional<StepEstimate::EveryGpu> every_gpu = std::move(attempt.every_gpu_set_up);
  const std::int64_t full_memory = attempt.full_memory_set_up;
  attempt = {};
  attempt.before = before;
  attempt.every_gpu_set_up = std::move(every_gpu);
  attempt.full_memory_set_up = full_memory;
  attempt.embed_off = true;
  attempt.given_up_events = r.events;
  return simulate_once(setup, program, observers, fold, attempt, Embed::Off, again, std::move(plain));
}

AttemptShape attempt_shape(const StepSetup& setup) {
  return {.links = setup.topology->links().size(),
          .loads = setup.executor.contention,
          .bounds = setup.collective.fast_path == sim::FastPath::Bounded};
}

// What a progress line says the step is doing.
std::string attempt_label(const StepSetup& setup, std::string_view how) {
  if (setup.variability.steps <= 1) return "the step, " + std::string(how);
  const std::string steps = std::to_string(setup.variability.steps);
  // Alike steps (step_series.h): the one simulated is the whole run's work, and its time left the
  // run's; "step 1 of 3000" alone read as the first of 3000 to simulate.
  const std::string alike = steps_alike(setup) ? " alike steps, simulated once for all" : "";
  return "step " + std::to_string(setup.step_index + 1) + " of " + steps + alike + ", " + std::string(how);
}

}  // namespace hybridsim::analysis

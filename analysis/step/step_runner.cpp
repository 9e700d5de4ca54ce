#include "analysis/step/step_runner.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <memory>
#include <vector>

#include "analysis/step/ring_fallback.h"
#include "analysis/step/step_attempt.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_fold_p2p.h"
#include "analysis/step/step_footprint.h"
#include "analysis/step/step_in_flight.h"
#include "sim/error.h"
#include "sim/fast/folded_ring.h"
#include "sim/saturating.h"
#include "sim/work_progress.h"
#include "topology/presets.h"
#include "workloads/program/pipeline_program.h"

namespace hybridsim::analysis {

namespace {

// Events a task of a GPU stream takes in the executor, at most: its start and its end.
constexpr std::uint64_t kEventsPerTask = 2;

// What step_budget_cost reads of one collective: its cost in full, its expected events and what the
// every-GPU way holds of it in flight.
struct CollectiveCount {
  sim::SimulationCost cost;
  sim::ExpectedEvents expected;
  std::uint64_t every_gpu_in_flight = 0;
};

// Each simulated collective's count, taken once: a folded step's shadows repeat their
// representatives' (1,251,204 of the 1,261,840 collectives of GPT-3 pp 16 at 16,384 GPUs, 10,636
// simulated), and each full_cost() walks its ranks' routes (a quarter of that step's CPU, asked
// for every shadow, and twice by a ring's expected_events()).
class CollectiveCounts {
 public:
  CollectiveCounts(const std::vector<std::unique_ptr<sim::Collective>>& collectives,
                   const std::vector<std::uint8_t>& no_fallback)
      : collectives_(collectives), no_fallback_(no_fallback), slot_(collectives.size(), kNone) {}

  // `own` must be a collective, not a shadow.
  const CollectiveCount& of(std::size_t own) {
    std::uint32_t& slot = slot_[own];
    if (slot == kNone) {
      slot = static_cast<std::uint32_t>(counts_.size());
      counts_.push_back(count(*collectives_[own], no_fallback_[own] != 0));
    }
    return counts_[slot];
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  static CollectiveCount count(const sim::Collective& c, bool no_fallback) {
    CollectiveCount n{.cost = c.full_cost(), .expected = c.expected_events()};
    // Whatever way it takes, what it holds in flight is at most its own in full: folded, its models'
    // messages (a window of its positions, on their own network, within one event of the step's);
    // embedded, its segments' (two copies of a window of at most half its positions); fallen back
    // as it starts, every message of its own (issue 31: a folded ZeRO-2 step held 11.97 MB where
    // 10.71 MB was checked, its embedded rings' messages and rings that ran in full left out). A
    // ring that cannot fall back holds its models' window at most (ring_fallback.h).
    n.every_gpu_in_flight =
        no_fallback ? std::min(n.cost.in_flight, folding_ring_window(dynamic_cast<const sim::FoldedRing&>(c)))
                    : n.cost.in_flight;
    return n;
  }

  const std::vector<std::unique_ptr<sim::Collective>>& collectives_;
  const std::vector<std::uint8_t>& no_fallback_;
  std::vector<std::uint32_t> slot_;  // per collective: its place in counts_, once counted
  std::vector<CollectiveCount> counts_;
};

}  // namespace

StepEstimate step_budget_cost(const workloads::StepProgram& program,
                              const std::vector<std::unique_ptr<sim::Collective>>& collectives,
                              const sim::StepFold& fold, const std::vector<std::uint32_t>& shadow_of,
                              sim::WorkProgress* progress, const AttemptShape& shape) {
  std::uint64_t tasks = 0, all_tasks = 0;
  for (std::size_t g = 0; g < program.gpus.size(); ++g) {
    std::uint64_t own = 0;
    for (const sim::StreamProgram& stream : program.gpus[g].streams) own += stream.tasks.size();
    all_tasks += own;
    if (fold.representative.empty() || fold.representative[g] == g) tasks += own;
  }
  // What is simulated in full whatever happens: every collective that cannot fold. Those that may
  // fold are checked when they start, if they start in full (sim/budget.h). The messages in flight
  // at once are summed over the collectives that can have them together (step_in_flight.h).
  StepEstimate e;
  e.task_events = kEventsPerTask * tasks;
  std::uint64_t full = 0, every_gpu_events = 0;
  sim::SimulationCost in_full;  // its state and events (in_full_events)
  const std::size_t n = collectives.size();
  // Per collective, in full: of every one (a shadow as its representative), of those this way
  // simulates (not shadows), of those that cannot fold.
  std::vector<std::uint64_t> in_flight(n, 0), simulated_in_flight(n, 0), sure_in_flight(n, 0);
  std::vector<std::uint64_t> every_gpu_in_flight(n, 0);  // of every one, as the every-GPU way runs it
  const InFlightLanes lanes(program);
  // A ring that folds whatever the run's timing holds its models' messages only (ring_fallback.h).
  const std::vector<std::uint8_t> no_fallback = rings_without_fallback(lanes, collectives);
  CollectiveCounts counts(collectives, no_fallback);
  for (std::size_t i = 0; i < n; ++i) {
    // A folded step's shadow is never simulated; in full it costs what the collective it repeats does.
    const std::size_t own = collectives[i] == nullptr && i < shadow_of.size() ? shadow_of[i] : i;
    // Each collective's full cost walks its ranks' routes: 11 rings of 65,536 GPUs take a few tenths
    // of a second, told one by one; millions of transfers between two GPUs, every 64.
    const bool large = collectives[own] != nullptr && collectives[own]->ranks() > sim::kWorkTickEvery;
    sim::work_tick(progress, "counting its collectives' cost", i, n, "collectives",
                   large ? 1 : sim::kWorkTickEvery);
    if (collectives[own] == nullptr) continue;
    const sim::Collective& c = *collectives[own];
    const CollectiveCount& counted = counts.of(own);
    const sim::SimulationCost& cost = counted.cost;
    const sim::ExpectedEvents& expected = counted.expected;
    full += std::max(cost.events, expected.total());  // a collective without a full_cost() runs so
    in_full += sim::SimulationCost{.events = cost.events, .state_bytes = cost.state_bytes};
    in_flight[i] = cost.in_flight;
    every_gpu_in_flight[i] = counted.every_gpu_in_flight;
    // The every-GPU way simulates a shadow as its representative's collective here: its members
    // repeat its representatives, the same plan on routes alike (step_fold.h).
    every_gpu_events += expected.total();
    if (own != i) continue;
    simulated_in_flight[i] = every_gpu_in_flight[i];
    e.state_bytes += cost.state_bytes;
    e.collective_events += expected;
    if (c.may_fold()) continue;
    e.sure.events += cost.events;
    e.sure.messages += cost.messages;
    sure_in_flight[i] = cost.in_flight;
  }
  sim::work_tick(progress, "counting its collectives' cost", n, n, "collectives");
  in_full.in_flight = lanes.most(in_flight);
  e.sure.in_flight = lanes.most(sure_in_flight);
  e.in_flight = lanes.most(simulated_in_flight);
  e.full_events = kEventsPerTask * all_tasks + full;
  e.in_full_events = kEventsPerTask * all_tasks + in_full.events;
  e.full_in_flight = in_full.in_flight;
  // Beside the collectives: the program, and this way's attempt (every GPU's where it is the last way).
  const std::int64_t held = program_bytes(program);
  e.held_bytes = held + attempt_bytes(program, fold, shape);
  const std::int64_t every_gpu = held + attempt_bytes(program, {}, shape);
  e.every_gpu = {.events = sim::add_saturating(kEventsPerTask * all_tasks, every_gpu_events),
                 .state_bytes = in_full.state_bytes,
                 .held_bytes = every_gpu,
                 .in_flight = lanes.most(every_gpu_in_flight)};
  // The most any way holds beside its collectives: a folded step's arrays (its members' checks, its
  // shadows' flags) pass every GPU's where a few GPUs fold onto fewer.
  e.full_memory = sim::add_saturating(in_full.memory(), std::max(e.held_bytes, every_gpu));
  return e;
}

void check_step_budget(sim::SimulationBudget& budget, const workloads::StepProgram& program,
                       const std::vector<std::unique_ptr<sim::Collective>>& collectives,
                       const sim::StepFold& fold) {
  step_budget_cost(program, collectives, fold).charge(budget, budget.limits().max_events);
}

workloads::StepProgram build_program(const StepSetup& setup, SimulationProgress* progress) {
  if (setup.profile == nullptr || setup.topology == nullptr)
    throw InternalError("a step setup needs a profile and a topology");
  const auto gpus = static_cast<int>(setup.topology->gpus().size());
  ProgramBuildTicks ticks(progress, progress ? attempt_label(setup, "building its programs") : "");
  workloads::ProgramBuildProgress* told = progress ? &ticks : nullptr;
  workloads::StepProgram program =
      setup.step.pipeline.pp > 1
          ? workloads::build_pipeline_program(*setup.profile, setup.mapping, gpus, setup.step, told)
          : workloads::build_step_program(*setup.profile, setup.placement, setup.mapping, gpus, setup.step,
                                          told);
  apply_step_variability(setup, program);
  return program;
}

void apply_step_variability(const StepSetup& setup, workloads::StepProgram& program) {
  const workloads::Variability& v = setup.variability;
  if (!v.varies()) return;
  const workloads::Profile& profile = *setup.profile;
  if (v.lengths != workloads::LengthDistribution::Fixed && profile.meta.target_length <= 0)
    throw InputError("sentence lengths " + std::string(workloads::length_distribution_name(v.lengths)) +
                     " need an encoder-decoder profile (metadata target_length > 0); " +
                     profile.meta.network + " has none");
  const workloads::LengthModel lengths = v.lengths == workloads::LengthDistribution::Fixed
                                             ? workloads::LengthModel{}
                                             : workloads::wmt16_en_de_lengths();
  const workloads::StepScales s =
      workloads::step_scales(v, lengths, program.worker_of_gpu, profile.meta.batch_per_gpu, setup.step_index);
  for (std::size_t g = 0; g < program.gpus.size(); ++g) {
    program.gpus[g].compute_scale = workloads::gpu_compute_scale(setup.step, g) * s.compute[g];
    program.gpus[g].sample_scale = s.sample[g];
  }
}

StepResult simulate_step(const StepSetup& setup, StepObservers observers, const StepEstimate* estimated) {
  const workloads::StepProgram program = build_program(setup, observers.progress);
  FirstAttempt first;
  if (estimated != nullptr) first.fold_given_up = estimated->fold_given_up;
  return simulate_program(setup, program, observers, &first);
}

StepResult simulate_on_one_gpu(const workloads::Profile& profile) {
  const topology::Topology one = topology::presets::fully_connected({.gpus = 1});
  StepSetup setup;
  setup.profile = &profile;
  setup.topology = &one;
  setup.placement = workloads::place_all_on_first(profile, 1);
  setup.mapping = workloads::default_mapping(one, 1, 1);
  return simulate_step(setup);
}

namespace {

// The ways to simulate a step, cheapest first (kStrategies): the first that holds gives the
// result, and each one before it leaves why it was refused. What they pass on to the next.
struct Ladder {
  std::vector<std::uint64_t> refine;  // the folded step's class splits so far
  std::string step_fold_reason;       // why the folded step was given up (reported with the result)
  std::string refusal;                // why the strategy just tried did not hold
  std::uint64_t given_up_events = 0;  // of the attempts whose results were thrown away
  // The every-GPU way's first try as the last folded try counted it (Attempt::every_gpu_set_up).
  std::optional<StepEstimate::EveryGpu> every_gpu;
  // Every GPU and collective in full as the last try counted it (Attempt::full_memory_set_up).
  std::int64_t in_full_memory = 0;
};
using Strategy = std::optional<StepResult> (*)(const StepSetup&, const workloads::StepProgram&, StepObservers,
                                               Ladder&, FirstAttempt&);

std::optional<StepResult> refuse(Ladder& ladder, std::string reason) {
  ladder.refusal = std::move(reason);
  return std::nullopt;
}

// The attempt that held, run once more with the fold observer's observer attached (a trace): the
// same plan and embedding give the same events, which is checked.
StepResult observed_again(const StepSetup& setup, const workloads::StepProgram& program,
                          StepObservers observers, const StepFoldPlan& fold, Embed embed, StepResult result) {
  if (observers.fold == nullptr) return result;
  StepObservers only = observers.fold->observe_fold(fold.fold, result);
  if (only.stream == nullptr) return result;
  only.progress = observers.progress;
  only.expected_events = observers.expected_events;
  only.expected_way = observers.expected_way;
  Attempt again;
  StepResult r = simulate_once(setup, program, only, fold, again, embed, attempt_label(setup, "traced"));
  if (r.step_time != result.step_time || r.events != result.events || again.fold_broken || again.interfered)
    throw InternalError("the step run again for its trace gave another result");
  r.simulation = std::move(result.simulation);
  return r;
}

// Alike GPUs simulated once (analysis/step/step_fold.h), retried with the classes split by what
// their members saw, keeping the splits made before.
std::optional<StepResult> folded_gpus(const StepSetup& setup, const workloads::StepProgram& program,
                                      StepObservers observers, Ladder& ladder, FirstAttempt& first) {
  if (setup.collective.fast_path == sim::FastPath::Off) return refuse(ladder, "fast path off");
  // A trace records every GPU's every task and message: the representatives' would stand for many.
  if (observers.stream != nullptr || observers.network != nullptr)
    return refuse(ladder, "a trace records every GPU");
  // Given up after its run as the estimate foresees (FirstAttempt::fold_given_up): not tried.
  if (!first.fold_given_up.empty()) {
    ladder.step_fold_reason = first.fold_given_up;
    return refuse(ladder, first.fold_given_up);
  }
  ProgramBuildTicks ticks(observers.progress, attempt_label(setup, "folded onto representative GPUs"));
  const StepFoldBasis basis =
      first.basis ? std::move(*first.basis) : step_fold_basis(program, *setup.topology, &ticks);
  for (int i = 0; i < kFoldAttempts; ++i) {
    // The first fold as the step's estimate planned and checked it, else planned here.
    const bool estimated = i == 0 && first.fold.has_value();
    StepFoldPlan fold =
        estimated ? std::move(*first.fold) : sim::work_part(&ticks, "choosing its representatives", [&] {
          return plan_step_fold(program, *setup.topology, basis, ladder.refine, &ticks);
        });
    if (fold.empty())
      return refuse(ladder, i == 0 ? "no GPUs alike in program and machine" : ladder.step_fold_reason);
    if (auto why = estimated ? std::nullopt
                             : fold_p2p_shadows_exact(program, *setup.topology, setup.comm, fold, &ticks)) {
      ladder.step_fold_reason = *why;
      return refuse(ladder, *why);
    }
    Attempt attempt;
    attempt.before = ladder.given_up_events;
    StepResult r = simulate_attempt(setup, program, observers, fold, attempt,
                                    attempt_label(setup, "folded onto representative GPUs"),
                                    estimated ? std::move(first.folded) : nullptr);
    ladder.given_up_events += attempt.given_up_events;
    if (attempt.every_gpu_set_up) ladder.every_gpu = attempt.every_gpu_set_up;
    if (attempt.full_memory_set_up > 0) ladder.in_full_memory = attempt.full_memory_set_up;
    const bool held = !attempt.unsuitable && !attempt.interfered && !attempt.fold_broken;
    if (!held) ladder.given_up_events += r.events;
    if (attempt.unsuitable) {
      ladder.step_fold_reason = attempt.why;
      return refuse(ladder, attempt.why);
    }
    if (held)
      return observed_again(setup, program, observers, fold, attempt.embed_off ? Embed::Off : Embed::On,
                            std::move(r));
    // A folded ring's assumption failed: every GPU below. (When members saw other timelines they
    // also joined their next bucket at the wrong times, which can look the same.)
    if (!attempt.fold_broken) return refuse(ladder, "another transfer crossed a folded ring's links");
    refine_classes(ladder.refine, attempt.signature);
    ladder.step_fold_reason = "GPUs alike in program and machine saw different collective timelines";
  }
  return refuse(ladder, ladder.step_fold_reason);
}

// Every GPU simulated, each collective folded where it may (sim/README.md, "Folding").
std::optional<StepResult> every_gpu(const StepSetup& setup, const workloads::StepProgram& program,
                                    StepObservers observers, Ladder& ladder, FirstAttempt& first) {
  // Past the memory cap as a folded try counted it, refused before its set-up, which alone may hold
  // past the cap (GNMT dp 32,768 x mp 2 on 8,192 DGX H100: 13 GB), and would be refused by the same
  // figure once built. Here, wherever a step falls back: a run's first step, a variability run's
  // later ones, a sweep's, study's or plan's step (run with the estimate made before, no first try).
  const std::int64_t cap = setup.limits.max_memory;
  if (cap != 0 && ladder.every_gpu && ladder.every_gpu->memory() > cap)
    throw every_gpu_refusal(ladder.every_gpu->memory(), ladder.every_gpu->in_flight, cap,
                            ladder.step_fold_reason.empty() ? "its run strayed" : ladder.step_fold_reason);
  // Held on the budget shared with other steps before it is built, as counted (StepObservers::shared).
  if (observers.shared != nullptr && ladder.every_gpu) observers.shared->grow_to(ladder.every_gpu->memory());
  Attempt attempt;
  attempt.before = ladder.given_up_events;
  StepResult r = simulate_attempt(setup, program, observers, {}, attempt,
                                  attempt_label(setup, "every GPU simulated"), std::move(first.every_gpu));
  ladder.given_up_events += attempt.given_up_events + (attempt.interfered ? r.events : 0);
  if (attempt.full_memory_set_up > 0) ladder.in_full_memory = attempt.full_memory_set_up;
  // A folded ring assumed nothing else crossed its links; something did, so the fold's timeline
  // is not the step's.
  if (attempt.interfered) return refuse(ladder, "another transfer crossed a folded ring's links");
  r.simulation.step_fold_reason = ladder.step_fold_reason;
  return observed_again(setup, program, observers, {}, attempt.embed_off ? Embed::Off : Embed::On,
                        std::move(r));
}

// Every GPU and collective simulated in full: always holds.
std::optional<StepResult> every_collective_in_full(const StepSetup& setup,
                                                   const workloads::StepProgram& program,
                                                   StepObservers observers, Ladder& ladder, FirstAttempt&) {
  // Held on the budget shared with other steps before it is built, as the last try counted it.
  if (observers.shared != nullptr) observers.shared->grow_to(ladder.in_full_memory);
  StepSetup full = setup;
  full.collective.fast_path = sim::FastPath::Off;
  Attempt attempt;
  attempt.before = ladder.given_up_events;
  StepResult r = simulate_once(full, program, observers, {}, attempt, Embed::Off,
                               attempt_label(setup, "every GPU and collective simulated in full"));
  r.simulation.rerun = true;
  return observed_again(full, program, observers, {}, Embed::Off, std::move(r));
}

struct NamedStrategy {
  std::string_view name;
  Strategy run;
};
constexpr NamedStrategy kStrategies[] = {
    {"folded onto representative GPUs", folded_gpus},
    {"every GPU simulated", every_gpu},
    {"every GPU and collective simulated in full", every_collective_in_full},
};

}  // namespace

StepResult simulate_program(const StepSetup& setup, const workloads::StepProgram& program,
                            StepObservers observers, FirstAttempt* first) {
  Ladder ladder;
  std::vector<std::string> refused;
  FirstAttempt none;
  for (const NamedStrategy& strategy : kStrategies) {
    std::optional<StepResult> r = strategy.run(setup, program, observers, ladder, first ? *first : none);
    if (first != nullptr) {  // the folded try's parts are no later strategy's: freed now
      first->basis.reset();
      first->fold.reset();
      first->folded = nullptr;
      first->fold_given_up.clear();
    }
    if (!r) {
      refused.push_back(std::string(strategy.name) + ": " + ladder.refusal);
      continue;
    }
    r->simulation.strategy = std::string(strategy.name);
    r->simulation.refused = std::move(refused);
    r->simulation.given_up_events = ladder.given_up_events;
    return std::move(*r);
  }
  throw InternalError("every way to simulate the step was refused");  // the last one always holds
}

}  // namespace hybridsim::analysis

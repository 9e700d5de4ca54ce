#include "analysis/step/step_estimate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/step/memory_gate.h"
#include "analysis/step/step_attempt.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_fold_p2p.h"
#include "analysis/step/step_footprint.h"
#include "analysis/step/step_runner.h"
#include "sim/saturating.h"
#include "workloads/profile/profile.h"

namespace hybridsim::analysis {

sim::SimulationLimits run_limits(const sim::SimulationLimits& limits) {
  sim::SimulationLimits out = limits;
  const std::uint64_t most = std::numeric_limits<std::uint64_t>::max() / kFallbackTolerance;
  out.max_events = limits.max_events > most ? 0 : limits.max_events * kFallbackTolerance;
  return out;
}

void StepEstimate::charge(sim::SimulationBudget& budget, std::uint64_t max_events) const {
  if (refused) throw *refused;
  // The expected events include the sure ones (every collective that cannot fold, in full) and may
  // pass the cap where those do not: a step whose folded collectives' models are long is refused
  // here, before its first event, not after its models ran. In a run that passes, each folded
  // collective's models are charged as they start (what this estimate counted for them) and a
  // collective that falls back to full simulation as it starts its full cost, both against twice
  // the cap (sim/budget.h).
  if (max_events != 0 && events() > max_events) {
    sim::BudgetExceeded over(sim::BudgetExceeded::Kind::Events, events(), max_events, in_flight,
                             collective_events.models > 0 ? std::string(kEstimatedCause) : std::string());
    over.upper = full_events;
    throw over;
  }
  budget.record(task_events, state_bytes + held_bytes);
  budget.record_in_flight(in_flight);  // what a fallback is checked against with every other's
  try {
    // The sure events, and every message that may be in flight at once (not only the sure
    // collectives': those that fold or embed hold theirs too, and one may fall back to full).
    budget.check({.events = sure.events, .messages = sure.messages, .in_flight = in_flight});
  } catch (sim::BudgetExceeded& over) {  // the sure part alone: its events are the tasks' and sure's
    over.upper = over.kind == sim::BudgetExceeded::Kind::Events ? full_events
                                                                : static_cast<std::uint64_t>(full_memory);
    throw;
  }
}

std::int64_t StepEstimate::EveryGpu::held() const { return sim::add_saturating(state_bytes, held_bytes); }

std::int64_t StepEstimate::EveryGpu::memory() const {
  return sim::SimulationCost{.state_bytes = held(), .in_flight = in_flight}.memory();
}

void StepEstimate::check(const sim::SimulationLimits& limits) const {
  sim::SimulationBudget budget(limits);
  charge(budget, limits.max_events);
}

sim::BudgetExceeded every_gpu_refusal(std::int64_t bytes, std::uint64_t in_flight, std::int64_t cap,
                                      const std::string& why) {
  sim::BudgetExceeded over(sim::BudgetExceeded::Kind::Memory, static_cast<std::uint64_t>(bytes),
                           static_cast<std::uint64_t>(cap), in_flight,
                           "its fold is given up (" + why +
                               ") and every GPU is simulated, as counted before that is set up");
  over.upper = static_cast<std::uint64_t>(bytes);
  return over;
}

std::uint64_t event_floor(const workloads::Profile& profile) {
  std::uint64_t kernels = 0;
  for (const workloads::Op& op : profile.ops) kernels += op.forward.size() + op.backward.size();
  return 2 * kernels;
}

void check_event_floor(const workloads::Profile& profile, std::uint64_t max_events) {
  if (max_events == 0) return;
  const std::uint64_t floor = event_floor(profile);
  if (floor <= max_events) return;
  const std::uint64_t kernels = floor / 2;
  throw sim::BudgetExceeded(sim::BudgetExceeded::Kind::Events, floor, max_events, 0,
                            "its worker's " + std::to_string(kernels) +
                                " kernels alone are counted, two events each (a floor, before its cluster "
                                "is built)");
}

namespace {

// A folded step whose run ends one of two ways that its plan cannot tell apart: `folded` where an
// embedded ring of unequal chunks stays within its bound, `every_gpu` where it does not. Whether it
// does is decided by the order of ties in the run: GNMT dp 32 x mp 2 on 8 DGX H100 (what-if
// precision-and-gpu points 5 and 7), chunks of 328,000 and 328,001 B in FP32 led by 583 ps of 810 us
// and held; of 360,736 and 360,737 B in AMP by 4.1 us of 825 us (0.5%, over the 0.1% bound), and ran
// every GPU at 2.3 times the folded estimate. Counted at the geometric mean of the two, the estimate is
// within a factor sqrt(every_gpu / folded) of either (the least such factor); its memory is the
// larger way's, a bound on both. No test from the plan tells the two apart: both rings' chunks are one
// byte apart and both leads are many times one byte's transfer, so a bound from the chunk difference
// and the ring's length gives both the same verdict, and either verdict puts one of them outside
// [0.5, 2.05] (point 7 folded 0.439, point 5 every GPU 3.44; tests/bench/MEASUREMENTS.md, est44).
// `every_gpu` as the folded try counts that way (Attempt::every_gpu); its bounds on every way
// (full_events, full_memory) are the fold's own, a shadow counted as its representative.
StepEstimate either_way(const StepEstimate& folded, const StepEstimate::EveryGpu& every_gpu) {
  StepEstimate out = folded;
  const double mean = std::sqrt(double(folded.events()) * double(every_gpu.events));
  const auto events = static_cast<std::uint64_t>(std::llround(mean));
  if (events > out.events()) out.collective_events.queue += events - out.events();
  out.state_bytes = std::max(folded.state_bytes, every_gpu.state_bytes);
  out.held_bytes = std::max(folded.held_bytes, every_gpu.held_bytes);
  out.in_flight = std::max(folded.in_flight, every_gpu.in_flight);
  out.way = "folded or every GPU simulated";
  return out;
}

// Before the ladder's every-GPU way is set up: where what it holds before its first message (its
// collectives' state, its program and its attempt's arrays), counted from a folded try's collectives
// (`counted`, null: none counted), is past the memory cap, that count, refused (StepEstimate::refused:
// its check throws), so that the set-up is never built. Set up first, a GPT-3 pipeline of 4,096 GPUs
// whose fold was given up (CrossingForecast) built 9 GB of collectives before its estimate was
// checked (issue 31, memp). The refusal quotes that way's whole figure.
std::optional<StepEstimate> every_gpu_past_cap(const StepSetup& setup,
                                               const std::optional<StepEstimate>& counted,
                                               const std::string& why) {
  const std::int64_t cap = setup.limits.max_memory;
  if (!counted || cap == 0 || counted->every_gpu.held() <= cap) return std::nullopt;
  StepEstimate out = *counted;
  out.way = "every GPU simulated";
  out.refused = every_gpu_refusal(counted->full_memory, counted->full_in_flight, cap, why);
  return out;
}

// Before the ladder's last way, every GPU and collective simulated in full, is set up: where what it
// holds, counted from the every-GPU try's collectives (`counted`: its full_memory, which was that
// set-up's own figure on each of 26 plan candidates of GNMT that take that way, on 64 to 16,384
// GPUs; tests/bench/MEASUREMENTS.md, plan16k), is past the memory cap, that count, refused
// (StepEstimate::refused), so that the set-up is never built. Set up first, GNMT dp 4,096 x mp 4 on
// 16,384 GPUs built 2 to 2.6 GB inside its estimate whatever --max-sim-memory said (issue 31).
std::optional<StepEstimate> in_full_past_cap(const StepSetup& setup,
                                             const std::optional<StepEstimate>& counted,
                                             const std::string& why) {
  const std::int64_t cap = setup.limits.max_memory;
  if (!counted || cap == 0 || counted->full_memory <= cap) return std::nullopt;
  StepEstimate out = *counted;
  out.way = "every GPU and collective simulated in full";
  sim::BudgetExceeded over(
      sim::BudgetExceeded::Kind::Memory, static_cast<std::uint64_t>(counted->full_memory),
      static_cast<std::uint64_t>(cap), counted->full_in_flight,
      "its fold is given up and every GPU is simulated with every collective in full" +
          (why.empty() ? std::string() : " (" + why + ")") + ", as counted before that is set up");
  over.upper = static_cast<std::uint64_t>(counted->full_memory);
  out.refused = over;
  return out;
}

// The same for the events cap: where every GPU and collective in full, as the every-GPU try counted
// it (`counted`: its in_full_events and full_in_flight, that set-up's own figures on every step of the
// unit, golden and scale tests and the llama3-8b plans), is past it, that way's estimate from the
// count, refused as its check would refuse it, so that its set-up is never built. Built to be refused,
// it was the largest part of the plan's CPU and memory: Llama 3 8B dp 16 tp 4 sp mb 4 on 64 H100,
// 170,176 collective ranks set up a third time for the same 223,268,864 events
// (tests/bench/MEASUREMENTS.md, planreg). Its events, state, held bytes and messages in flight are
// that way's (`full`: the setup it would run; bounded_fold_estimate reads them without checking it);
// its sure part is the every-GPU try's.
std::optional<StepEstimate> in_full_past_events_cap(const StepSetup& full,
                                                    const workloads::StepProgram& program,
                                                    const std::optional<StepEstimate>& counted) {
  const std::uint64_t cap = full.limits.max_events;
  if (!counted || cap == 0 || counted->in_full_events <= cap) return std::nullopt;
  const std::uint64_t events = counted->in_full_events;
  StepEstimate out = *counted;
  out.way = "every GPU and collective simulated in full";
  out.collective_events = {.queue = events - counted->task_events, .models = 0};
  out.full_events = events;
  out.state_bytes = counted->every_gpu.state_bytes;
  out.held_bytes = program_bytes(program) + attempt_bytes(program, {}, attempt_shape(full));
  out.in_flight = counted->full_in_flight;
  out.full_memory = sim::add_saturating(
      sim::SimulationCost{.state_bytes = out.state_bytes, .in_flight = out.in_flight}.memory(),
      out.held_bytes);
  out.every_gpu = {.events = events,
                   .state_bytes = out.state_bytes,
                   .held_bytes = out.held_bytes,
                   .in_flight = out.in_flight};
  sim::BudgetExceeded over(sim::BudgetExceeded::Kind::Events, events, cap, counted->full_in_flight,
                           std::string());
  over.upper = events;
  out.refused = over;
  return out;
}

// The budget shared with steps estimated at once on other threads (estimate_step's `shared` and
// `held`), as the ladder's later set-ups hold on it.
struct SharedBudget {
  MemoryGate* gate = nullptr;
  MemoryGate::Hold* held = nullptr;
};

// What one of the ladder's later set-ups holds on the shared budget while it is built. Where the caller
// holds the step's reservation (`held`: the plan's count of a candidate's program, StepRunOptions::
// memory), that hold grown to the set-up's count (never shrunk: let go with the caller's), as a run's
// later ways grow theirs (StepObservers::shared): held at the reservation alone, two Llama 3 8B
// candidates (dp 16 tp 4 sp mb 4 on 64 H100, 180 MB reserved each) built their every-GPU set-ups of
// about 0.5 GB at once (counted at 0.82 GB each) whatever --max-sim-memory said, and the plan peaked at
// 1.0 GB (tests/bench/MEASUREMENTS.md, planmem). Not counted, the reservation stands. Else a hold of
// its own: `counted`, or the whole budget where no try counted it.
class SetUpHold {
 public:
  SetUpHold(const SharedBudget& shared, std::optional<std::int64_t> counted) {
    if (shared.held != nullptr) {
      if (counted) shared.held->grow_to(*counted);
      return;
    }
    const std::int64_t whole = shared.gate != nullptr ? shared.gate->budget() : 0;
    if (counted || whole > 0) own_.emplace(shared.gate, counted ? *counted : whole);
  }

 private:
  std::optional<MemoryGate::Hold> own_;
};

// The ladder's second way, every GPU simulated, or its third, every collective in full too, where
// another party is expected to cross one of its folded collectives (CrossingForecast).
// `keep` (null: not wanted) receives its every-GPU try's set-up. `counted`: the every-GPU way as a
// folded try counted it (null: not counted), which its set-up holds on `shared` while it is built
// (SetUpHold);
// not counted (no fold tried, or one refused before its collectives were all made: "a collective they
// share is not a ring"), it holds the whole budget, running when nothing else is held: held nothing,
// GNMT dp 4,096 x mp 4 hierarchical on 16,384 GPUs built its 2.15 GB beside its ring twin's 2.1 GB
// on the other thread, and the plan reached 4.98 GB under a 4 GiB cap (tests/bench/MEASUREMENTS.md,
// plan16k3). The in-full set-up holds the every-GPU try's count of it. One at a time: the first is
// let go before the second is asked for, so that a thread waiting on `shared` holds nothing on it (no
// deadlock).
StepEstimate every_gpu_estimate(const StepSetup& setup, const workloads::StepProgram& program,
                                SimulationProgress* progress, StagedAttempt* keep = nullptr,
                                const StepEstimate::EveryGpu* counted = nullptr,
                                const SharedBudget& shared = {}) {
  Attempt tried;
  {
    const SetUpHold hold(shared, counted ? std::optional(counted->memory()) : std::nullopt);
    if (std::optional<StepEstimate> e =
            estimate_once(setup, program, {}, Embed::On, progress, &tried, keep)) {
      e->way = "every GPU simulated";
      return *e;
    }
  }
  if (auto refused = in_full_past_cap(setup, tried.counted, tried.why)) return *refused;
  StepSetup full = setup;
  full.collective.fast_path = sim::FastPath::Off;
  if (auto refused = in_full_past_events_cap(full, program, tried.counted)) return *refused;
  const SetUpHold hold(shared, tried.counted ? std::optional(tried.counted->full_memory) : std::nullopt);
  StepEstimate e = *estimate_once(full, program, {}, Embed::Off, progress);
  e.way = "every GPU and collective simulated in full";
  return e;
}

}  // namespace

StepEstimate estimate_step(const StepSetup& setup, SimulationProgress* progress, MemoryGate* shared,
                           MemoryGate::Hold* held) {
  return estimate_program(setup, build_program(setup, progress), progress, nullptr, shared, held);
}

namespace {

// A fold's count `e` whose rings were embedded within a bound (Attempt::embed_bounded, `refused` its
// try): the fold's where the run keeps it, else either way (the fold's or every GPU's, as the ring's
// ties go). `kept`: the ladder's first try where this is it (its set-up let go before another).
StepEstimate bounded_fold_estimate(const StepSetup& setup, const workloads::StepProgram& program,
                                   const StepFoldPlan& fold, const StepEstimate& e, const Attempt& refused,
                                   SimulationProgress* progress, FirstAttempt* kept,
                                   const SharedBudget& shared) {
  // Where every GPU simulated holds more than the memory cap (as this try counts that way's
  // first try, its rings embedded), the estimate is the fold's, the way the run tries first and
  // keeps unless the ring's ties go the other way; if they do, the run refuses that fallback
  // before setting it up (step_runner.cpp, every_gpu), from the same count. Counted between the
  // two, a step whose fold holds was refused (GNMT dp 32,768 x mp 2 on 8,192 DGX H100, at
  // 8.79 GB where its fold holds in about 3 GB). Asked first: the try without embedding below
  // would change nothing here.
  const std::int64_t cap = setup.limits.max_memory;
  if (cap != 0 && e.every_gpu.memory() > cap) return e;
  // Past its bound, the run tries the fold again without embedding; where that is refused up
  // front (a ring they share cannot fold alone: two of its edges on one NVSwitch link), every GPU.
  // Known from this try's rings, it is not set up (beside the kept try: 0.5 GB at 65,536 GPUs),
  // unless its own count of the every-GPU way is wanted (every_gpu_unembedded).
  Attempt plain;
  const bool known = refused.unembedded_unsuitable && !refused.every_gpu_unembedded;
  if (!known && (estimate_once(setup, program, fold, Embed::Off, nullptr, &plain) || !plain.unsuitable))
    return e;
  // The every-GPU way is counted from the fold's try (with embedding, or without where that
  // way's embedding is expected to be interfered with), not set up: at 65,536 GPUs of GNMT DP on
  // DGX H100 its set-up cost about 8 s of CPU and 0.5 GB (tests/bench/MEASUREMENTS.md, est).
  const std::optional<StepEstimate::EveryGpu>& every_gpu =
      refused.every_gpu_unembedded ? plain.every_gpu : refused.every_gpu;
  if (every_gpu) return either_way(e, *every_gpu);
  // Where it is not (a tree the members share runs uniform), the every-GPU way is set up: the
  // kept set-up is let go first, so that two set-ups (one a whole every-GPU one) are never held
  // at once; the run's folded try sets up again.
  if (kept != nullptr) kept->folded = nullptr;
  const StepEstimate set_up = every_gpu_estimate(setup, program, progress, nullptr, nullptr, shared);
  return either_way(e, {.events = set_up.events(),
                         .state_bytes = set_up.state_bytes,
                         .held_bytes = set_up.held_bytes,
                         .in_flight = set_up.in_flight});
}

}  // namespace

StepEstimate estimate_program(const StepSetup& setup, const workloads::StepProgram& program,
                              SimulationProgress* progress, FirstAttempt* first, MemoryGate* gate,
                              MemoryGate::Hold* held) {
  const SharedBudget shared{.gate = gate, .held = held};
  // The ladder's first way (step_runner.cpp): folded onto representatives when the fast path is on
  // and some GPUs are alike, its classes split as the run splits them where members stand apart from
  // their representatives in an embedded ring; a fold refused before it starts, or expected to be
  // given up after its run (a ring they share that runs in full), leaves every GPU simulated: counted
  // as folded there, the estimate was 0.36-0.49 of the run on five shipped points (what-if fast-path
  // point 0, precision-and-gpu 4, 6 and 7, variability 11; tests/scale/shipped_estimate_test.cpp).
  // What the ladder's first try is, where it is kept: the first fold's, or, where none is tried,
  // every GPU's (as simulate_program takes it).
  FirstAttempt kept;
  FirstAttempt& keep = first != nullptr ? *first : kept;
  // The last folded try's count where it was given up after its set-up, and why; the first's
  // refusal where its run is foreseen giving it up (StepEstimate::fold_given_up).
  std::optional<StepEstimate> counted;
  std::string given_up;
  std::string fold_given_up;
  if (setup.collective.fast_path != sim::FastPath::Off) {
    // Told part by part, as the run's set-up is (16,384 GPUs: seconds each).
    ProgramBuildTicks ticks(progress, progress ? attempt_label(setup, "estimating its events") : "");
    const StepFoldBasis& basis =
        keep.basis.emplace(step_fold_basis(program, *setup.topology, progress ? &ticks : nullptr));
    std::vector<std::uint64_t> refine;
    for (int i = 0; i < kFoldAttempts; ++i) {
      StepFoldPlan fold =
          plan_step_fold(program, *setup.topology, basis, refine, progress ? &ticks : nullptr);
      if (fold.empty()) break;
      // As the ladder: transfers between machines that are not their representatives' exact shadows
      // refuse the fold before its attempt, and every GPU is simulated.
      if (fold_p2p_shadows_exact(program, *setup.topology, setup.comm, fold, progress ? &ticks : nullptr))
        break;
      const bool first_try = i == 0 && first != nullptr;
      if (first_try) keep.fold = fold;
      Attempt refused;
      if (std::optional<StepEstimate> e = estimate_once(setup, program, fold, Embed::On, progress, &refused,
                                                        first_try ? &keep.folded : nullptr)) {
        e->way = "folded onto representative GPUs";
        if (!refused.embed_bounded) return *e;
        return bounded_fold_estimate(setup, program, fold, *e, refused, progress, first_try ? &keep : nullptr,
                                     shared);
      }
      if (first_try) keep.folded = nullptr;  // as above: refined or every GPU next
      // Foreseen given up after its run: the run starts from the every-GPU way counted below.
      if (i == 0) fold_given_up = std::move(refused.run_refusal);
      counted = std::move(refused.counted);
      given_up = refused.why;
      if (!refused.fold_broken || refused.unsuitable) break;
      refine_classes(refine, refused.signature);
    }
  }
  StepEstimate e;
  if (auto refused = every_gpu_past_cap(setup, counted, given_up)) {
    e = *refused;
  } else {
    // The ladder's every-GPU try comes first where it folds nothing, or skips its fold.
    const bool first_try = first != nullptr && (!keep.fold || !fold_given_up.empty());
    e = every_gpu_estimate(setup, program, progress, first_try ? &keep.every_gpu : nullptr,
                           counted ? &counted->every_gpu : nullptr, shared);
  }
  e.fold_given_up = std::move(fold_given_up);
  return e;
}

}  // namespace hybridsim::analysis

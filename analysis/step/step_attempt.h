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
#include "analysis/step/step_footprint.h"
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
  // An estimate's (estimate_once) that foresees the run giving its fold up after running it (a
  // collective they share expected in full as it starts, CrossingForecast::expected_in_full): the
  // refusal the run's check would then give (check_step_fold's words), which the ladder gives instead
  // of trying the fold (FirstAttempt::fold_given_up). Empty: none foreseen so.
  std::string run_refusal;

  std::vector<std::uint64_t> signature;
  // An estimate's (estimate_once) whose folded try is given up after its set-up (a ring they share
  // that will run in full, a folded collective another party is expected to cross): its count, whose
  // every_gpu and full_memory say what the every-GPU way would hold before that is built.
  std::optional<StepEstimate> counted;
  // An estimate's of a folded try with embedded rings: the every-GPU way's embedding is expected to
  // be interfered with (EmbeddingForecast, none of its links tolerated: the links where a fold's
  // models meet other transfers live are the fold's alone), so that way runs its rings unembedded,
  // as the same fold's try without embedding counts it.
  bool every_gpu_unembedded = false;
  // An estimate's of a folded try with embedded rings whose bound may not hold (embed_bounded): the
  // run's try again without embedding would be refused before it runs (unsuitable: a ring they share
  // has two edges on one link, as shared_rings_may_fold finds it), as this try's rings tell it.
  bool unembedded_unsuitable = false;
  // An estimate's of a folded try set up: the ladder's every-GPU way as its count gives it, without
  // setting that way up (StepEstimate::every_gpu: every GPU's tasks, a shadow as its representative;
  // the third way, every collective in full, where another party is expected to cross its folded
  // collectives, CrossingForecast). Counted so, it was the every-GPU set-up's own on every shipped
  // point (tests/bench/MEASUREMENTS.md, est). None where every_gpu_unembedded, or where a tree the
  // members share runs uniform (sim::UniformTrees), which counts otherwise with every GPU simulated.
  std::optional<StepEstimate::EveryGpu> every_gpu;
  // A run's folded try with its rings embedded (simulate_once): the every-GPU way's first try, as
  // its count gives it (StepEstimate::every_gpu), what that try's set-up is charged before its event
  // loop. The ladder refuses that way before setting it up where this passes the memory cap
  // (step_runner.cpp, every_gpu), kept through the try again without embedding (simulate_attempt).
  std::optional<StepEstimate::EveryGpu> every_gpu_set_up;
  // A run's folded try with its rings embedded (simulate_once): every GPU and collective in full as
  // its set-up counts it (StepEstimate::full_events, full_in_flight), the ladder's last way, which
  // simulate_attempt weighs against the cap before it tries the fold again without embedding.
  std::uint64_t full_events_set_up = 0;
  std::uint64_t full_in_flight_set_up = 0;
  // A run's try of any way (simulate_once): what every GPU and collective in full holds as its set-up
  // counts it (StepEstimate::full_memory), which the ladder's last way holds on a shared memory
  // budget before it is built (StepObservers::shared). Kept through the try again without embedding.
  std::int64_t full_memory_set_up = 0;
};

// Whether rings that share links are folded together (sim/fast/ring_embedding.h).
enum class Embed : std::uint8_t { Off, On };

// One try's set-up, before its first event (attempt_stage.h): its queue, network, budget and ticks,
// its collectives planned and built, its rings embedded. What estimate_once counts and simulate_once
// runs, alike; a step's estimate keeps its first attempt's (FirstAttempt, step_runner.h), so that the
// run does not set it up again. Opaque outside the attempt_*.cpp files and step_attempt.cpp.
struct AttemptStage;
struct AttemptStageDeleter {
  void operator()(AttemptStage* stage) const;
};
using StagedAttempt = std::unique_ptr<AttemptStage, AttemptStageDeleter>;

// The ladder's first try (step_runner.cpp) as a step's estimate set it up (estimate_program): the
// step's fold basis, its first fold where its transfers' check passed it (fold_p2p_shadows_exact),
// and the set-up of the try that fold runs first (Embed::On), or, where the ladder folds nothing, of
// its every-GPU try. simulate_program runs them rather than making them again: made twice, they cost
// a GNMT dp 8 run 4% more instructions (tests/bench/MEASUREMENTS.md, rev). Parts absent are made.
struct FirstAttempt {
  std::optional<StepFoldBasis> basis;
  std::optional<StepFoldPlan> fold;
  StagedAttempt folded;     // `fold`'s try's set-up
  StagedAttempt every_gpu;  // the every-GPU try's, where no folded try runs before it
  // Where the step's estimate foresees the first fold given up after its run: the refusal that run
  // would end in (StepEstimate::fold_given_up, which the run's caller hands on: simulate_steps,
  // simulate_step). The ladder's folded way refuses with it at once, and the step starts from the
  // every-GPU way its estimate counts. `fold` is then not run.
  std::string fold_given_up;
};

// One try: `fold` empty simulates every GPU; `what` names it in progress lines. `staged` (null:
// none): this try's set-up as estimate_once made it (the same setup, program, fold and embedding,
// told to the same progress, no plan observer), run instead of being set up again.
StepResult simulate_once(const StepSetup& setup, const workloads::StepProgram& program,
                         StepObservers observers, const StepFoldPlan& fold, Attempt& attempt, Embed embed,
                         std::string_view what, StagedAttempt staged = nullptr);

// One attempt with rings that share links folded together; if one of them with chunks of unequal
// size strays from its bound (more than 0.1% of its time), or the network was interfered with while
// rings were embedded, again without (its lines say so: `what` then ", again without embedding its
// rings"). A try with embedded rings stops at the first interference: its result would be thrown
// away, and running it to its end cost Llama 2 7B ZeRO-3 on 8 DGX A100 two whole steps of its three
// attempts (now 4.1e6 events before the one that holds, 9.3e7).
// `staged` (null: none): its first try's set-up (simulate_once).
StepResult simulate_attempt(const StepSetup& setup, const workloads::StepProgram& program,
                            StepObservers observers, const StepFoldPlan& fold, Attempt& attempt,
                            std::string_view what, StagedAttempt staged = nullptr);

// What simulate_once checks before its event loop, without running it (analysis/step/step_estimate.h);
// nullopt when the attempt would be refused before it starts (a fold a collective cannot take, members
// where their representatives' embedded rings do not repeat) or is expected to be given up after its
// run (a ring they share that will run in full, or a folded collective that another party is expected
// to cross, interfered: analysis/step/fold_forecast.h); `refused` (null: not wanted) then says how, as
// the run's Attempt would (its signature where the fold broke).
// `progress` (null: none) is told of its collectives' set-up and ring embedding, part by part.
// `keep` (null: not wanted) receives its set-up, `embed`'s, wherever it was made in full (its
// collectives built, its rings embedded), whether or not the estimate counts it: simulate_once runs
// it as that try.
std::optional<StepEstimate> estimate_once(const StepSetup& setup, const workloads::StepProgram& program,
                                          const StepFoldPlan& fold, Embed embed,
                                          SimulationProgress* progress = nullptr, Attempt* refused = nullptr,
                                          StagedAttempt* keep = nullptr);
// check_step_budget's figures: the program's task events, the collectives' state, and the full cost
// of those that cannot fold (step_runner.cpp); under a fold, only the representatives' tasks. Its
// full_events count every GPU and collective, a shadow (null) as the collective `shadow_of` names.
// Its held bytes are the program's and an attempt's of `shape` (analysis/step/step_footprint.h).
// `progress` (null: none) is told collective by collective (a ring of 65,536 GPUs: milliseconds).
StepEstimate step_budget_cost(const workloads::StepProgram& program,
                              const std::vector<std::unique_ptr<sim::Collective>>& collectives,
                              const sim::StepFold& fold = {},
                              const std::vector<std::uint32_t>& shadow_of = {},
                              sim::WorkProgress* progress = nullptr, const AttemptShape& shape = {});
// The shape of a step's attempts (its network's links, whether it keeps loads).
AttemptShape attempt_shape(const StepSetup& setup);

// What a progress line says the step is doing.
std::string attempt_label(const StepSetup& setup, std::string_view how);

}  // namespace hybridsim::analysis

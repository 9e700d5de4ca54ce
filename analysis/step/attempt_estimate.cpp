#include "analysis/step/attempt_estimate.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/step/attempt_embedding.h"
#include "analysis/step/attempt_fold_check.h"
#include "analysis/step/attempt_stage.h"
#include "analysis/step/embedding_forecast.h"
#include "analysis/step/fold_forecast.h"
#include "sim/fast/embedded_ring.h"
#include "sim/fast/fold_cost.h"
#include "sim/fast/folded_ring.h"
#include "sim/fast/folded_tree.h"
#include "sim/saturating.h"

namespace hybridsim::analysis {

namespace {

// The reason a collective that may fold gives where it starts in full on links still busy
// (CrossingForecast::expected_in_full foresees that for rings and trees alone).
const char* busy_refusal(const sim::Collective& c) {
  if (const auto* tree = dynamic_cast<const sim::FoldedTree*>(&c)) return tree->busy_refusal();
  return sim::FoldedRing::busy_refusal();
}

// Adds to a count the collectives expected to run in full as they start (`in_full`,
// CrossingForecast::expected_in_full): each one's full cost over what it counted for it as folding,
// in this way's events and in the every-GPU way's, where they run in full alike.
void count_in_full(StepEstimate& e, const std::vector<std::unique_ptr<sim::Collective>>& owned,
                   const std::vector<std::size_t>& in_full) {
  for (const std::size_t i : in_full) {
    const std::uint64_t full = owned[i]->full_cost().events, counted = owned[i]->expected_events().total();
    if (full <= counted) continue;
    e.collective_events.queue = sim::add_saturating(e.collective_events.queue, full - counted);
    e.every_gpu.events = sim::add_saturating(e.every_gpu.events, full - counted);
  }
}

// Whether a ring this try embedded, shared by representatives and members, has two edges on one
// link: without embedding it would be the FoldedRing of the same plan, which shared_rings_may_fold
// refuses (its plan_refusal passed, or it would not have been embedded: FoldedRing::may_embed), and
// the other shared rings are that try's as this one's, which passed. So the try without embedding
// is known unsuitable without setting it up (at 65,536 GPUs of GNMT DP on DGX H100, a second set-up
// of about 0.5 GB beside the kept one: tests/bench/MEASUREMENTS.md, mem).
bool embedded_shared_ring_shares_edges(const workloads::StepProgram& program, const StepFoldPlan& fold,
                                       const std::vector<sim::EmbeddedRing*>& rings) {
  for (std::size_t i = 0; i < rings.size(); ++i)
    if (rings[i] != nullptr && spans_members(fold, program.collectives[i]) &&
        sim::ring_edges_share_a_link(rings[i]->ring()))
      return true;
  return false;
}

}  // namespace

std::optional<StepEstimate> estimate_staged(const StepSetup& setup, const workloads::StepProgram& program,
                                            const StepFoldPlan& fold, Embed embed,
                                            SimulationProgress* progress, Attempt& attempt,
                                            AttemptStage& stage, const EmbeddingForecast& forecast,
                                            const CrossingForecast& crossing) {
  const std::vector<std::unique_ptr<sim::Collective>>& owned = stage.collectives.owned;
  if (embed == Embed::On) {
    const std::vector<sim::LinkId> tolerated = embedding_tolerated(setup, fold, stage);
    attempt.every_gpu_unembedded = !tolerated.empty() && forecast.expected_crossed(owned, stage.embedded, {});
  }
  sim::WorkProgress* told = progress ? &stage.parts : nullptr;
  // The every-GPU way from this try's count (Attempt::every_gpu): where another party is expected to
  // cross its collectives (`crossed`), the ladder's third way, every collective in full.
  const auto count_every_gpu = [&](const StepEstimate& count, bool crossed) {
    if (fold.empty() || attempt.every_gpu_unembedded || stage.collectives.uniform) return;
    attempt.every_gpu = count.every_gpu;
    if (!crossed) return;
    attempt.every_gpu->events = count.full_events;
    attempt.every_gpu->in_flight = count.full_in_flight;
  };
  const std::vector<std::size_t> in_full = crossing.expected_in_full(owned, program);
  // Where the fold is given up below, its count says what the every-GPU way would hold and take
  // (estimate_program checks it before that way is set up, and counts that way from it); where the
  // every-GPU try is, what the ladder's last way, every collective in full, would hold (its
  // full_memory, checked before that way is set up: step_estimate.cpp).
  const auto count = [&] {
    attempt.counted =
        step_budget_cost(program, owned, fold.fold, fold.shadow_of, nullptr, attempt_shape(setup));
    count_in_full(*attempt.counted, owned, in_full);
    count_every_gpu(*attempt.counted, crossing.expected_crossed(owned).has_value());
  };
  if (!fold.empty() && !shared_rings_may_fold(program, fold, owned, attempt, told)) {
    count();
    return {};
  }
  // A ring they share that will run in full: the run gives the fold up after it (check_step_fold).
  if (auto why = folded_ring_expected_in_full(program, fold, owned)) {
    attempt.unsuitable = true;
    attempt.why = std::move(*why);
    count();
    return {};
  }
  // A folded collective that another party is expected to cross: the run gives the attempt up
  // (interfered) and takes the ladder's next way.
  if (auto why = crossing.expected_crossed(owned)) {
    attempt.interfered = true;
    attempt.why = std::move(*why);
    count();
    return {};
  }
  // One they share that runs in full as it starts, its links claimed or busy: the run gives the fold
  // up after it (check_step_fold), as above.
  for (const std::size_t i : in_full)
    if (!fold.empty() && spans_members(fold, program.collectives[i])) {
      attempt.unsuitable = true;
      attempt.why = "a collective they share would run in full: its links are still busy";
      attempt.run_refusal = shared_ran_in_full(busy_refusal(*owned[i]), true);
      count();
      return {};
    }
  attempt.embed_bounded = stage.embedded.bounded;
  if (attempt.embed_bounded && !fold.empty())
    attempt.unembedded_unsuitable = embedded_shared_ring_shares_edges(program, fold, stage.rings);
  StepEstimate e = step_budget_cost(program, owned, fold.fold, fold.shadow_of, told, attempt_shape(setup));
  count_in_full(e, owned, in_full);
  count_every_gpu(e, false);
  stage.counted = e;
  return e;
}

std::optional<StepEstimate> estimate_once(const StepSetup& setup, const workloads::StepProgram& program,
                                          const StepFoldPlan& fold, Embed embed, SimulationProgress* progress,
                                          Attempt* refused, StagedAttempt* keep) {
  const std::string what = progress ? attempt_label(setup, "estimating its events") : "";
  Attempt own;
  Attempt& attempt = refused != nullptr ? *refused : own;
  const std::size_t links = setup.topology->links().size();
  EmbeddingForecast forecast(embed == Embed::On ? links : 0);
  CrossingForecast crossing(links);
  // As simulate_once, which runs it where it is kept: embedded rings cost what they cost there, and
  // members standing where their representatives' embedded rings do not repeat break the fold
  // before it runs.
  StagedAttempt stage = set_up_attempt(setup, program, fold, embed, progress, what, attempt,
                                       embed == Embed::On ? &forecast : nullptr, &crossing);
  if (!stage) return {};
  // Its embedding expected to be interfered with: the run would throw such an attempt away
  // (simulate_attempt) and run without embedding; its first try stops at the interference, and is not
  // counted. Its set-up is let go before the try without embedding is made, unless kept for the run:
  // held beside it, GNMT dp 2,048 x mp 8 on 16,384 GPUs held two every-GPU set-ups (1.08 and 1.05 GB)
  // at once where its shared budget counted one (tests/bench/MEASUREMENTS.md, plan16k3).
  if (embed == Embed::On && forecast.expected_to_fail(program, stage->collectives.owned, stage->embedded,
                                                      embedding_tolerated(setup, fold, *stage))) {
    if (keep != nullptr) *keep = std::move(stage);
    stage = nullptr;
    return estimate_once(setup, program, fold, Embed::Off, progress, &attempt);
  }
  std::optional<StepEstimate> e =
      estimate_staged(setup, program, fold, embed, progress, attempt, *stage, forecast, crossing);
  if (keep != nullptr) *keep = std::move(stage);
  return e;
}

}  // namespace hybridsim::analysis

// Whether a step's embedded rings (sim/fast/ring_embedding.h) are expected to be interfered with as
// the step runs, so that the run throws their attempt away and simulates the step again without them
// (simulate_attempt, analysis/step/step_attempt.cpp): what a step's estimate must foresee to count
// the way the step ends up running (estimate_once). Private to analysis/step/.
//   EmbeddingForecast forecast(network.links().size());
//   forecast.note_plan(plan);                 // each collective's plan, as it is made
//   ... embed_coupled_rings(owned, network) ...
//   if (forecast.expected_to_fail(program, owned, embedded, tolerated)) { /* estimate without */ }
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/collective.h"
#include "sim/fast/ring_embedding.h"
#include "sim/link.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

class EmbeddingForecast {
 public:
  explicit EmbeddingForecast(std::size_t links) : crossed_(links, 0) {}

  // Before `plan` is made into its collective: the links a tree, an all-to-all or a chain of phases
  // crosses (their collectives do not say which, and never embed). A plan of one ring is read off
  // its collective once the rings are embedded.
  void note_plan(const workloads::CollectivePlan& plan);

  // Whether the embedding in `embedded` of the rings among `owned` (the step's collectives, a folded
  // step's shadows null) is expected to be interfered with, either way the run finds out:
  //  - a tie (embedding_expected_to_tie): rings of two streams of one GPU, one of them with two
  //    edges on one link, run at once and their messages meet there at the same instant (ZeRO-3's
  //    gathers beside its reduce-scatters on an NVSwitch machine); not where the GPU's events order
  //    one stream's rings after the other's (ZeRO-2's gathers, after the optimizer), looked at ring
  //    by ring (sequence parallelism's tensor-parallel stream: each of its rings between two of the
  //    compute stream's);
  //  - another party: a collective that is not embedded (a pipeline's transfers between stages, a
  //    ring that folds alone or runs in full, a tree, an all-to-all) crosses a link an embedded
  //    group claims from the step's start until its last ring is done, other than `tolerated`
  //    (sorted: a folded step's links that its models meet live, share_representative_links).
  //    Llama 3 8B dp 32 x pp 2 under ZeRO-3 on 8 DGX H100: its stages' transfers cross the NICs of
  //    the gathers' rings (plan --model llama3-8b --gpus 64 --gpu h100 ran three attempts where its
  //    estimate foresaw the first).
  // When a collective crossing a claimed link runs is not looked at: one that runs only after the
  // group's last ring is done meets no claim, and is taken to interfere all the same.
  bool expected_to_fail(const workloads::StepProgram& program,
                        const std::vector<std::unique_ptr<sim::Collective>>& owned,
                        const sim::EmbedPlan& embedded, const std::vector<sim::LinkId>& tolerated) const;
  // Its second part alone: another party crossing a claimed link other than `tolerated` (where the
  // first was asked already, with more links tolerated: the tie is not looked for again).
  bool expected_crossed(const std::vector<std::unique_ptr<sim::Collective>>& owned,
                        const sim::EmbedPlan& embedded, const std::vector<sim::LinkId>& tolerated) const;

 private:
  std::vector<std::uint8_t> crossed_;  // per link: crossed by a noted plan
};

// Rings embedded from two streams of one GPU, one of them with two edges on one link: see
// EmbeddingForecast::expected_to_fail.
bool embedding_expected_to_tie(const workloads::StepProgram& program,
                               const std::vector<std::unique_ptr<sim::Collective>>& owned);

}  // namespace hybridsim::analysis

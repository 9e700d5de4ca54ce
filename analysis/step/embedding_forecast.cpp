#include "analysis/step/embedding_forecast.h"

#include <algorithm>

#include "sim/fast/embedded_ring.h"
#include "sim/fast/fold_cost.h"
#include "sim/fast/folded_ring.h"
#include "sim/ring_collective.h"

namespace hybridsim::analysis {

namespace {

// The plain ring a collective runs, if it runs one alone: a ring in full, or one that folds alone.
const sim::RingCollective* lone_ring(const sim::Collective* c) {
  if (const auto* ring = dynamic_cast<const sim::RingCollective*>(c)) return ring;
  if (const auto* folded = dynamic_cast<const sim::FoldedRing*>(c)) return &folded->ring();
  return nullptr;
}

}  // namespace

void EmbeddingForecast::note_plan(const workloads::CollectivePlan& plan) {
  const auto mark = [this](const std::vector<sim::LinkId>& route) {
    for (const sim::LinkId l : route) crossed_[l] = 1;
  };
  // As workloads::make_collective makes them: an all-to-all, a tree, one ring, a chain.
  if (plan.pairs != nullptr) {
    for (const auto& from : *plan.pairs)
      for (const auto& route : from) mark(route);
    return;
  }
  if (plan.algorithm == workloads::AllReduceAlgorithm::Tree) {
    if (plan.trees == nullptr) return;
    for (const sim::TreeChannel& tree : *plan.trees) {
      for (const auto& route : tree.up) mark(route);
      for (const auto& routes : tree.down)
        for (const auto& route : routes) mark(route);
    }
    return;
  }
  if (plan.phases.size() == 1 && plan.phases[0].size() == 1) return;
  for (const auto& phase : plan.phases)
    for (const sim::CollectiveChain::Part& part : phase)
      for (const sim::RingChannel& channel : part.channels)
        for (const auto& route : channel.routes) mark(route);
}

bool EmbeddingForecast::expected_to_fail(const workloads::StepProgram& program,
                                         const std::vector<std::unique_ptr<sim::Collective>>& owned,
                                         const sim::EmbedPlan& embedded,
                                         const std::vector<sim::LinkId>& tolerated) const {
  if (embedded.rings == 0) return false;
  if (embedding_expected_to_tie(program, owned)) return true;
  std::vector<std::uint8_t> claimed(crossed_.size(), 0);
  for (const auto& group : embedded.groups)
    for (const sim::LinkId l : group->links())
      if (!std::binary_search(tolerated.begin(), tolerated.end(), l)) claimed[l] = 1;
  for (std::size_t l = 0; l < claimed.size(); ++l)
    if (claimed[l] != 0 && crossed_[l] != 0) return true;
  for (const auto& c : owned) {
    const sim::RingCollective* ring = lone_ring(c.get());
    if (ring == nullptr) continue;
    for (std::uint32_t ch = 0; ch < ring->channel_count(); ++ch)
      for (const auto& route : ring->channel_plan(ch).routes)
        for (const sim::LinkId l : route)
          if (claimed[l] != 0) return true;
  }
  return false;
}

// Rings embedded from two streams of one GPU (ZeRO-3's parameter all-gathers beside its gradient
// reduce-scatters) run at the same time, and one with two edges on one link (on an NVSwitch machine)
// then has its messages tie with the other's there at once. Llama 2 7B ZeRO-3 on 4 and 8 DGX A100
// (tests/scale/step_estimate_test.cpp) runs so; GPT-3's tensor-parallel rings, on one stream, stay
// embedded. The first GPU in such a ring stands for all.
bool embedding_expected_to_tie(const workloads::StepProgram& program,
                               const std::vector<std::unique_ptr<sim::Collective>>& owned) {
  std::vector<std::uint8_t> tying(owned.size(), 0);
  bool any = false;
  for (std::size_t i = 0; i < owned.size(); ++i) {
    const auto* ring = dynamic_cast<const sim::EmbeddedRing*>(owned[i].get());
    tying[i] = ring != nullptr && sim::ring_edges_share_a_link(ring->ring()) ? 1 : 0;
    any = any || tying[i] != 0;
  }
  if (!any) return false;
  for (const sim::GpuProgram& gpu : program.gpus) {
    std::size_t streams = 0, embedded = 0;
    for (const sim::StreamProgram& stream : gpu.streams) {
      bool has_tying = false, has_embedded = false;
      for (const sim::Task t : stream.tasks) {
        if (t.kind != sim::TaskKind::Collective || t.id >= owned.size()) continue;
        has_tying = has_tying || tying[t.id] != 0;
        has_embedded = has_embedded || dynamic_cast<const sim::EmbeddedRing*>(owned[t.id].get()) != nullptr;
      }
      streams += has_tying ? 1 : 0;
      embedded += has_embedded ? 1 : 0;
    }
    if (streams > 0) return embedded >= 2;
  }
  return false;
}

}  // namespace hybridsim::analysis

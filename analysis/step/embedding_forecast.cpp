#include "analysis/step/embedding_forecast.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "analysis/step/fold_forecast.h"
#include "sim/fast/embedded_ring.h"
#include "sim/fast/fold_cost.h"
#include "sim/fast/folded_ring.h"
#include "sim/ring_collective.h"

namespace hybridsim::analysis {

void EmbeddingForecast::note_plan(const workloads::CollectivePlan& plan) {
  // A plan of one ring is read off its collective once the rings are embedded.
  if (plan.pairs == nullptr && plan.algorithm != workloads::AllReduceAlgorithm::Tree &&
      plan.phases.size() == 1 && plan.phases[0].size() == 1)
    return;
  for_each_route(plan, [this](const std::vector<sim::LinkId>& route) {
    for (const sim::LinkId l : route) crossed_[l] = 1;
  });
}

bool EmbeddingForecast::expected_to_fail(const workloads::StepProgram& program,
                                         const std::vector<std::unique_ptr<sim::Collective>>& owned,
                                         const sim::EmbedPlan& embedded,
                                         const std::vector<sim::LinkId>& tolerated) const {
  if (embedded.rings == 0) return false;
  return embedding_expected_to_tie(program, owned) || expected_crossed(owned, embedded, tolerated);
}

bool EmbeddingForecast::expected_crossed(const std::vector<std::unique_ptr<sim::Collective>>& owned,
                                         const sim::EmbedPlan& embedded,
                                         const std::vector<sim::LinkId>& tolerated) const {
  if (embedded.rings == 0) return false;
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

namespace {

// Whether stream x's tasks up to `last_x` all end before stream y reaches `first_y`, by the events
// the GPU's streams record and wait for (sim/gpu_program.h): a vector clock per stream, each wait
// taking the clock of its record. An event recorded on another GPU orders nothing here.
bool ends_before(const sim::GpuProgram& gpu, std::size_t x, std::size_t last_x, std::size_t y,
                 std::size_t first_y) {
  const std::size_t n = gpu.streams.size();
  std::unordered_map<std::uint32_t, std::vector<std::size_t>> recorded;  // event → clock at its record
  // Records may come later in the streams' order than their waits: again until nothing changes,
  // at most once per stream a chain of them crosses.
  for (std::size_t pass = 0; pass <= n; ++pass) {
    bool changed = false;
    for (std::size_t s = 0; s < n; ++s) {
      std::vector<std::size_t> clock(n, 0);  // per stream: how many of its tasks have ended
      const sim::TaskList& tasks = gpu.streams[s].tasks;
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        const sim::Task t = tasks[i];
        clock[s] = i;
        if (s == y && i == first_y) {
          if (clock[x] > last_x) return true;
          break;
        }
        if (t.kind == sim::TaskKind::Wait)
          if (const auto it = recorded.find(t.id); it != recorded.end())
            for (std::size_t k = 0; k < n; ++k) clock[k] = std::max(clock[k], it->second[k]);
        if (t.kind == sim::TaskKind::Record) {
          clock[s] = i + 1;
          auto [it, fresh] = recorded.try_emplace(t.id, clock);
          if (!fresh && it->second != clock) {
            for (std::size_t k = 0; k < n; ++k) it->second[k] = std::max(it->second[k], clock[k]);
            changed = true;
          }
          changed = changed || fresh;
        }
      }
    }
    if (!changed) break;
  }
  return false;
}

}  // namespace

// Rings embedded from two streams of one GPU (ZeRO-3's parameter all-gathers beside its gradient
// reduce-scatters) run at the same time, and one with two edges on one link (on an NVSwitch machine)
// then has its messages tie with the other's there at once. Llama 2 7B ZeRO-3 on 4 and 8 DGX A100
// (tests/scale/step_estimate_test.cpp) runs so; GPT-3's tensor-parallel rings, on one stream, stay
// embedded, and so do ZeRO-2's gathers of updated parameters, which wait for the optimizer and so for
// every reduce-scatter (the streams' events order them). The first GPU in such a ring stands for all.
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
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  for (const sim::GpuProgram& gpu : program.gpus) {
    // Per stream: whether it runs a tying ring, and its first and last embedded ring.
    const std::size_t n = gpu.streams.size();
    std::vector<std::uint8_t> has_tying(n, 0);
    std::vector<std::size_t> first(n, kNone), last(n, kNone);
    for (std::size_t s = 0; s < n; ++s) {
      const sim::TaskList& tasks = gpu.streams[s].tasks;
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        const sim::Task t = tasks[i];
        if (t.kind != sim::TaskKind::Collective || t.id >= owned.size()) continue;
        has_tying[s] = has_tying[s] != 0 || tying[t.id] != 0 ? 1 : 0;
        if (dynamic_cast<const sim::EmbeddedRing*>(owned[t.id].get()) == nullptr) continue;
        if (first[s] == kNone) first[s] = i;
        last[s] = i;
      }
    }
    if (std::find(has_tying.begin(), has_tying.end(), 1) == has_tying.end()) continue;
    // A tie needs a tying stream's rings and another stream's to run at once.
    for (std::size_t x = 0; x < n; ++x)
      for (std::size_t y = 0; y < n; ++y)
        if (x != y && has_tying[x] != 0 && first[x] != kNone && first[y] != kNone &&
            !ends_before(gpu, x, last[x], y, first[y]) && !ends_before(gpu, y, last[y], x, first[x]))
          return true;
    return false;
  }
  return false;
}

}  // namespace hybridsim::analysis

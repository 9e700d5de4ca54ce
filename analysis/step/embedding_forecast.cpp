#include "analysis/step/embedding_forecast.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

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

// Per stream of `gpu`, per task: how many tasks of each stream have ended before it starts (at
// [task * streams + stream]), by the events the GPU's streams record and wait for
// (sim/gpu_program.h): a vector clock per stream, each wait taking the clock of its record; along a
// stream each entry only grows. An event recorded on another GPU orders nothing here.
std::vector<std::vector<std::size_t>> start_clocks(const sim::GpuProgram& gpu) {
  const std::size_t n = gpu.streams.size();
  std::vector<std::vector<std::size_t>> at(n);
  std::unordered_map<std::uint32_t, std::vector<std::size_t>> recorded;  // event → clock at its record
  // Records may come later in the streams' order than their waits: again until nothing changes,
  // at most once per stream a chain of them crosses.
  for (std::size_t pass = 0; pass <= n; ++pass) {
    bool changed = false;
    for (std::size_t s = 0; s < n; ++s) {
      std::vector<std::size_t> clock(n, 0);  // per stream: how many of its tasks have ended
      const sim::TaskList& tasks = gpu.streams[s].tasks;
      at[s].assign(tasks.size() * n, 0);
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        const sim::Task t = tasks[i];
        clock[s] = i;
        std::copy(clock.begin(), clock.end(), at[s].begin() + static_cast<std::ptrdiff_t>(i * n));
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
  return at;
}

// Whether a tying ring of one stream (`tying_at`, by place) and an embedded ring of another
// (`embedded`) may run at once: neither ends before the other starts (`clocks`, start_clocks). Pair
// by pair, not stream by stream: under sequence parallelism a tensor-parallel stream's gathers and
// reduce-scatters run between the compute stream's rings, each ordered by the events around it
// (workloads/profile/tp_sync.h), and the run keeps them embedded.
bool tying_ring_meets_another(const std::vector<std::vector<std::size_t>>& clocks,
                              const std::vector<std::vector<std::size_t>>& embedded,
                              const std::vector<std::vector<std::size_t>>& tying_at) {
  const std::size_t n = clocks.size();
  for (std::size_t x = 0; x < n; ++x)
    for (const std::size_t i : tying_at[x])
      for (std::size_t y = 0; y < n; ++y) {
        if (y == x) continue;
        // y's first embedded ring not ended before ring i starts; the later ones start no earlier
        // in x's terms (a clock only grows along its stream), so it is the one that may overlap.
        const std::size_t ended = clocks[x][i * n + y];
        const auto j = std::lower_bound(embedded[y].begin(), embedded[y].end(), ended);
        if (j != embedded[y].end() && clocks[y][*j * n + x] <= i) return true;
      }
  return false;
}

// What a GPU's answer depends on (start_clocks, tying_ring_meets_another): per stream, its length and
// its records' and waits' places and events, the events counted from the GPU's least (a replica's GPU
// has another's events shifted), and the places of its embedded and tying rings. GPUs alike in these
// answer alike, so each distinct one is asked once: asked GPU by GPU, dp 32,768 x mp 2 on 8,192 DGX
// H100 spent about 5 s of its 23 s of CPU here (tests/bench/MEASUREMENTS.md, Lead 2026-12-07 16:48).
struct StreamsKey {
  std::vector<std::size_t> sizes;
  std::vector<std::vector<std::pair<std::size_t, std::uint32_t>>> marks;  // (place × 2 + record, event)
  std::vector<std::vector<std::size_t>> embedded, tying_at;
  auto operator<=>(const StreamsKey&) const = default;
};

StreamsKey streams_key(const sim::GpuProgram& gpu, std::vector<std::vector<std::size_t>> embedded,
                       std::vector<std::vector<std::size_t>> tying_at) {
  StreamsKey key{.sizes = {}, .marks = {}, .embedded = std::move(embedded), .tying_at = std::move(tying_at)};
  std::uint32_t least = UINT32_MAX;
  for (const sim::StreamProgram& sp : gpu.streams) {
    key.sizes.push_back(sp.tasks.size());
    auto& marks = key.marks.emplace_back();
    for (std::size_t i = 0; i < sp.tasks.size(); ++i) {
      const sim::Task t = sp.tasks[i];
      if (t.kind != sim::TaskKind::Record && t.kind != sim::TaskKind::Wait) continue;
      marks.emplace_back(i * 2 + (t.kind == sim::TaskKind::Record ? 1 : 0), t.id);
      least = std::min(least, t.id);
    }
  }
  for (auto& marks : key.marks)
    for (auto& mark : marks) mark.second -= least;
  return key;
}

}  // namespace

// Rings embedded from two streams of one GPU (ZeRO-3's parameter all-gathers beside its gradient
// reduce-scatters) run at the same time, and one with two edges on one link (on an NVSwitch machine)
// then has its messages tie with the other's there at once. Llama 2 7B ZeRO-3 on 4 and 8 DGX A100
// (tests/scale/step_estimate_test.cpp) runs so; GPT-3's tensor-parallel rings, on one stream, stay
// embedded, and so do ZeRO-2's gathers of updated parameters, which wait for the optimizer and so for
// every reduce-scatter (the streams' events order them). Every GPU in such a ring is asked: what
// orders one GPU's streams (its events) need not order another's.
bool embedding_expected_to_tie(const workloads::StepProgram& program,
                               const std::vector<std::unique_ptr<sim::Collective>>& owned) {
  // Per collective: embedded (1), and a tying ring too (3); read once, not per GPU that joins it.
  std::vector<std::uint8_t> ring_kind(owned.size(), 0);
  bool any = false;
  for (std::size_t i = 0; i < owned.size(); ++i) {
    const auto* ring = dynamic_cast<const sim::EmbeddedRing*>(owned[i].get());
    if (ring == nullptr) continue;
    ring_kind[i] = sim::ring_edges_share_a_link(ring->ring()) ? 3 : 1;
    any = any || ring_kind[i] == 3;
  }
  if (!any) return false;
  std::map<StreamsKey, bool> asked;  // the GPUs alike that answered no (a yes ends the search)
  for (const sim::GpuProgram& gpu : program.gpus) {
    // Per stream: its embedded rings' and its tying rings' places among its tasks, in order.
    const std::size_t n = gpu.streams.size();
    std::vector<std::vector<std::size_t>> embedded(n), tying_at(n);
    for (std::size_t s = 0; s < n; ++s) {
      const sim::TaskList& tasks = gpu.streams[s].tasks;
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        const sim::Task t = tasks[i];
        if (t.kind != sim::TaskKind::Collective || t.id >= owned.size() || ring_kind[t.id] == 0) continue;
        embedded[s].push_back(i);
        if (ring_kind[t.id] == 3) tying_at[s].push_back(i);
      }
    }
    if (std::all_of(tying_at.begin(), tying_at.end(), [](const auto& v) { return v.empty(); })) continue;
    auto [it, fresh] = asked.try_emplace(streams_key(gpu, std::move(embedded), std::move(tying_at)), false);
    if (fresh && tying_ring_meets_another(start_clocks(gpu), it->first.embedded, it->first.tying_at))
      return true;
  }
  return false;
}

}  // namespace hybridsim::analysis

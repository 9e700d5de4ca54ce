#include "analysis/step/ring_fallback.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "analysis/step/fold_forecast.h"
#include "sim/fast/embedded_ring.h"
#include "sim/fast/folded_ring.h"
#include "sim/ring_collective.h"

namespace hybridsim::analysis {

namespace {

// Whether it folds wherever its links are its own and free as it starts.
bool folds_on_free_links(const sim::Collective& c) {
  const auto* folded = dynamic_cast<const sim::FoldedRing*>(&c);
  return folded != nullptr && folded->may_fold() && folded->plan_only_refusal() == nullptr;
}

std::uint32_t find(std::vector<std::uint32_t>& parent, std::uint32_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

std::vector<std::uint8_t> rings_without_fallback(
    const InFlightLanes& lanes, const std::vector<std::unique_ptr<sim::Collective>>& collectives) {
  const std::size_t n = collectives.size();
  std::vector<std::uint8_t> out(n, 0);
  std::vector<const sim::RingCollective*> rings(n, nullptr);
  sim::LinkId links = 0;  // one past the largest link any route crosses
  for (std::size_t i = 0; i < n; ++i) {
    if (collectives[i] == nullptr) continue;
    rings[i] = lone_ring(collectives[i].get(), true);
    if (rings[i] == nullptr) return out;  // its links are not known: it may cross any ring's
    for (std::uint32_t c = 0; c < rings[i]->channel_count(); ++c)
      for (const auto& route : rings[i]->channel_plan(c).routes)
        for (const sim::LinkId l : route) links = std::max(links, l + 1);
  }
  // Collectives joined by a link they both cross, in components (union-find over the first to cross it).
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> first(links, kNone), parent(n);
  std::iota(parent.begin(), parent.end(), 0u);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (rings[i] == nullptr) continue;
    for (std::uint32_t c = 0; c < rings[i]->channel_count(); ++c)
      for (const auto& route : rings[i]->channel_plan(c).routes)
        for (const sim::LinkId l : route) {
          if (first[l] == kNone) {
            first[l] = i;
            continue;
          }
          const std::uint32_t a = find(parent, first[l]), b = find(parent, i);
          if (a != b) parent[std::max(a, b)] = std::min(a, b);
        }
  }
  // A component is safe while every one of its collectives folds on free links, in its root's lane.
  std::vector<std::uint8_t> safe(n, 1);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (rings[i] == nullptr) continue;
    const std::uint32_t root = find(parent, i);
    if (!folds_on_free_links(*collectives[i]) || lanes.lane_of(i) != lanes.lane_of(root)) safe[root] = 0;
  }
  for (std::uint32_t i = 0; i < n; ++i)
    if (rings[i] != nullptr) out[i] = safe[find(parent, i)];
  return out;
}

std::uint64_t folding_ring_window(const sim::FoldedRing& ring) {
  const sim::RingCollective& plan = ring.ring();
  std::uint64_t positions = 0;
  for (std::uint32_t c = 0; c < plan.channel_count(); ++c)
    positions = std::max<std::uint64_t>(positions, plan.channel_plan(c).routes.size());
  return positions * plan.messages_per_chunk();
}

}  // namespace hybridsim::analysis

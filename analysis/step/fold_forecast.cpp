#include "analysis/step/fold_forecast.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "sim/fast/fold_cost.h"
#include "sim/fast/folded_ring.h"

namespace hybridsim::analysis {

bool spans_members(const StepFoldPlan& fold, const workloads::CollectiveSpec& spec) {
  bool rep = false, member = false;
  for (const int m : spec.members) {
    const bool is_rep =
        fold.fold.representative[static_cast<std::size_t>(m)] == static_cast<std::uint32_t>(m);
    rep = rep || is_rep;
    member = member || !is_rep;
  }
  return rep && member;
}

namespace {

// Whether channel c of `ring` (over the GPUs `gpus`, by rank) repeats neither the timing of its
// positions' routes nor their GPUs' speed scales with a period under its ranks: FoldedRing::period_of
// compares the ranks' join times where this compares what they follow.
bool channel_never_repeats(const sim::RingCollective& ring, std::uint32_t c, const std::vector<int>& gpus,
                           const workloads::StepProgram& program) {
  const sim::RingChannel& plan = ring.channel_plan(c);
  const auto n = static_cast<std::uint32_t>(plan.order.size());
  const auto scales_of = [&](std::uint32_t p) {
    const sim::GpuProgram& g = program.gpus[static_cast<std::size_t>(gpus[plan.order[p]])];
    return std::pair{std::bit_cast<std::uint64_t>(g.compute_scale),
                     std::bit_cast<std::uint64_t>(g.sample_scale)};
  };
  const auto alike = [&](std::uint32_t p, std::uint32_t q) {
    return scales_of(p) == scales_of(q) && sim::ring_positions_alike(ring, c, p, q);
  };
  return sim::smallest_period(n, alike) == n;
}

}  // namespace

std::optional<std::string> folded_ring_expected_in_full(
    const workloads::StepProgram& program, const StepFoldPlan& fold,
    const std::vector<std::unique_ptr<sim::Collective>>& collectives) {
  if (fold.empty()) return std::nullopt;
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    const auto* folded = dynamic_cast<const sim::FoldedRing*>(collectives[i].get());
    if (folded == nullptr || !folded->may_fold() || !spans_members(fold, program.collectives[i])) continue;
    const sim::RingCollective& ring = folded->ring();
    const bool bounded = ring.config().fast_path == sim::FastPath::Bounded;
    for (std::uint32_t c = 0; c < ring.channel_count(); ++c) {
      const auto [small, large] = std::minmax_element(ring.chunk_bytes(c).begin(), ring.chunk_bytes(c).end());
      if (!bounded && small != ring.chunk_bytes(c).end() && *small != *large)
        return "a ring they share would run in full: chunks of unequal size change its timing";
      if (channel_never_repeats(ring, c, program.collectives[i].members, program))
        return "a ring they share would run in full: no repeating pattern of ring edges and its GPUs' speeds";
    }
  }
  return std::nullopt;
}

}  // namespace hybridsim::analysis

#include "analysis/step/fold_forecast.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>

#include "analysis/step/collective_timeline.h"
#include "analysis/step/step_fold_p2p.h"
#include "sim/fast/embedded_ring.h"
#include "sim/fast/fold_cost.h"
#include "sim/fast/folded_ring.h"
#include "sim/fast/folded_tree.h"

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

const sim::RingCollective* lone_ring(const sim::Collective* c, bool with_embedded) {
  if (const auto* ring = dynamic_cast<const sim::RingCollective*>(c)) return ring;
  if (const auto* folded = dynamic_cast<const sim::FoldedRing*>(c)) return &folded->ring();
  if (const auto* embedded = dynamic_cast<const sim::EmbeddedRing*>(c); embedded && with_embedded)
    return &embedded->ring();
  return nullptr;
}

void for_each_route(const workloads::CollectivePlan& plan,
                    const std::function<void(const std::vector<sim::LinkId>&)>& visit) {
  if (plan.pairs != nullptr) {
    for (const auto& from : *plan.pairs)
      for (const auto& route : from) visit(route);
    return;
  }
  if (plan.algorithm == workloads::AllReduceAlgorithm::Tree) {
    if (plan.trees == nullptr) return;
    for (const sim::TreeChannel& tree : *plan.trees) {
      for (const auto& route : tree.up) visit(route);
      for (const auto& routes : tree.down)
        for (const auto& route : routes) visit(route);
    }
    return;
  }
  for (const auto& phase : plan.phases)
    for (const sim::CollectiveChain::Part& part : phase)
      for (const sim::RingChannel& channel : part.channels)
        for (const auto& route : channel.routes) visit(route);
}

void CrossingForecast::note_plan(std::size_t c, const workloads::CollectiveSpec& spec,
                                 const workloads::CollectivePlan& plan) {
  std::optional<Kind> kind;
  if (plan.pairs != nullptr)
    kind = Kind::AllToAll;
  else if (plan.algorithm == workloads::AllReduceAlgorithm::Tree)
    kind = Kind::Tree;
  else if (is_point_to_point(spec))
    kind = Kind::Transfer;
  else if (plan.phases.size() == 1 && plan.phases[0].size() == 1)
    kind = Kind::Ring;
  if (expected_time_.size() <= c) expected_time_.resize(c + 1, sim::Time::max());
  if (plan.nccl) expected_time_[c] = sim::Time::from_seconds(plan.nccl->time_us * 1e-6);
  if (kind) {
    note_group(c, *kind, spec.members, false, [&](const RouteVisit& visit) { for_each_route(plan, visit); });
    return;
  }
  // A chain of phases (hierarchical): each part is a ring that folds alone, over its own GPUs, and
  // is its ring's group (the part over the same GPUs in another phase, or bucket, takes its routes).
  for (const auto& phase : plan.phases)
    for (const sim::CollectiveChain::Part& part : phase) {
      std::vector<int> members;
      members.reserve(part.members.size());
      for (const std::uint32_t m : part.members) members.push_back(spec.members[m]);
      note_group(c, Kind::Ring, members, true, [&](const RouteVisit& visit) {
        for (const sim::RingChannel& channel : part.channels)
          for (const auto& route : channel.routes) visit(route);
      });
    }
}

void CrossingForecast::note_group(std::size_t c, Kind kind, const std::vector<int>& members, bool chained,
                                  const std::function<void(const RouteVisit&)>& routes) {
  const auto [it, fresh] = group_of_.try_emplace({kind, members}, groups_.size());
  if (!fresh) {
    Group& group = groups_[it->second];
    if (group.collectives.back() != c) group.collectives.push_back(c);
    group.chained = group.chained || chained;
    return;
  }
  const auto g = static_cast<std::uint32_t>(groups_.size());
  groups_.push_back({kind, {c}, chained});
  routes([&](const std::vector<sim::LinkId>& route) {
    for (const sim::LinkId l : route)
      if (on_[l].empty() || on_[l].back() != g) on_[l].push_back(g);
  });
}

std::optional<std::string> CrossingForecast::expected_crossed(
    const std::vector<std::unique_ptr<sim::Collective>>& owned) const {
  // Per group: whether one of its collectives runs, and whether one folds alone (an embedded ring's
  // group is EmbeddingForecast's).
  std::vector<std::uint8_t> runs(groups_.size(), 0), folds(groups_.size(), 0);
  for (std::size_t g = 0; g < groups_.size(); ++g)
    for (const std::size_t c : groups_[g].collectives) {
      const sim::Collective* x = owned[c].get();
      if (x == nullptr) continue;
      runs[g] = 1;
      if (x->may_fold() && dynamic_cast<const sim::EmbeddedRing*>(x) == nullptr) folds[g] = 1;
    }
  for (const std::vector<std::uint32_t>& groups : on_)
    for (const std::uint32_t a : groups) {
      if (folds[a] == 0) continue;
      for (const std::uint32_t b : groups) {
        if (b == a || runs[b] == 0) continue;
        const Kind x = groups_[a].kind, y = groups_[b].kind;
        if (x == Kind::Tree && (y == Kind::AllToAll || y == Kind::Transfer))
          return "a folded tree shares a link with an all-to-all or transfers that may run at once";
        if (x == Kind::Ring && y == Kind::Ring && folds[b] != 0)
          return groups_[a].chained || groups_[b].chained
                     ? "a hierarchical all-reduce's folded rings share a link with other folded rings "
                       "that may run at once"
                     : "two folded rings of other GPUs share a link and may run at once";
      }
    }
  return std::nullopt;
}

std::vector<std::size_t> CrossingForecast::expected_in_full(
    const std::vector<std::unique_ptr<sim::Collective>>& owned, const workloads::StepProgram& program) const {
  // Nothing to look at (the common case, asked of every try) unless a tree and a ring share a link.
  const auto tree_and_ring = [&](const std::vector<std::uint32_t>& groups) {
    bool tree = false, ring = false;
    for (const std::uint32_t g : groups) {
      tree = tree || groups_[g].kind == Kind::Tree;
      ring = ring || groups_[g].kind == Kind::Ring;
    }
    return tree && ring;
  };
  if (std::none_of(on_.begin(), on_.end(), tree_and_ring)) return {};
  // The pairs of groups that cross one link (a group with itself too: one bucket after another).
  std::set<std::pair<std::uint32_t, std::uint32_t>> met;
  for (const std::vector<std::uint32_t>& groups : on_)
    for (const std::uint32_t a : groups)
      for (const std::uint32_t b : groups) met.insert({a, b});
  const auto at = [&](std::size_t c) { return c < owned.size() ? owned[c].get() : nullptr; };
  const auto folded_ring = [&](std::size_t c) {
    const auto* ring = dynamic_cast<const sim::FoldedRing*>(at(c));
    return ring != nullptr && ring->may_fold();
  };
  const auto may_fold = [&](std::size_t c) {
    const sim::Collective* x = at(c);
    return folded_ring(c) || (dynamic_cast<const sim::FoldedTree*>(x) != nullptr && x->may_fold());
  };
  const std::vector<CollectiveWindow> window = collective_windows(program, expected_time_);
  const auto time_of = [&](std::size_t c) {
    return c < expected_time_.size() ? expected_time_[c] : sim::Time::max();
  };
  // Whether `later` starts while `earlier` may still be on their links: it starts no earlier, and
  // before `earlier`'s last arrival plus twice its time (unknown: forever).
  const auto within = [&](std::size_t earlier, std::size_t later) {
    const CollectiveWindow &e = window[earlier], &l = window[later];
    if (!e.reached() || !l.reached() || l.first_arrival < e.first_arrival) return false;
    const sim::Time t = time_of(earlier);
    if (t == sim::Time::max() || t > (sim::Time::max() - e.last_arrival) / 2) return true;
    return l.first_arrival <= e.last_arrival + t + t;
  };
  std::vector<std::uint8_t> in_full(owned.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [a, b] : met)
      for (const std::size_t x : groups_[a].collectives) {
        if (in_full[x] != 0 || !may_fold(x)) continue;
        for (const std::size_t y : groups_[b].collectives) {
          if (y == x) continue;
          // A tree that meets a folded ring's claims, or anything that meets messages in full.
          const bool claimed = groups_[a].kind == Kind::Tree && in_full[y] == 0 && folded_ring(y);
          if ((claimed || in_full[y] != 0) && within(y, x)) {
            in_full[x] = 1;
            changed = true;
            break;
          }
        }
      }
  }
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < in_full.size(); ++c)
    if (in_full[c] != 0) out.push_back(c);
  return out;
}

}  // namespace hybridsim::analysis

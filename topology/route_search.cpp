// The searches of route_search.h. Why SplitCosts is exact: its costs are lengths of real routes
// (a route inside the machines, then the fabric, then the machines again), and no allowed link
// between two devices of the region can lower any of them (inside the machines and inside the
// fabric by construction, between the parts by the checks); costs with both properties are the
// shortest-route costs.
#include "topology/route_search.h"

#include <algorithm>
#include <functional>

namespace hybridsim::topology::detail {

namespace {
using HeapEntry = std::pair<std::int64_t, std::uint32_t>;
constexpr auto kCheaperFirst = std::greater<HeapEntry>{};
}  // namespace

void SearchScratch::resize(std::size_t devices) {
  cost_.assign(devices, kInfiniteCost);
  stamp_.assign(devices, 0);
  epoch_ = 0;
}

void SearchScratch::begin() {
  heap_.clear();
  if (++epoch_ == 0) {  // wrapped: forget every stamp once in 2^32 searches
    std::fill(stamp_.begin(), stamp_.end(), 0);
    epoch_ = 1;
  }
}

bool SearchScratch::lower(std::uint32_t v, std::int64_t c) {
  if (stamp_[v] == epoch_ && cost_[v] <= c) return false;
  stamp_[v] = epoch_;
  cost_[v] = c;
  heap_.emplace_back(c, v);
  std::push_heap(heap_.begin(), heap_.end(), kCheaperFirst);
  return true;
}

std::optional<std::uint32_t> SearchScratch::pop() {
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), kCheaperFirst);
    const HeapEntry top = heap_.back();
    heap_.pop_back();
    // Costs are positive and a device is queued again only when its cost drops, so an entry whose
    // cost is still the device's is its one settling.
    if (cost(top.second) == top.first) return top.second;
  }
  return std::nullopt;
}

namespace {

void settle(const RouteGraph& g, const Region& region, const LinkRule& rule,
            std::optional<std::uint32_t> target, SearchScratch& scratch) {
  while (const auto u = scratch.pop()) {
    if (u == target) return;
    const std::int64_t cu = scratch.cost(*u);
    for (const RouteGraph::Arc& arc : g.out_arcs(*u))
      if (g.in_region(arc.other, region) && g.allowed(*u, arc, rule))
        scratch.lower(arc.other, cu + arc.cost);
  }
}

}  // namespace

void search(const RouteGraph& g, const Region& region, const LinkRule& rule,
            std::span<const Seed> seeds, std::optional<std::uint32_t> target,
            SearchScratch& scratch) {
  scratch.begin();
  for (const Seed& s : seeds) scratch.lower(s.device, s.cost);
  settle(g, region, rule, target, scratch);
}

void resume(const RouteGraph& g, const Region& region, const LinkRule& rule,
            std::span<const Seed> seeds, SearchScratch& scratch) {
  for (const Seed& s : seeds) scratch.lower(s.device, s.cost);
  settle(g, region, rule, std::nullopt, scratch);
}

const std::vector<std::int64_t>& FabricCosts::from(const RouteGraph& g, std::uint32_t from_index,
                                                   const LinkRule& rule) {
  const std::uint64_t key = (std::uint64_t{from_index} << 2) |
                            (std::uint64_t{rule.avoid_nvlink} << 1) | std::uint64_t{rule.gpu_relay};
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  // Inside the fabric no device is the route's source (that is a device of a machine).
  const LinkRule fabric_rule{.avoid_nvlink = rule.avoid_nvlink, .gpu_relay = rule.gpu_relay};
  std::vector<std::int64_t> cost(g.fabric.size(), kInfiniteCost);
  heap_.clear();
  cost[from_index] = 0;
  heap_.emplace_back(0, from_index);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), kCheaperFirst);
    const auto [cu, u] = heap_.back();
    heap_.pop_back();
    if (cu != cost[u]) continue;
    for (std::uint32_t i = g.fabric_begin[u]; i < g.fabric_begin[u + 1]; ++i) {
      const RouteGraph::Arc& arc = g.fabric_out[i];
      if (!g.allowed(g.fabric[u], arc, fabric_rule) || cu + arc.cost >= cost[arc.other]) continue;
      cost[arc.other] = cu + arc.cost;
      heap_.emplace_back(cost[arc.other], arc.other);
      std::push_heap(heap_.begin(), heap_.end(), kCheaperFirst);
    }
  }
  kept_bytes_ += cost.size() * sizeof(std::int64_t);
  return cache_.emplace(key, std::move(cost)).first->second;
}

void FabricCosts::forget_if_full() {
  if (kept_bytes_ < kMaxFabricCostBytes) return;
  cache_.clear();
  kept_bytes_ = 0;
}

// Where routes leave the machines for the fabric, at their cheapest.
void SplitCosts::collect_entries(const Region& region, const LinkRule& rule, FabricCosts& fabric) {
  entries_.clear();
  entry_devices_.clear();
  fabric.forget_if_full();  // no entry of this route holds a reference yet
  for (const int node : {region.node_a, region.node_b}) {
    for (const RouteGraph::Crossing& c : g_->exits[static_cast<std::size_t>(node)]) {
      const std::int64_t cm = scratch_->cost(c.device);
      if (cm == kInfiniteCost || !g_->allowed(c.device, c.arc, rule)) continue;
      const auto at = std::find(entry_devices_.begin(), entry_devices_.end(), c.arc.other);
      if (at == entry_devices_.end()) {
        entry_devices_.push_back(c.arc.other);
        entries_.push_back({nullptr, cm + c.arc.cost});
      } else {
        Entry& e = entries_[static_cast<std::size_t>(at - entry_devices_.begin())];
        e.cost = std::min(e.cost, cm + c.arc.cost);
      }
    }
    if (region.node_b == region.node_a) break;
  }
  for (std::size_t i = 0; i < entries_.size(); ++i)
    entries_[i].from = &fabric.from(
        *g_, static_cast<std::uint32_t>(g_->fabric_index[entry_devices_[i]]), rule);
}

bool SplitCosts::solve(const RouteGraph& g, std::uint32_t src, int dst_node, const LinkRule& rule,
                       SearchScratch& scratch, FabricCosts& fabric) {
  g_ = &g;
  scratch_ = &scratch;
  const Region machines{.node_a = g.node[src], .node_b = dst_node, .fabric = false};
  const Seed start{src, 0};
  search(g, machines, rule, {&start, 1}, std::nullopt, scratch);
  collect_entries(machines, rule, fabric);
  if (entries_.empty()) return true;  // the fabric is out of reach: the machines are the region

  // Back from the fabric into the machines, where that is cheaper than the routes inside them.
  seeds_.clear();
  for (const int node : {machines.node_a, machines.node_b}) {
    for (const RouteGraph::Crossing& c : g.entrances[static_cast<std::size_t>(node)]) {
      if (!g.allowed(c.arc.other, c.arc, rule)) continue;
      const std::int64_t cf = fabric_cost(c.arc.other);
      if (cf != kInfiniteCost && cf + c.arc.cost < scratch.cost(c.device))
        seeds_.push_back({c.device, cf + c.arc.cost});
    }
    if (machines.node_b == machines.node_a) break;
  }
  if (seeds_.empty()) return true;
  resume(g, machines, rule, seeds_, scratch);

  // The fabric's costs came from the first search's entries; a device that got cheaper since must
  // not make any fabric device cheaper, or they are not final.
  for (const int node : {machines.node_a, machines.node_b}) {
    for (const RouteGraph::Crossing& c : g.exits[static_cast<std::size_t>(node)]) {
      const std::int64_t cm = scratch.cost(c.device);
      if (cm != kInfiniteCost && g.allowed(c.device, c.arc, rule) &&
          cm + c.arc.cost < fabric_cost(c.arc.other))
        return false;
    }
    if (machines.node_b == machines.node_a) break;
  }
  return true;
}

}  // namespace hybridsim::topology::detail

// Internal to topology/: the shortest-route searches behind Topology::route, on a flat copy of the
// sealed graph (costs in ps, topology_impl.h's link_cost). A search touches only what it settles:
// costs live in epoch-stamped arrays, so starting one costs nothing, whatever the device count.
//   SearchScratch s(graph.device_count());
//   search(graph, {.node_a = 0, .node_b = 0, .fabric = false}, {.src = gpu}, {{gpu, 0}}, {}, s);
//   s.cost(other_gpu);   // kInfiniteCost where unreached
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/link.h"

namespace hybridsim::topology::detail {

inline constexpr std::int64_t kInfiniteCost = std::numeric_limits<std::int64_t>::max();

// The devices a search may visit: those of machines node_a and node_b and, when `fabric`, the
// devices of no machine (fabric switches). Never a third machine.
struct Region {
  int node_a = -1;
  int node_b = -1;
  bool fabric = true;
};

// The links a route from `src` may take: no NVLink/NVSwitch when avoiding them, and no link out of
// a GPU other than `src` unless relaying through GPUs is allowed.
struct LinkRule {
  std::uint32_t src = std::numeric_limits<std::uint32_t>::max();
  bool avoid_nvlink = false;
  bool gpu_relay = false;
};

// The sealed graph, flattened: per device its machine, whether it is a GPU, and its out- and
// in-links. In-links keep the order of the Boost graph's in_edges (the route walk's tie-breaks
// depend on it). Fabric devices (no machine) also get a compact index and links among themselves.
struct RouteGraph {
  struct Arc {
    std::uint32_t other = 0;  // the far end (target of an out-link, source of an in-link)
    sim::LinkId link = 0;
    std::int64_t cost = 0;
  };
  std::vector<int> node;  // -1: fabric
  std::vector<std::uint8_t> gpu;
  std::vector<std::uint8_t> nvlink;  // by LinkId: an NVLink or NVSwitch link
  std::vector<std::uint32_t> out_begin, in_begin;  // CSR offsets, device_count() + 1 each
  std::vector<Arc> out, in;
  std::vector<std::vector<std::uint32_t>> machine;  // node → its devices, by id
  // A link between a device of a machine (`device`) and a fabric device (`arc.other`).
  struct Crossing {
    std::uint32_t device = 0;
    Arc arc;
  };
  std::vector<std::vector<Crossing>> exits;      // node → its links into the fabric
  std::vector<std::vector<Crossing>> entrances;  // node → the fabric's links into it
  std::vector<std::int32_t> fabric_index;           // device → index among fabric devices, or -1
  std::vector<std::uint32_t> fabric;                // fabric index → device
  std::vector<std::uint32_t> fabric_begin;          // CSR of links between fabric devices,
  std::vector<Arc> fabric_out;                      // `other` a fabric index

  std::size_t device_count() const { return node.size(); }
  std::span<const Arc> out_arcs(std::uint32_t v) const {
    return {out.data() + out_begin[v], out_begin[v + 1] - out_begin[v]};
  }
  std::span<const Arc> in_arcs(std::uint32_t v) const {
    return {in.data() + in_begin[v], in_begin[v + 1] - in_begin[v]};
  }
  bool in_region(std::uint32_t v, const Region& r) const {
    const int n = node[v];
    return n < 0 ? r.fabric : n == r.node_a || n == r.node_b;
  }
  // Whether a route under `rule` may take `arc` out of device `from`.
  bool allowed(std::uint32_t from, const Arc& arc, const LinkRule& rule) const {
    if (rule.avoid_nvlink && nvlink[arc.link] != 0) return false;
    return rule.gpu_relay || from == rule.src || gpu[from] == 0;
  }
};

// Costs of one search, reused from search to search: begin() forgets the last one in O(1).
class SearchScratch {
 public:
  void resize(std::size_t devices);
  void begin();
  std::int64_t cost(std::uint32_t v) const { return stamp_[v] == epoch_ ? cost_[v] : kInfiniteCost; }
  // Lowers v's cost to c and queues it; false when v already costs c or less.
  bool lower(std::uint32_t v, std::int64_t c);
  bool empty() const { return heap_.empty(); }
  // The cheapest queued device whose queued cost is still its cost, if any.
  std::optional<std::uint32_t> pop();

 private:
  std::vector<std::int64_t> cost_;
  std::vector<std::uint32_t> stamp_;
  std::uint32_t epoch_ = 0;
  std::vector<std::pair<std::int64_t, std::uint32_t>> heap_;
};

struct Seed {
  std::uint32_t device = 0;
  std::int64_t cost = 0;
};

// Dijkstra from `seeds` over the region's devices and the links `rule` allows, into `scratch`
// (begun afresh). With a target, stops once the target is settled: then every device cheaper than
// it has its final cost and every other costs at least as much as the target.
void search(const RouteGraph& g, const Region& region, const LinkRule& rule,
            std::span<const Seed> seeds, std::optional<std::uint32_t> target,
            SearchScratch& scratch);
// Continues a search that ran to its end (no target) with more seeds: afterwards every device
// costs the least over the old and the new seeds. Only devices that get cheaper are visited again.
void resume(const RouteGraph& g, const Region& region, const LinkRule& rule,
            std::span<const Seed> seeds, SearchScratch& scratch);

// Costs between fabric devices over the fabric alone, by source and link rule, computed once each
// and kept (the fabric is small next to the machines: leaves and spines) up to kMaxFabricCostBytes:
// past that the kept costs are forgotten before the next route's are looked up, and computed again
// when asked for (the same costs: only the time moves).
class FabricCosts {
 public:
  // Costs from fabric device `from_index` to every fabric device (by fabric index). The reference
  // stays valid until the next forget_if_full().
  const std::vector<std::int64_t>& from(const RouteGraph& g, std::uint32_t from_index,
                                        const LinkRule& rule);
  // Forgets every kept cost if they hold kMaxFabricCostBytes or more; called between routes.
  void forget_if_full();

 private:
  std::unordered_map<std::uint64_t, std::vector<std::int64_t>> cache_;
  std::size_t kept_bytes_ = 0;
  std::vector<std::pair<std::int64_t, std::uint32_t>> heap_;
};

// What FabricCosts keeps at most (before the next route): a rail-optimised fabric of 8,192 DGX H100
// (4,096 leaves and 16 spines) needs 4,096 entry leaves' costs of 4,112 switches, 135 MB.
inline constexpr std::size_t kMaxFabricCostBytes = std::size_t{128} << 20;

// Exact route costs from `src` (a device of a machine) over its machine, machine `dst_node` and the
// fabric, found part by part: a search over the machine(s), the fabric's costs from where the
// route enters it (FabricCosts), a search over the machine(s) again from where it comes back, and
// a check that every link between the parts is relaxed. solve() is false when that check fails
// (a cheaper way through the other machine back into the fabric): then the caller searches the
// whole region at once.
class SplitCosts {
 public:
  bool solve(const RouteGraph& g, std::uint32_t src, int dst_node, const LinkRule& rule,
             SearchScratch& scratch, FabricCosts& fabric);
  // The cost of a device of the region (valid after a successful solve()).
  std::int64_t cost(std::uint32_t v) const {
    return g_->node[v] >= 0 ? scratch_->cost(v) : fabric_cost(v);
  }

 private:
  struct Entry {
    const std::vector<std::int64_t>* from = nullptr;  // FabricCosts of the entry device
    std::int64_t cost = 0;                            // the route's cost at the entry device
  };
  void collect_entries(const Region& region, const LinkRule& rule, FabricCosts& fabric);
  std::int64_t fabric_cost(std::uint32_t v) const {
    const auto index = static_cast<std::size_t>(g_->fabric_index[v]);
    std::int64_t best = kInfiniteCost;
    for (const Entry& e : entries_) {
      const std::int64_t c = (*e.from)[index];
      if (c != kInfiniteCost) best = std::min(best, e.cost + c);
    }
    return best;
  }

  const RouteGraph* g_ = nullptr;
  const SearchScratch* scratch_ = nullptr;
  std::vector<Entry> entries_;
  std::vector<Seed> seeds_;
  std::vector<std::uint32_t> entry_devices_;
};

}  // namespace hybridsim::topology::detail

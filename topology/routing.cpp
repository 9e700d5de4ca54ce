// Shortest routes on the sealed graph: exact costs on an integer cost over the devices a route may
// use (route_search.h: by parts for routes between machines, else one search), then a walk back
// from the destination that spreads equal-cost choices by a hash or by destination (D-mod-k).
#include <algorithm>

#include "sim/error.h"
#include "topology/topology_impl.h"

namespace hybridsim::topology {
namespace detail {

std::int64_t link_cost(const sim::LinkSpec& spec) {
  constexpr sim::Bytes kRouteCostBytes = sim::Bytes::mib(1);
  return spec.latency.ps() + sim::transfer_time(kRouteCostBytes, spec.bandwidth).ps();
}

RouteGraph make_route_graph(const Graph& graph, sim::WorkProgress* progress) {
  RouteGraph g;
  const auto n = static_cast<std::uint32_t>(boost::num_vertices(graph));
  auto arc = [&graph](Edge e, Vertex other) {
    return RouteGraph::Arc{static_cast<std::uint32_t>(other), graph[e].link, graph[e].cost};
  };
  g.nvlink.assign(boost::num_edges(graph), 0);
  for (const Edge e : boost::make_iterator_range(boost::edges(graph))) {
    const auto kind = graph[e].kind;
    g.nvlink[graph[e].link] = kind == sim::LinkKind::NVLink || kind == sim::LinkKind::NVSwitch;
  }
  g.out_begin.push_back(0);
  g.in_begin.push_back(0);
  sim::ticked_loop(progress, "its route graph", n, "devices", [&](std::uint32_t v) {
    const int node = graph[v].node;
    g.node.push_back(node);
    g.gpu.push_back(graph[v].kind == DeviceKind::Gpu ? 1 : 0);
    for (const Edge e : boost::make_iterator_range(boost::out_edges(v, graph)))
      g.out.push_back(arc(e, boost::target(e, graph)));
    for (const Edge e : boost::make_iterator_range(boost::in_edges(v, graph)))
      g.in.push_back(arc(e, boost::source(e, graph)));
    g.out_begin.push_back(static_cast<std::uint32_t>(g.out.size()));
    g.in_begin.push_back(static_cast<std::uint32_t>(g.in.size()));
    if (node >= 0) {
      if (g.machine.size() <= static_cast<std::size_t>(node))
        g.machine.resize(static_cast<std::size_t>(node) + 1);
      g.machine[static_cast<std::size_t>(node)].push_back(v);
      g.fabric_index.push_back(-1);
    } else {
      g.fabric_index.push_back(static_cast<std::int32_t>(g.fabric.size()));
      g.fabric.push_back(v);
    }
  });
  g.exits.resize(g.machine.size());
  g.entrances.resize(g.machine.size());
  for (std::uint32_t v = 0; v < n; ++v) {
    if (g.node[v] < 0) continue;
    const auto node = static_cast<std::size_t>(g.node[v]);
    for (const RouteGraph::Arc& a : g.out_arcs(v))
      if (g.node[a.other] < 0) g.exits[node].push_back({v, a});
    for (const RouteGraph::Arc& a : g.in_arcs(v))
      if (g.node[a.other] < 0) g.entrances[node].push_back({v, a});
  }
  g.fabric_begin.push_back(0);
  for (const std::uint32_t v : g.fabric) {
    for (const RouteGraph::Arc& a : g.out_arcs(v))
      if (g.node[a.other] < 0) {
        g.fabric_out.push_back(a);
        g.fabric_out.back().other = static_cast<std::uint32_t>(g.fabric_index[a.other]);
      }
    g.fabric_begin.push_back(static_cast<std::uint32_t>(g.fabric_out.size()));
  }
  return g;
}

std::uint64_t tie_hash(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b << 21) ^ (b >> 43) ^ (c * 0xBF58476D1CE4E5B9ULL);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

}  // namespace detail

void Topology::Impl::costs_within_node_locked(DeviceId from, RouteOptions options,
                                              std::span<const DeviceId> to,
                                              std::vector<std::int64_t>& out) const {
  using namespace detail;
  const int node = route_graph.node[from.value];
  const Seed start{from.value, 0};
  search(route_graph, Region{.node_a = node, .node_b = node, .fabric = false},
         LinkRule{from.value, options.avoid_nvlink, options.gpu_relay}, {&start, 1}, std::nullopt,
         scratch);
  out.clear();
  for (const DeviceId d : to) out.push_back(scratch.cost(d.value));
}

std::vector<std::int64_t> Topology::Impl::costs_within_node(DeviceId from, RouteOptions options,
                                                            std::span<const DeviceId> to) const {
  std::vector<std::int64_t> out;
  std::lock_guard lock(mutex);
  costs_within_node_locked(from, options, to, out);
  return out;
}

sim::Route Topology::Impl::route_locked(DeviceId from, DeviceId to, RouteOptions options) const {
  using namespace detail;
  if (from == to) return {};
  const std::uint64_t key = (std::uint64_t{to.value} << 2) |
                            (std::uint64_t{options.avoid_nvlink} << 1) | options.gpu_relay;
  auto& cached = routes_from[from.value];
  const auto at = std::lower_bound(cached.begin(), cached.end(), key,
                                   [](const CachedRoute& c, std::uint64_t k) { return c.key < k; });
  if (at != cached.end() && at->key == key) return at->route;

  const RouteGraph& g = route_graph;
  const std::uint32_t src = from.value, dst = to.value;
  const LinkRule rule{src, options.avoid_nvlink, options.gpu_relay};
  const Region region{.node_a = g.node[src], .node_b = g.node[dst], .fabric = true};
  // Between devices of machines, the costs by parts (exact, see route_search.h); otherwise, or
  // when the parts do not settle, one search of the region that stops at the destination.
  const bool split = region.node_a >= 0 && region.node_b >= 0 &&
                     split_costs.solve(g, src, region.node_b, rule, scratch, fabric_costs);
  if (!split) {
    const Seed start{src, 0};
    search(g, region, rule, {&start, 1}, dst, scratch);
  }
  auto cost = [&](std::uint32_t v) { return split ? split_costs.cost(v) : scratch.cost(v); };
  if (cost(dst) == kInfiniteCost) {
    std::string why = "no route from " + devices[src].name + " to " + devices[dst].name;
    if (options.avoid_nvlink) why += " avoiding NVLink/NVSwitch";
    if (!options.gpu_relay) why += " without relaying through other GPUs";
    throw InputError(why + " in topology \"" + name + "\"");
  }
  // Walk back from the destination along tight links (cost(u) + link cost == cost(v)). Costs are
  // positive, so this terminates. Where several links are tight: once the walk has passed the
  // destination's NIC (the fabric and the source machine of a route across machines), the one at
  // the destination NIC's forwarding index (its global index; on a rail its machine) mod count, as
  // InfiniBand switches forward by destination (D-mod-k: a ring's shift permutation then never puts
  // two links on one cable); elsewhere one by
  // hash(from, to, v). A search that stopped at the destination left every device it did not
  // settle at a cost of at least the destination's, so a link out of one cannot be tight here: the
  // walk sees exact costs only, and any exact search gives the same route.
  std::vector<sim::LinkId>& path = walk_path;
  std::vector<const RouteGraph::Arc*>& tight = walk_tight;
  path.clear();
  std::int64_t dest_nic = -1;
  for (std::uint32_t v = dst; v != src;) {
    if (dest_nic < 0 && graph[v].kind == DeviceKind::Nic) dest_nic = nic_forward_index[v];
    tight.clear();
    const std::int64_t cv = cost(v);
    for (const RouteGraph::Arc& arc : g.in_arcs(v)) {
      const std::uint32_t u = arc.other;
      if (!g.in_region(u, region) || !g.allowed(u, arc, rule)) continue;
      const std::int64_t cu = cost(u);
      if (cu != kInfiniteCost && cu + arc.cost == cv) tight.push_back(&arc);
    }
    if (tight.empty()) throw InternalError("route walk found no tight edge");
    const RouteGraph::Arc* chosen =
        tight.size() == 1 ? tight.front()
        : dest_nic >= 0   ? tight[static_cast<std::size_t>(dest_nic) % tight.size()]
                          : tight[tie_hash(src, dst, v) % tight.size()];
    path.push_back(chosen->link);
    v = chosen->other;
  }
  // Store the route reversed into a stable block (spans into it stay valid for the lifetime).
  if (block_used + path.size() > block_size) {
    block_size = std::max<std::size_t>(4096, path.size());
    route_blocks.push_back(std::make_unique<sim::LinkId[]>(block_size));
    block_used = 0;
  }
  sim::LinkId* out = route_blocks.back().get() + block_used;
  std::copy(path.rbegin(), path.rend(), out);
  block_used += path.size();
  const sim::Route route(out, path.size());
  cached.insert(at, CachedRoute{key, route});  // `at` is still valid: nothing was cached since
  ++route_count;
  return route;
}

}  // namespace hybridsim::topology

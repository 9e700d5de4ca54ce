// Shortest routes on the sealed graph: Boost.Graph Dijkstra on an integer cost, over the devices a
// route may use, then a walk back from the destination that spreads equal-cost choices by a hash.
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/property_map.hpp>
#include <algorithm>
#include <optional>

#include "sim/error.h"
#include "topology/topology_impl.h"

namespace hybridsim::topology {
namespace detail {

std::int64_t link_cost(const sim::LinkSpec& spec) {
  constexpr sim::Bytes kRouteCostBytes = sim::Bytes::mib(1);
  return spec.latency.ps() + sim::transfer_time(kRouteCostBytes, spec.bandwidth).ps();
}

namespace {

// Which devices a route may visit: those of the machines at its two ends and (unless `fabric` is
// off) the fabric switches, never a third machine.
struct NodeFilter {
  const Graph* graph = nullptr;
  int src_node = -1;
  int dst_node = -1;
  bool fabric = true;
  bool operator()(Vertex v) const {
    const int node = (*graph)[v].node;
    return node < 0 ? fabric : node == src_node || node == dst_node;
  }
};

// Which links a route may take: no NVLink/NVSwitch when avoiding them, and no link out of a GPU
// other than the source unless relaying through GPUs is allowed (a GPU may end a route, not pass
// one on).
struct LinkFilter {
  const Graph* graph = nullptr;
  Vertex src = 0;
  bool avoid_nvlink = false;
  bool gpu_relay = false;
  bool operator()(Edge e) const {
    const auto kind = (*graph)[e].kind;
    if (avoid_nvlink && (kind == sim::LinkKind::NVLink || kind == sim::LinkKind::NVSwitch))
      return false;
    const Vertex u = boost::source(e, *graph);
    return gpu_relay || u == src || (*graph)[u].kind != DeviceKind::Gpu;
  }
};

using FilteredGraph = boost::filtered_graph<Graph, LinkFilter, NodeFilter>;

// Ends a Dijkstra run once `target` is settled (its cost and all cheaper ones are final).
struct Reached {};
struct StopAt : boost::default_dijkstra_visitor {
  std::optional<Vertex> target;
  template <class G>
  void examine_vertex(Vertex u, const G&) const {
    if (u == target) throw Reached{};
  }
};

// Dijkstra from src over the filtered graph into `dist` (kInfiniteCost where unreachable). With a
// target, stops when the target is settled: costs are final for every settled device.
void run_dijkstra(const Graph& g, Vertex src, const LinkFilter& lf, const NodeFilter& nf,
                  std::optional<Vertex> target, std::vector<std::int64_t>& dist) {
  FilteredGraph fg(g, lf, nf);
  dist.assign(boost::num_vertices(g), kInfiniteCost);
  StopAt stop;
  stop.target = target;
  try {
    boost::dijkstra_shortest_paths(fg, src,
                                   boost::weight_map(boost::get(&EdgeProps::cost, g))
                                       .distance_map(boost::make_iterator_property_map(
                                           dist.begin(), boost::get(boost::vertex_index, g)))
                                       .visitor(stop));
  } catch (const Reached&) {
  }
}

// splitmix64 of the three values: a fixed, platform-independent choice among equal-cost links.
std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t x = a * 0x9E3779B97F4A7C15ULL ^ (b << 21) ^ (b >> 43) ^ (c * 0xBF58476D1CE4E5B9ULL);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

}  // namespace
}  // namespace detail

void Topology::Impl::costs_within_node_locked(DeviceId from, RouteOptions options,
                                              std::vector<std::int64_t>& out) const {
  using namespace detail;
  const Vertex src = from.value;
  const int node = graph[src].node;
  run_dijkstra(graph, src, LinkFilter{&graph, src, options.avoid_nvlink, options.gpu_relay},
               NodeFilter{&graph, node, node, /*fabric=*/false}, std::nullopt, out);
}

std::vector<std::int64_t> Topology::Impl::costs_within_node(DeviceId from,
                                                            RouteOptions options) const {
  std::vector<std::int64_t> out;
  std::lock_guard lock(mutex);
  costs_within_node_locked(from, options, out);
  return out;
}

sim::Route Topology::Impl::route_locked(DeviceId from, DeviceId to, RouteOptions options) const {
  using namespace detail;
  if (from == to) return {};
  const std::uint64_t key = (std::uint64_t{options.avoid_nvlink} << 63) |
                            (std::uint64_t{options.gpu_relay} << 62) |
                            (std::uint64_t{from.value} << 31) | to.value;
  if (const auto it = routes.find(key); it != routes.end()) return it->second;

  const Vertex src = from.value, dst = to.value;
  const LinkFilter lf{&graph, src, options.avoid_nvlink, options.gpu_relay};
  const NodeFilter nf{&graph, graph[src].node, graph[dst].node, /*fabric=*/true};
  run_dijkstra(graph, src, lf, nf, dst, dist);
  if (dist[dst] == kInfiniteCost) {
    std::string why = "no route from " + devices[src].name + " to " + devices[dst].name;
    if (options.avoid_nvlink) why += " avoiding NVLink/NVSwitch";
    if (!options.gpu_relay) why += " without relaying through other GPUs";
    throw InputError(why + " in topology \"" + name + "\"");
  }
  // Walk back from the destination along tight edges (dist[u] + cost == dist[v]). Costs are
  // positive, so this terminates. Where several links are tight: once the walk has passed the
  // destination's NIC (the fabric and the source machine of a route across machines), the one at
  // the destination NIC's global index mod count, as InfiniBand switches forward by destination
  // (D-mod-k: a ring's shift permutation then never puts two edges on one link); elsewhere one by
  // hash(from, to, v). Dijkstra stopped at the destination: a device not yet settled then costs at
  // least dist[dst], so an edge out of it cannot be tight here.
  std::vector<sim::LinkId> path;
  std::vector<Edge> tight;
  std::int64_t dest_nic = -1;
  for (Vertex v = dst; v != src;) {
    if (dest_nic < 0 && graph[v].kind == DeviceKind::Nic) {
      const auto node = static_cast<std::size_t>(graph[v].node);
      const auto& nics = nics_by_node[node];
      const auto local = std::find(nics.begin(), nics.end(), DeviceId{static_cast<std::uint32_t>(v)}) - nics.begin();
      dest_nic = static_cast<std::int64_t>(node * nics.size()) + local;
    }
    tight.clear();
    for (const Edge e : boost::make_iterator_range(boost::in_edges(v, graph))) {
      const Vertex u = boost::source(e, graph);
      if (!nf(u) || !lf(e) || dist[u] == kInfiniteCost) continue;
      if (dist[u] + graph[e].cost == dist[v]) tight.push_back(e);
    }
    if (tight.empty()) throw InternalError("route walk found no tight edge");
    const Edge chosen = tight.size() == 1 ? tight.front()
                        : dest_nic >= 0 ? tight[static_cast<std::size_t>(dest_nic) % tight.size()]
                                        : tight[mix(src, dst, v) % tight.size()];
    path.push_back(graph[chosen].link);
    v = boost::source(chosen, graph);
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
  routes.emplace(key, route);
  return route;
}

}  // namespace hybridsim::topology

// Internal to topology/: the Boost.Graph behind a Topology, its lookup tables and route caches.
// Not part of the public API (public headers only forward-declare Topology::Impl); included by the
// .cpp files of topology/ that route or search the graph.
#pragma once
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/work_progress.h"
#include "topology/route_search.h"
#include "topology/topology.h"

namespace hybridsim::topology {
namespace detail {

struct VertexProps {
  DeviceKind kind = DeviceKind::Gpu;
  int node = -1;  // -1: no machine (fabric switches)
};
struct EdgeProps {
  sim::LinkId link = 0;
  sim::LinkKind kind = sim::LinkKind::Generic;
  std::int64_t cost = 0;  // routing cost in ps: latency + time to carry kRouteCostBytes
};
// Directed, with in-edges (routes are traced back from their destination), vertex index ==
// DeviceId.
using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexProps, EdgeProps>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edge = boost::graph_traits<Graph>::edge_descriptor;

// The routing cost of one link: its store-and-forward time for a 1 MiB reference message, so that
// both fewer hops and faster links are preferred. Always positive.
std::int64_t link_cost(const sim::LinkSpec& spec);

// splitmix64 of the three values: a fixed, platform-independent choice among equal-cost links
// (route walks inside a machine use tie_hash(from, to, device)).
std::uint64_t tie_hash(std::uint64_t a, std::uint64_t b, std::uint64_t c);

// The sealed graph flattened for route searches (route_search.h); `progress` (null: none) is told
// device by device (seconds at 65,536 GPUs).
RouteGraph make_route_graph(const Graph& graph, sim::WorkProgress* progress = nullptr);

}  // namespace detail

struct Topology::Impl {
  std::string name;
  detail::Graph graph;
  std::vector<DeviceInfo> devices;
  std::unordered_map<std::string, DeviceId> by_name;
  std::vector<DeviceId> gpus;
  int node_count = 0;
  sim::LinkTable links;
  std::vector<LinkEnds> ends;
  std::vector<std::uint32_t> out_offsets;  // CSR of out_links by device
  std::vector<sim::LinkId> out_flat;
  std::unordered_map<std::uint64_t, sim::LinkId> link_index;  // from << 32 | to
  std::vector<std::vector<DeviceId>> nics_by_node;            // [node] → its NICs, by id
  std::vector<std::int64_t> nic_forward_index;  // [device] → a NIC's D-mod-k index (builder.cpp)

  // Caches, guarded by mutex.
  mutable std::mutex mutex;
  // Computed routes by source device (set to the device count by build()), each list sorted by
  // CachedRoute::key: a source asks for few destinations (its ring and tree neighbours).
  struct CachedRoute {
    std::uint64_t key = 0;  // destination << 2 | avoid_nvlink << 1 | gpu_relay
    sim::Route route;
  };
  mutable std::vector<std::vector<CachedRoute>> routes_from;
  mutable std::size_t route_count = 0;
  mutable std::vector<std::unique_ptr<sim::LinkId[]>> route_blocks;
  mutable std::size_t block_used = 0;
  mutable std::size_t block_size = 0;
  detail::RouteGraph route_graph;           // set by build()
  mutable detail::SearchScratch scratch;    // sized by build()
  mutable detail::FabricCosts fabric_costs;
  mutable detail::SplitCosts split_costs;
  mutable std::vector<sim::LinkId> walk_path;  // scratch of route_locked's walk
  mutable std::vector<const detail::RouteGraph::Arc*> walk_tight;
  mutable std::vector<std::int8_t> nic_known;
  mutable std::vector<std::optional<DeviceId>> nic_of;

  static std::uint64_t pair_key(DeviceId a, DeviceId b) {
    return (std::uint64_t{a.value} << 32) | b.value;
  }
  // Route computation; the caller holds `mutex`.
  sim::Route route_locked(DeviceId from, DeviceId to, RouteOptions options) const;
  // Route costs from `from` over its own machine (no fabric) to each of `to`, in order;
  // kInfiniteCost where unreachable. Caller holds mutex.
  void costs_within_node_locked(DeviceId from, RouteOptions options, std::span<const DeviceId> to,
                                std::vector<std::int64_t>& out) const;
  // Locking wrapper of costs_within_node_locked.
  std::vector<std::int64_t> costs_within_node(DeviceId from, RouteOptions options,
                                              std::span<const DeviceId> to) const;
};

}  // namespace hybridsim::topology

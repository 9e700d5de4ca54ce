// Routes by parts (topology/route_search.h) against the plain algorithm they replace: one Boost.Graph
// Dijkstra over the whole filtered graph per route, then the same walk and tie-breaks, written out
// here as the reference. Every pair of devices of a battery of generated clusters (fat trees with and
// without oversubscription, leaves that split machines, rails, NVSwitch, PCIe, DGX A100) and of
// user topologies (one where a cheaper way runs through the destination machine, which the parts
// cannot settle), under every RouteOptions, must get exactly the reference's links.
#include <doctest/doctest.h>

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/property_map.hpp>
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "sim/error.h"
#include "topology/cluster.h"
#include "topology/topology_impl.h"
#include "topology/yaml_loader.h"

using namespace hybridsim;
using topology::DeviceId;
using topology::DeviceKind;
using topology::RouteOptions;
namespace presets = topology::presets;
namespace detail = topology::detail;

namespace {

struct NodeFilter {
  const detail::Graph* graph = nullptr;
  int src_node = -1;
  int dst_node = -1;
  bool operator()(detail::Vertex v) const {
    const int node = (*graph)[v].node;
    return node < 0 || node == src_node || node == dst_node;
  }
};

struct LinkFilter {
  const detail::Graph* graph = nullptr;
  detail::Vertex src = 0;
  RouteOptions options;
  bool operator()(detail::Edge e) const {
    const auto kind = (*graph)[e].kind;
    if (options.avoid_nvlink && (kind == sim::LinkKind::NVLink || kind == sim::LinkKind::NVSwitch))
      return false;
    const detail::Vertex u = boost::source(e, *graph);
    return options.gpu_relay || u == src || (*graph)[u].kind != DeviceKind::Gpu;
  }
};

// Whether a NIC's leaf is a rail: it holds two or more NICs, all of one index in their machines
// (D-mod-k then spreads by machine, routing.cpp).
bool on_rail(const topology::Topology& t, DeviceId nic) {
  const auto& impl = t.impl();
  const auto local_of = [&](DeviceId n) {
    const auto& nics = impl.nics_by_node[static_cast<std::size_t>(*t.device(n).node)];
    return std::find(nics.begin(), nics.end(), n) - nics.begin();
  };
  std::optional<DeviceId> leaf;
  for (const DeviceId d : t.devices_of_kind(DeviceKind::NetworkSwitch))
    if (t.link_between(nic, d)) leaf = d;
  if (!leaf) return false;
  int count = 0;
  for (const DeviceId other : t.devices_of_kind(DeviceKind::Nic))
    if (t.link_between(other, *leaf)) {
      if (local_of(other) != local_of(nic)) return false;
      ++count;
    }
  return count > 1;
}

// The reference: full Dijkstra over the devices of the two machines and the fabric, then the walk
// back from `to` along tight links (D-mod-k by the destination NIC once past it, else the hash of
// routing.cpp).
// Nothing when `to` is unreachable.
std::optional<std::vector<sim::LinkId>> plain_route(const topology::Topology& t, DeviceId from,
                                                    DeviceId to, RouteOptions options) {
  const auto& impl = t.impl();
  const detail::Graph& g = impl.graph;
  const detail::Vertex src = from.value, dst = to.value;
  const LinkFilter lf{&g, src, options};
  const NodeFilter nf{&g, g[src].node, g[dst].node};
  boost::filtered_graph<detail::Graph, LinkFilter, NodeFilter> fg(g, lf, nf);
  std::vector<std::int64_t> dist(boost::num_vertices(g), detail::kInfiniteCost);
  boost::dijkstra_shortest_paths(
      fg, src,
      boost::weight_map(boost::get(&detail::EdgeProps::cost, g))
          .distance_map(
              boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g))));
  if (dist[dst] == detail::kInfiniteCost) return std::nullopt;
  std::vector<sim::LinkId> path;
  std::int64_t dest_nic = -1;
  for (detail::Vertex v = dst; v != src;) {
    if (dest_nic < 0 && g[v].kind == DeviceKind::Nic) {
      const auto node = static_cast<std::size_t>(g[v].node);
      const auto& nics = impl.nics_by_node[node];
      const auto local =
          std::find(nics.begin(), nics.end(), DeviceId{static_cast<std::uint32_t>(v)}) -
          nics.begin();
      dest_nic = static_cast<std::int64_t>(node * nics.size()) + local;
      if (on_rail(t, DeviceId{static_cast<std::uint32_t>(v)})) dest_nic = static_cast<std::int64_t>(node);
    }
    std::vector<detail::Edge> tight;
    for (const detail::Edge e : boost::make_iterator_range(boost::in_edges(v, g))) {
      const detail::Vertex u = boost::source(e, g);
      if (!nf(u) || !lf(e) || dist[u] == detail::kInfiniteCost) continue;
      if (dist[u] + g[e].cost == dist[v]) tight.push_back(e);
    }
    REQUIRE_FALSE(tight.empty());
    const detail::Edge chosen = tight.size() == 1 ? tight.front()
                                : dest_nic >= 0
                                    ? tight[static_cast<std::size_t>(dest_nic) % tight.size()]
                                    : tight[detail::tie_hash(src, dst, v) % tight.size()];
    path.push_back(g[chosen].link);
    v = boost::source(chosen, g);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

// Every GPU to every GPU, and every GPU to and from every NIC and switch, under the four
// RouteOptions: the topology's routes are the reference's. Returns how many routes were compared.
int check_all_routes(const topology::Topology& t) {
  std::vector<DeviceId> ends(t.gpus().begin(), t.gpus().end());
  for (const auto kind : {DeviceKind::Nic, DeviceKind::NetworkSwitch})
    for (const DeviceId d : t.devices_of_kind(kind)) ends.push_back(d);
  int compared = 0;
  for (const bool avoid_nvlink : {false, true})
    for (const bool gpu_relay : {false, true}) {
      const RouteOptions options{.avoid_nvlink = avoid_nvlink, .gpu_relay = gpu_relay};
      for (const DeviceId a : ends)
        for (const DeviceId b : ends) {
          if (a == b) continue;
          const bool gpu_pair = t.device(a).kind == DeviceKind::Gpu ||
                                t.device(b).kind == DeviceKind::Gpu;
          if (!gpu_pair) continue;
          const auto expected = plain_route(t, a, b, options);
          CAPTURE(t.device(a).name);
          CAPTURE(t.device(b).name);
          CAPTURE(avoid_nvlink);
          CAPTURE(gpu_relay);
          if (!expected) {
            CHECK_THROWS_AS(t.route(a, b, options), InputError);
          } else {
            const sim::Route r = t.route(a, b, options);
            const std::vector<sim::LinkId> got(r.begin(), r.end());
            CHECK(got == *expected);
          }
          ++compared;
        }
    }
  return compared;
}

std::vector<std::string> names(const topology::Topology& t, sim::Route r) {
  std::vector<std::string> out;
  for (const sim::LinkId l : r) out.push_back(t.links()[l].name);
  return out;
}

}  // namespace

TEST_CASE("route search: DGX-1 fat trees, leaves splitting machines, with and without oversubscription") {
  // leaf_radix 6 with 4 NICs a machine: machine 1's NICs sit on leaves 0 and 1, so its routes
  // leave by two leaves. Oversubscription 1.5: round(6 / 1.5) = 4 spines of 1 cable each; 2.5:
  // round(2.4) = 2 spines of 6 / (2.5 × 2) = 1.2 cables, one aggregate link each.
  for (const double over : {1.0, 1.5, 2.5}) {
    CAPTURE(over);
    const auto t = presets::cluster({.node = presets::Dgx1V100Params{},
                                     .nodes = 5,
                                     .oversubscription = over,
                                     .leaf_radix = 6});
    // 40 GPUs, 20 NICs, 4 leaves, spines: 6, 4, 2. GPU pairs 40 × 39, GPU↔NIC/switch pairs
    // 2 × 40 × (20 + 4 + spines), all four options.
    const int spines = over == 1.0 ? 6 : over == 1.5 ? 4 : 2;
    CHECK(check_all_routes(t) == 4 * (40 * 39 + 2 * 40 * (24 + spines)));
  }
}

TEST_CASE("route search: rail-optimized DGX-1s, NVSwitch, PCIe servers and DGX A100 clusters") {
  check_all_routes(presets::cluster({.node = presets::Dgx1V100Params{},
                                     .nodes = 6,
                                     .fabric = presets::Fabric::RailOptimized,
                                     .oversubscription = 2.0,
                                     .leaf_radix = 4}));
  check_all_routes(presets::cluster({.node = presets::NvswitchNodeParams{}, .nodes = 3}));
  check_all_routes(presets::cluster({.node = presets::PcieServerParams{},
                                     .nodes = 5,
                                     .oversubscription = 3.0,
                                     .leaf_radix = 4}));
  check_all_routes(presets::cluster({.node = presets::dgx_a100_params(), .nodes = 3}));
  // One machine: no fabric at all.
  check_all_routes(presets::dgx1_v100({}));
}

TEST_CASE("route search: a cheaper way through the destination machine back into the fabric") {
  // Machine 0 (a0, its NIC an) hangs off switch S1; machine 1's NICs bn1 and bn2 off S1 and S2,
  // joined inside machine 1 by its PCIe switch bp; S1–S2 is a slow cable (1 GB/s); GPU b0 of
  // machine 1 and GPU c0 of machine 2 plug into S2. Link costs (latency 0 + 1 MiB at the rate):
  // 12 GB/s 87.38 us, 1 GB/s 1048.58 us.
  // a0 → b0: a0 → an → S1 → bn1 → bp → bn2 → S2 → b0, 7 links of 87.38 us = 611.7 us, beats
  // a0 → an → S1 → S2 → b0 (3 × 87.38 + 1048.58 = 1310.7 us): the route leaves the fabric for machine 1 and
  // comes back, which the fabric's own costs do not know. a0 → c0: machine 1 is a third machine there, so the
  // slow cable: a0 → an → S1 → S2 → c0.
  const auto t = topology::parse_topology_yaml(R"(name: shortcut
nodes:
  - {name: a0, kind: gpu, node: 0}
  - {name: an, kind: nic, node: 0}
  - {name: b0, kind: gpu, node: 1}
  - {name: bn1, kind: nic, node: 1}
  - {name: bn2, kind: nic, node: 1}
  - {name: bp, kind: pcie-switch, node: 1}
  - {name: c0, kind: gpu, node: 2}
  - {name: S1, kind: switch}
  - {name: S2, kind: switch}
links:
  - {a: a0, b: an, kind: pcie, bandwidth: 12 GB/s}
  - {a: an, b: S1, kind: ib, bandwidth: 12 GB/s}
  - {a: S1, b: S2, kind: ib, bandwidth: 1 GB/s}
  - {a: bn1, b: S1, kind: ib, bandwidth: 12 GB/s}
  - {a: bn2, b: S2, kind: ib, bandwidth: 12 GB/s}
  - {a: bn1, b: bp, kind: pcie, bandwidth: 12 GB/s}
  - {a: bn2, b: bp, kind: pcie, bandwidth: 12 GB/s}
  - {a: b0, b: S2, kind: ib, bandwidth: 12 GB/s}
  - {a: c0, b: S2, kind: ib, bandwidth: 12 GB/s}
)");
  const auto id = [&t](const char* name) { return t.device_by_name(name); };
  CHECK(names(t, t.route(id("a0"), id("b0"))) ==
        std::vector<std::string>{"PCIe a0→an", "IB an→S1", "IB S1→bn1", "PCIe bn1→bp",
                                 "PCIe bp→bn2", "IB bn2→S2", "IB S2→b0"});
  CHECK(names(t, t.route(id("a0"), id("c0"))) ==
        std::vector<std::string>{"PCIe a0→an", "IB an→S1", "IB S1→S2", "IB S2→c0"});
  check_all_routes(t);
}

TEST_CASE("route search: machines joined directly, and a GPU reached only through another GPU") {
  // Machine 0's g0 and machine 1's h0 are cabled directly (no fabric on that path); the switch S
  // also joins them, more slowly. h1 hangs off h0 alone, so it is reachable only with gpu_relay.
  const auto t = topology::parse_topology_yaml(R"(name: direct
nodes:
  - {name: g0, kind: gpu, node: 0}
  - {name: n0, kind: nic, node: 0}
  - {name: h0, kind: gpu, node: 1}
  - {name: h1, kind: gpu, node: 1}
  - {name: n1, kind: nic, node: 1}
  - {name: S, kind: switch}
links:
  - {a: g0, b: h0, kind: generic, bandwidth: 25 GB/s}
  - {a: h0, b: h1, kind: nvlink, bandwidth: 25 GB/s}
  - {a: g0, b: n0, kind: pcie, bandwidth: 12 GB/s}
  - {a: h0, b: n1, kind: pcie, bandwidth: 12 GB/s}
  - {a: n0, b: S, kind: ib, bandwidth: 12 GB/s}
  - {a: n1, b: S, kind: ib, bandwidth: 12 GB/s}
)");
  const auto id = [&t](const char* name) { return t.device_by_name(name); };
  CHECK(names(t, t.route(id("g0"), id("h0"))) == std::vector<std::string>{"Link g0→h0"});
  CHECK_THROWS_AS(t.route(id("g0"), id("h1")), InputError);
  CHECK(names(t, t.route(id("g0"), id("h1"), {.gpu_relay = true})) ==
        std::vector<std::string>{"Link g0→h0", "NVLink h0→h1"});
  check_all_routes(t);
}

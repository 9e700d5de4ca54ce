// Topology costs at scale: building a cluster, finding the rings of an all-reduce over all its GPUs
// with every ring route (cold cache), the tree channels built on them, and looking routes up again
// (warm cache).
// Targets: 128 machines (1024 GPUs) build + rings + routes well under a second; at 2,048 DGX-1
// (16,384 GPUs) the routes of the rings, and of the trees, well under 0.5 s (BM_RingRoutes,
// BM_TreeRoutes: the topology is built outside the timed region, so they time routing alone).
#include <benchmark/benchmark.h>

#include "topology/cluster.h"
#include "topology/rings.h"
#include "topology/tree_channels.h"

using namespace hybridsim;
namespace presets = topology::presets;

namespace {

topology::Topology make(int nodes) {
  return presets::cluster({.node = presets::Dgx1V100Params{}, .nodes = nodes});
}

// The machines and fabrics of the routing benchmarks, by the benchmark's second argument.
topology::Topology make_kind(int nodes, int kind) {
  switch (kind) {
    case 1:  // rail-optimized, leaf uplinks oversubscribed 2:1
      return presets::cluster({.node = presets::Dgx1V100Params{},
                               .nodes = nodes,
                               .fabric = presets::Fabric::RailOptimized,
                               .oversubscription = 2.0});
    case 2:  // DGX A100: NVSwitch (ring order by route cost), one NIC per GPU
      return presets::cluster({.node = presets::dgx_a100_params(), .nodes = nodes});
    case 3:  // PCIe servers, fat tree oversubscribed 3:1
      return presets::cluster(
          {.node = presets::PcieServerParams{}, .nodes = nodes, .oversubscription = 3.0});
    default:  // DGX-1, non-blocking fat tree
      return make(nodes);
  }
}

constexpr const char* kKindNames[] = {"dgx1 fat tree", "dgx1 rail 2:1", "dgx-a100 fat tree",
                                      "pcie fat tree 3:1"};

void BM_BuildCluster(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(make(nodes).links().size());
  state.counters["gpus"] = 8.0 * nodes;
}
BENCHMARK(BM_BuildCluster)->Arg(16)->Arg(128)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_BuildAndRingRoutes(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  std::size_t routes = 0;
  for (auto _ : state) {
    const auto t = make(nodes);
    const auto plan = topology::find_rings(t, t.gpus());
    routes = t.cached_route_count();
    benchmark::DoNotOptimize(plan.routes.size());
  }
  state.counters["routes_computed"] = static_cast<double>(routes);
}
BENCHMARK(BM_BuildAndRingRoutes)->Arg(16)->Arg(128)->Arg(2048)->Unit(benchmark::kMillisecond);

// The ring search and every ring route on a freshly built topology (cold route cache); building
// the topology is not timed.
void BM_RingRoutes(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int kind = static_cast<int>(state.range(1));
  std::size_t routes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto t = make_kind(nodes, kind);
    state.ResumeTiming();
    const auto plan = topology::find_rings(t, t.gpus());
    routes = t.cached_route_count();
    benchmark::DoNotOptimize(plan.routes.size());
    state.PauseTiming();
    { const auto drop = std::move(t); }
    state.ResumeTiming();
  }
  state.SetLabel(kKindNames[kind]);
  state.counters["routes_computed"] = static_cast<double>(routes);
}
BENCHMARK(BM_RingRoutes)
    ->Args({128, 0})
    ->Args({2048, 0})
    ->Args({2048, 1})
    ->Args({2048, 2})
    ->Args({2048, 3})
    ->Unit(benchmark::kMillisecond);

// The rings, then the two binary trees per ring channel (their routes cross the fabric at every
// level of the trees), on a freshly built topology.
void BM_TreeRoutes(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  std::size_t routes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto t = make(nodes);
    state.ResumeTiming();
    const auto plan = topology::find_rings(t, t.gpus());
    const auto trees = topology::to_tree_channels(t, plan, t.gpus());
    routes = t.cached_route_count();
    benchmark::DoNotOptimize(trees.size());
    state.PauseTiming();
    { const auto drop = std::move(t); }
    state.ResumeTiming();
  }
  state.counters["routes_computed"] = static_cast<double>(routes);
}
BENCHMARK(BM_TreeRoutes)->Arg(128)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_CachedRouteLookup(benchmark::State& state) {
  const auto t = make(128);
  const auto plan = topology::find_rings(t, t.gpus());
  const auto& ring = plan.rings[0];
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(t.route(ring[i], ring[(i + 1) % ring.size()]).size());
    i = (i + 1) % ring.size();
  }
}
BENCHMARK(BM_CachedRouteLookup);

}  // namespace

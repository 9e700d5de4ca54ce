// Topology costs at scale: building a cluster of DGX-1s, finding the rings of an all-reduce over
// all its GPUs with every ring route (cold cache), and looking routes up again (warm cache).
// Target: 128 machines (1024 GPUs) build + rings + routes well under a second.
#include <benchmark/benchmark.h>

#include "topology/cluster.h"
#include "topology/rings.h"

using namespace hybridsim;
namespace presets = topology::presets;

namespace {

topology::Topology make(int nodes) {
  return presets::cluster({.node = presets::Dgx1V100Params{}, .nodes = nodes});
}

void BM_BuildCluster(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(make(nodes).links().size());
  state.counters["gpus"] = 8.0 * nodes;
}
BENCHMARK(BM_BuildCluster)->Arg(16)->Arg(128)->Unit(benchmark::kMillisecond);

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
BENCHMARK(BM_BuildAndRingRoutes)->Arg(16)->Arg(128)->Unit(benchmark::kMillisecond);

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

BENCHMARK_MAIN();

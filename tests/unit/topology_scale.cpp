// Scale: a 128-machine DGX-1 cluster (1024 GPUs) is built, ring-searched and routed for a ring
// all-reduce, and the routes come from the cache the second time (machines with the same wiring
// share a search). The CPU time is printed, not asserted: tests/bench/bench_routing.cpp times it.
#include <doctest/doctest.h>

#include <ctime>

#include "topology/cluster.h"
#include "topology/rings.h"

using namespace hybridsim;
namespace presets = topology::presets;

namespace {

// The time is reported, not asserted: speed targets live in benchmarks, not in tests that a slow
// or sanitized build would fail (an optimized build took about 0.08 s of CPU here).
constexpr int kNodes = 128;

double cpu_seconds_since(std::clock_t start) {
  return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
}

}  // namespace

TEST_CASE("scale: 1024-GPU DGX-1 cluster, build + rings + all their routes, with cached routes") {
  const std::clock_t start = std::clock();
  const auto t = presets::cluster({.node = presets::Dgx1V100Params{}, .nodes = kNodes});
  const auto plan = topology::find_rings(t, t.gpus());
  const double seconds = cpu_seconds_since(start);
  MESSAGE(kNodes, " × DGX-1: build, find_rings and ", plan.rings.size() * t.gpus().size(),
          " ring routes in ", seconds, " s of CPU (", t.cached_route_count(), " routes cached)");
  CHECK(t.gpus().size() == 8 * kNodes);
  CHECK(plan.rings.size() == 4);  // one channel per NIC of a machine
  for (const auto& ring : plan.rings) CHECK(ring.size() == t.gpus().size());
  // Asking again is a cache lookup: the same spans, and no new routes.
  const std::size_t cached = t.cached_route_count();
  for (std::size_t c = 0; c < plan.rings.size(); ++c) {
    const auto& ring = plan.rings[c];
    for (std::size_t i = 0; i < ring.size(); ++i)
      CHECK(t.route(ring[i], ring[(i + 1) % ring.size()]).data() == plan.routes[c][i].data());
  }
  CHECK(t.cached_route_count() == cached);
}

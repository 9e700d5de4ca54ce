// Scale: a 128-machine DGX-1 cluster (1024 GPUs) is built, ring-searched and routed for a ring
// all-reduce well within a second (routes are cached; machines with the same wiring share a
// search).
#include <doctest/doctest.h>

#include <chrono>

#include "topology/cluster.h"
#include "topology/rings.h"

using namespace hybridsim;
namespace presets = topology::presets;

TEST_CASE("scale: 1024-GPU DGX-1 cluster, build + rings + all their routes under a second") {
  const auto start = std::chrono::steady_clock::now();
  const auto t = presets::cluster({.node = presets::Dgx1V100Params{}, .nodes = 128});
  const auto plan = topology::find_rings(t, t.gpus());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("128 × DGX-1: build, find_rings and ", plan.rings.size() * 1024, " ring routes in ",
          seconds, " s (", t.cached_route_count(), " routes cached)");
  CHECK(t.gpus().size() == 1024);
  CHECK(plan.rings.size() == 6);
  for (const auto& ring : plan.rings) CHECK(ring.size() == 1024);
  CHECK(seconds < 1.0);
  // Asking again is a cache lookup.
  const auto again = std::chrono::steady_clock::now();
  for (const auto& ring : plan.rings)
    for (std::size_t i = 0; i < ring.size(); ++i) t.route(ring[i], ring[(i + 1) % ring.size()]);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count() < 0.05);
}

// Ring search: NVLink Hamiltonian rings on a DGX-1 with the channel count that saturates NVLink,
// PCIe rings, NVSwitch and validation topologies, and rings across machines through the NICs.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "sim/error.h"
#include "topology/builder.h"
#include "topology/cluster.h"
#include "topology/rings.h"

using namespace hybridsim;
using topology::DeviceId;
using topology::DeviceKind;
namespace presets = topology::presets;

namespace {

// Every ring visits every GPU of `gpus` exactly once, and has one route per step.
void check_hamiltonian(const topology::RingPlan& plan, std::span<const DeviceId> gpus) {
  REQUIRE(plan.routes.size() == plan.rings.size());
  for (std::size_t c = 0; c < plan.rings.size(); ++c) {
    std::vector<DeviceId> sorted = plan.rings[c], expected(gpus.begin(), gpus.end());
    std::sort(sorted.begin(), sorted.end());
    std::sort(expected.begin(), expected.end());
    CHECK(sorted == expected);
    CHECK(plan.routes[c].size() == plan.rings[c].size());
  }
}

bool uses_kind(const topology::Topology& t, sim::Route r, sim::LinkKind kind) {
  return std::any_of(r.begin(), r.end(), [&](sim::LinkId l) { return t.links()[l].kind == kind; });
}

}  // namespace

TEST_CASE("find_rings: DGX-1 gets 6 NVLink-only rings that use every NVLink direction once") {
  const auto t = presets::dgx1_v100();
  const auto plan = topology::find_rings(t, t.gpus());
  // 24 NVLinks, 6 per GPU: 3 edge-disjoint Hamiltonian cycles (8 links each), each run both ways
  // (a ring and its reverse use opposite directions of the links): 6 channels of 25 GB/s each.
  CHECK(plan.saturating_channels == 6);
  REQUIRE(plan.rings.size() == 6);
  check_hamiltonian(plan, t.gpus());
  std::map<sim::LinkId, int> load;
  for (std::size_t c = 0; c < 6; ++c) {
    CHECK(plan.rings[c].front() == t.gpu(0));
    for (const auto& r : plan.routes[c]) {
      REQUIRE(r.size() == 1);  // a direct NVLink, no relays, no PCIe
      CHECK(t.links()[r[0]].kind == sim::LinkKind::NVLink);
      ++load[r[0]];
    }
  }
  // Each directed NVLink carries as many channels as it has links: 2 on doubled pairs, 1 on single.
  CHECK(load.size() == 32);
  for (const auto& [link, channels] : load) CHECK(channels == t.link_ends(link).count);
  // Odd channels are their even neighbour reversed.
  std::vector<DeviceId> reversed{plan.rings[0].front()};
  reversed.insert(reversed.end(), plan.rings[0].rbegin(), plan.rings[0].rend() - 1);
  CHECK(plan.rings[1] == reversed);
  // More channels reuse the base rings in order.
  const auto eight = topology::find_rings(t, t.gpus(), {.channels = 8});
  REQUIRE(eight.rings.size() == 8);
  CHECK(eight.rings[6] == plan.rings[0]);
}

TEST_CASE("find_rings: forcing PCIe gives rings without NVLink, at a fraction of the bandwidth") {
  const auto t = presets::dgx1_v100();
  const auto plan = topology::find_rings(t, t.gpus(), {.pcie_only = true});
  CHECK(plan.saturating_channels == 1);  // each GPU has one x16 link to its switch
  CHECK(plan.route_options.avoid_nvlink);
  check_hamiltonian(plan, t.gpus());
  sim::Bandwidth slowest = sim::Bandwidth::gb_per_second(1000);
  for (const auto& r : plan.routes[0]) {
    CHECK_FALSE(uses_kind(t, r, sim::LinkKind::NVLink));
    slowest = std::min(slowest, t.route_bandwidth(r));
  }
  // Ring bandwidth: 1 channel × 12 GB/s over PCIe vs 6 channels × 25 GB/s over NVLink.
  CHECK(slowest == sim::Bandwidth::gb_per_second(12));
  // The nearest-neighbour order keeps switch-mates together: 0 1 | 2 3 | ... (PLX pairs).
  const std::vector<DeviceId> expected(t.gpus().begin(), t.gpus().end());
  CHECK(plan.rings[0] == expected);
}

TEST_CASE("find_rings: a subset of a DGX-1, NVSwitch, PCIe and validation topologies") {
  const auto dgx = presets::dgx1_v100();
  // GPUs 0-3: pairs 0-3, 1-2, 2-3 doubled, 0-1, 0-2, 1-3 single: degrees 4, 4, 5, 5 → 2 cycles.
  const std::vector<DeviceId> four(dgx.gpus().begin(), dgx.gpus().begin() + 4);
  const auto quad = topology::find_rings(dgx, four);
  CHECK(quad.saturating_channels == 4);
  check_hamiltonian(quad, four);

  const auto nvs = presets::nvswitch_node();
  const auto n = topology::find_rings(nvs, nvs.gpus());
  CHECK(n.saturating_channels == 6);  // 6 NVLinks into the switch per GPU
  for (const auto& r : n.routes[0]) CHECK(r.size() == 2);

  const auto pcie = presets::pcie_server();
  const auto p = topology::find_rings(pcie, pcie.gpus());
  CHECK(p.saturating_channels == 1);
  check_hamiltonian(p, pcie.gpus());

  const auto ring = presets::ideal_ring({.gpus = 8});
  const auto r = topology::find_rings(ring, ring.gpus());
  CHECK(r.saturating_channels == 2);  // the ring itself, both ways
  for (const auto& route : r.routes[0]) CHECK(route.size() == 1);

  // K8 splits into 3 Hamiltonian cycles and a perfect matching: 6 channels.
  const auto full = presets::fully_connected({.gpus = 8});
  CHECK(topology::find_rings(full, full.gpus()).saturating_channels == 6);

  const std::vector<DeviceId> one{dgx.gpu(3)};
  const auto single = topology::find_rings(dgx, one);
  CHECK(single.rings[0] == one);
  CHECK(single.routes[0][0].empty());
}

namespace {

// Checks the rings of a DGX-1 cluster as NCCL builds them: one channel per NIC; every channel
// enters and leaves each machine at GPUs next to one NIC (one PCIe switch hop), NVLink inside; and
// every NIC carries exactly one channel out of its machine and one into it.
void check_nic_balance(int nodes) {
  const auto t = presets::cluster({.node = presets::Dgx1V100Params{}, .nodes = nodes});
  const auto plan = topology::find_rings(t, t.gpus());
  CHECK(plan.saturating_channels == 4);  // 4 EDR NICs per DGX-1
  REQUIRE(plan.rings.size() == 4);
  check_hamiltonian(plan, t.gpus());
  std::map<DeviceId, int> out_use, in_use;
  for (std::size_t c = 0; c < plan.rings.size(); ++c) {
    const auto& ring = plan.rings[c];
    int crossings = 0;
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const auto a = ring[i], b = ring[(i + 1) % ring.size()];
      const auto& route = plan.routes[c][i];
      if (t.device(a).node == t.device(b).node) {
        REQUIRE(route.size() == 1);
        CHECK(t.links()[route[0]].kind == sim::LinkKind::NVLink);
        continue;
      }
      ++crossings;
      // The ring leaves and enters at GPUs next to the same NIC index (one PCIe switch hop).
      const auto out_nic = *t.nic_for_gpu(a), in_nic = *t.nic_for_gpu(b);
      CHECK(t.device(out_nic).name.substr(3) == t.device(in_nic).name.substr(3));
      CHECK(route.size() == 6);  // GPU→PLX→NIC→leaf→NIC→PLX→GPU
      CHECK(t.link_ends(route[1]).to == out_nic);
      CHECK(t.link_ends(route[4]).to == t.link_ends(route[5]).from);
      ++out_use[out_nic];
      ++in_use[in_nic];
    }
    CHECK(crossings == nodes);  // machine 0 → 1 → ... → 0
  }
  // 4 channels × `nodes` crossings over nodes × 4 NICs: each NIC once out, once in.
  CHECK(out_use.size() == static_cast<std::size_t>(4 * nodes));
  CHECK(in_use.size() == static_cast<std::size_t>(4 * nodes));
  for (const auto& [nic, uses] : out_use) CHECK(uses == 1);
  for (const auto& [nic, uses] : in_use) CHECK(uses == 1);
}

}  // namespace

TEST_CASE("find_rings: the ideal ring of 65,536 GPUs, searched over its links, not all pairs") {
  // The search keeps the direct links as adjacency lists and walks depth-first on a stack of its
  // own: 65,536 GPUs are a path that deep (an N × N matrix took 3.2 GB at 16,384, issue 31).
  const auto ring = presets::ideal_ring({.gpus = 65536});
  const auto plan = topology::find_rings(ring, ring.gpus());
  CHECK(plan.saturating_channels == 2);  // the ring itself, both ways
  check_hamiltonian(plan, ring.gpus());
  for (std::size_t i = 0; i < plan.rings[0].size(); ++i) {
    CHECK(plan.rings[0][i] == ring.gpus()[i]);  // GPU i's successor is GPU i + 1, over one link
    CHECK(plan.routes[0][i].size() == 1);
  }
}

TEST_CASE("find_rings: a cycle search out of budget falls back to an order over routes") {
  // 64 GPUs need 64 DFS steps for the first cycle; 10 find none, so no direct cycle is used and
  // the ring is the nearest-neighbour order over routes: still every GPU once, one channel.
  const auto ring = presets::ideal_ring({.gpus = 64});
  const auto plan = topology::find_rings(ring, ring.gpus(), {.search_budget = 10});
  CHECK(plan.saturating_channels == 1);
  check_hamiltonian(plan, ring.gpus());
  const auto full = topology::find_rings(ring, ring.gpus());
  CHECK(full.saturating_channels == 2);
}

TEST_CASE("find_rings: across 2 and 4 DGX-1s, one channel per NIC, NVLink inside each machine") {
  check_nic_balance(2);
  check_nic_balance(4);
}

TEST_CASE("find_rings: invalid input") {
  const auto t = presets::dgx1_v100();
  CHECK_THROWS_AS(topology::find_rings(t, {}), InputError);
  const std::vector<DeviceId> cpu{t.device_by_name("CPU0")};
  CHECK_THROWS_WITH_AS(topology::find_rings(t, cpu), doctest::Contains("not a GPU"), InputError);
  const std::vector<DeviceId> twice{t.gpu(1), t.gpu(1)};
  CHECK_THROWS_WITH_AS(topology::find_rings(t, twice), doctest::Contains("listed twice"),
                       InputError);
  CHECK_THROWS_AS(topology::find_rings(t, t.gpus(), {.channels = 0}), InputError);
  // GPUs joined only by NVLink cannot be forced onto PCIe: no route.
  topology::TopologyBuilder b;
  const auto g0 = b.add_device({.name = "GPU0", .kind = DeviceKind::Gpu});
  const auto g1 = b.add_device({.name = "GPU1", .kind = DeviceKind::Gpu});
  b.connect(g0, g1,
            {.kind = sim::LinkKind::NVLink, .bandwidth = sim::Bandwidth::gb_per_second(25)});
  const auto nv = std::move(b).build();
  CHECK_THROWS_WITH_AS(topology::find_rings(nv, nv.gpus(), {.pcie_only = true}),
                       doctest::Contains("no route from GPU0 to GPU1 avoiding NVLink"), InputError);
}

// Every preset: connected (every GPU routes to every GPU along contiguous links), the NVSwitch and
// PCIe machines' shapes, the validation topologies, the name factory, and invalid parameters.
#include <doctest/doctest.h>

#include <set>

#include <string>
#include <vector>

#include "sim/error.h"
#include "topology/preset_registry.h"

using namespace hybridsim;
using topology::DeviceKind;
namespace presets = topology::presets;

namespace {

// Checks a route is a contiguous path of links from `a` to `b`.
void check_path(const topology::Topology& t, topology::DeviceId a, topology::DeviceId b,
                sim::Route r) {
  REQUIRE_FALSE(r.empty());
  CHECK(t.link_ends(r.front()).from == a);
  CHECK(t.link_ends(r.back()).to == b);
  for (std::size_t i = 1; i < r.size(); ++i)
    CHECK(t.link_ends(r[i - 1]).to == t.link_ends(r[i]).from);
}

void check_connected(const topology::Topology& t, topology::RouteOptions options = {}) {
  CAPTURE(t.name());
  for (const auto a : t.gpus())
    for (const auto b : t.gpus())
      if (a != b) check_path(t, a, b, t.route(a, b, options));
}

}  // namespace

TEST_CASE("presets: every GPU routes to every GPU") {
  check_connected(presets::dgx1_v100());
  check_connected(presets::nvswitch_node());
  check_connected(presets::pcie_server());
  check_connected(presets::fully_connected({.gpus = 5}));
  // In a ring only neighbours are linked: the rest need GPUs to forward (gpu_relay).
  check_connected(presets::ideal_ring({.gpus = 6}), {.avoid_nvlink = false, .gpu_relay = true});
  check_connected(presets::cluster({.node = presets::Dgx1V100Params{}, .nodes = 3}));
  check_connected(presets::cluster({.node = presets::Dgx1V100Params{},
                                    .nodes = 5,
                                    .fabric = presets::Fabric::RailOptimized,
                                    .leaf_radix = 2}));
  check_connected(presets::cluster(
      {.node = presets::NvswitchNodeParams{.gpus = 4, .nics = 2}, .nodes = 3, .leaf_radix = 2}));
  check_connected(presets::cluster({.node = presets::PcieServerParams{.gpus = 3}, .nodes = 2}));
  // Without NVLink the DGX-1 is still connected over PCIe and QPI.
  check_connected(presets::dgx1_v100(), {.avoid_nvlink = true, .gpu_relay = false});
}

TEST_CASE("nvswitch_node: every GPU pair goes GPU → NVSwitch → GPU at the full per-GPU bandwidth") {
  const auto t = presets::nvswitch_node();
  CHECK(t.gpus().size() == 16);
  CHECK(t.devices_of_kind(DeviceKind::Nic).size() == 8);
  CHECK(t.devices_of_kind(DeviceKind::NvSwitch).size() == 1);
  const auto r = t.route(t.gpu(3), t.gpu(12));
  REQUIRE(r.size() == 2);
  for (const auto l : r) {
    CHECK(t.links()[l].kind == sim::LinkKind::NVSwitch);
    // 6 NVLinks × 25 GB/s into the switch (hardware.md: 150 GB/s per direction per V100).
    CHECK(t.links()[l].bandwidth == sim::Bandwidth::gb_per_second(150));
    CHECK(t.link_ends(l).count == 6);
  }
  CHECK(t.links()[r[0]].name == "NVSwitch GPU3→NVSwitch");
  // Two GPUs and one NIC per PCIe switch.
  CHECK(t.device(*t.nic_for_gpu(t.gpu(5))).name == "NIC2");
}

TEST_CASE("pcie_server: no NVLink, switch-mates meet at their switch, others cross the CPUs") {
  const auto t = presets::pcie_server();
  for (const auto& spec : t.links().all()) CHECK(spec.kind != sim::LinkKind::NVLink);
  CHECK(t.route(t.gpu(0), t.gpu(1)).size() == 2);  // GPU0 → PLX0 → GPU1
  CHECK(t.route(t.gpu(0), t.gpu(2)).size() == 4);  // GPU0 → PLX0 → CPU0 → PLX1 → GPU2
  CHECK(t.route(t.gpu(0), t.gpu(7)).size() == 5);  // ... → CPU0 → QPI → CPU1 → ...
}

TEST_CASE("ideal_ring and fully_connected: the links of a validation topology") {
  const auto ring =
      presets::ideal_ring({.gpus = 8, .bandwidth = sim::Bandwidth::gb_per_second(10)});
  CHECK(ring.links().size() == 16);  // 8 neighbour pairs, both directions
  CHECK(ring.links()[0].name == "Link GPU0→GPU1");
  CHECK(ring.links()[1].name == "Link GPU1→GPU0");
  CHECK(ring.link_between(ring.gpu(7), ring.gpu(0)));
  CHECK_THROWS_AS(ring.route(ring.gpu(0), ring.gpu(2)), InputError);  // GPUs do not relay
  CHECK(presets::ideal_ring({.gpus = 2}).links().size() == 2);
  const auto full = presets::fully_connected({.gpus = 6});
  CHECK(full.links().size() == 30);  // 6 · 5 directed links
  CHECK(full.route(full.gpu(1), full.gpu(4)).size() == 1);
}

TEST_CASE("presets: invalid parameters are rejected with the preset and field named") {
  CHECK_THROWS_WITH_AS(presets::dgx1_v100({.nvlink_bandwidth = sim::Bandwidth{}}),
                       doctest::Contains("dgx1_v100: nvlink_bandwidth must be a positive"),
                       InputError);
  CHECK_THROWS_WITH_AS(presets::dgx1_v100({.pcie_bandwidth = sim::Bandwidth{}}),
                       doctest::Contains("pcie_bandwidth"), InputError);
  CHECK_THROWS_WITH_AS(presets::dgx1_v100({.nics = 5}), doctest::Contains("nics must be in [0, 4]"),
                       InputError);
  CHECK_THROWS_WITH_AS(presets::dgx1_v100({.nvlink_latency = sim::Time::ns(-1)}),
                       doctest::Contains("nvlink_latency"), InputError);
  CHECK_THROWS_WITH_AS(presets::nvswitch_node({.gpus = 0}),
                       doctest::Contains("nvswitch_node: gpus must be in [1"), InputError);
  CHECK_THROWS_WITH_AS(presets::nvswitch_node({.nvlink_bandwidth = sim::Bandwidth{}}),
                       doctest::Contains("nvswitch_node: nvlink_bandwidth must be a positive"), InputError);
  CHECK_THROWS_WITH_AS(presets::pcie_server({.gpus = 0}), doctest::Contains("pcie_server: gpus"),
                       InputError);
  CHECK_THROWS_WITH_AS(presets::pcie_server({.gpus_per_pcie_switch = 0}),
                       doctest::Contains("gpus_per_pcie_switch"), InputError);
  CHECK_THROWS_WITH_AS(presets::ideal_ring({.gpus = 1}), doctest::Contains("ideal_ring: gpus"),
                       InputError);
  CHECK_THROWS_WITH_AS(presets::ideal_ring({.bandwidth = sim::Bandwidth{}}),
                       doctest::Contains("ideal_ring: bandwidth"), InputError);
  CHECK_THROWS_WITH_AS(presets::fully_connected({.gpus = 0}),
                       doctest::Contains("fully_connected: gpus"), InputError);
  CHECK_THROWS_WITH_AS(presets::fully_connected({.bandwidth = sim::Bandwidth{}}),
                       doctest::Contains("fully_connected: bandwidth"), InputError);
}

TEST_CASE("preset registry: names, clusters, and errors listing the valid names") {
  // Eight presets; dgx2 also answers to nvswitch, so nine accepted names, aliases after their preset.
  CHECK(topology::presets_list().size() == 8);
  CHECK(topology::preset_name_list() ==
        "dgx1-v100, dgx2, nvswitch, dgx-a100, dgx-h100, hgx-h200, pcie-server, ideal-ring, fully-connected");
  CHECK(topology::cluster_preset_name_list() ==
        "dgx1-v100, dgx2, nvswitch, dgx-a100, dgx-h100, hgx-h200 or pcie-server");
  CHECK(&topology::preset_by_name("nvswitch") == &topology::preset_by_name("dgx2"));
  CHECK(topology::build_cluster({.preset = "dgx1-v100"}).gpus().size() == 8);
  CHECK(topology::build_cluster({.preset = "dgx2"}).gpus().size() == 16);
  CHECK(topology::build_cluster({.preset = "nvswitch"}).name() == "dgx2");
  CHECK(topology::build_cluster({.preset = "pcie-server", .gpus_per_node = 4}).gpus().size() == 4);
  // An ideal ring of 3 GPUs: 3 duplex links = 6 directed links.
  CHECK(topology::build_cluster({.preset = "ideal-ring", .gpus_per_node = 3}).links().size() == 6);
  const auto c = topology::build_cluster({.preset = "dgx1-v100", .nodes = 3});
  CHECK(c.gpus().size() == 24);
  CHECK(c.device(c.gpu(23)).name == "n2.GPU7");
  CHECK(c.name() == "3 × dgx1-v100 (fat-tree)");
  CHECK_THROWS_WITH_AS(topology::build_cluster({.preset = "dgx3"}),
                       doctest::Contains("expected one of dgx1-v100, dgx2"), InputError);
  CHECK_THROWS_WITH_AS(topology::build_cluster({.preset = "dgx1-v100", .gpus_per_node = 4}),
                       "gpus_per_node: preset dgx1-v100 has exactly 8 GPUs, got 4; expected auto or 8",
                       InputError);
  CHECK_THROWS_WITH_AS(topology::build_cluster({.preset = "ideal-ring", .nodes = 2}),
                       "nodes: preset ideal-ring is a single validation machine, got 2 nodes; expected 1",
                       InputError);
  CHECK_THROWS_WITH_AS(topology::build_cluster({.preset = "fully-connected", .gpus_per_node = 600}),
                       doctest::Contains("fully-connected takes 1 to 512 GPUs per machine, got 600"),
                       InputError);
  CHECK_THROWS_AS(topology::build_cluster({.preset = "dgx2", .nodes = 0}), InputError);
  topology::ClusterSpec nvswitch_on_dgx1{.preset = "dgx1-v100"};
  nvswitch_on_dgx1.links[sim::LinkKind::NVSwitch].bandwidth = sim::Bandwidth::gb_per_second(50);
  CHECK_THROWS_WITH_AS(topology::build_cluster(nvswitch_on_dgx1),
                       "links.nvswitch: preset dgx1-v100 has no nvswitch links; expected overrides of "
                       "its link kinds: nvlink, pcie, cpu, infiniband",
                       InputError);
}

TEST_CASE("preset registry: each preset's declared link kinds are the kinds it builds") {
  for (const topology::PresetInfo& p : topology::presets_list()) {
    CAPTURE(p.name);
    const auto t =
        topology::build_cluster({.preset = std::string(p.name), .nodes = p.forms_clusters ? 2 : 1});
    std::set<sim::LinkKind> built;
    for (const auto& l : t.links().all()) built.insert(l.kind);
    const std::set<sim::LinkKind> declared(p.link_kinds.begin(), p.link_kinds.end());
    CHECK(built == declared);
    CHECK(static_cast<int>(topology::build_cluster({.preset = std::string(p.name)}).gpus().size()) ==
          p.gpus.default_count);
  }
}

TEST_CASE("preset registry: link overrides reach the links, per physical link") {
  // dgx2: each GPU has 6 NVLinks into the switch; 50 GB/s per link gives one GPU→switch link of
  // 6 × 50 = 300 GB/s, and its latency is the override's.
  topology::ClusterSpec spec{.preset = "dgx2", .gpus_per_node = 4};
  spec.links[sim::LinkKind::NVSwitch] = {.bandwidth = sim::Bandwidth::gb_per_second(50),
                                         .latency = sim::Time::ns(100)};
  const auto t = topology::build_cluster(spec);
  const auto up = t.out_links(t.gpu(0));
  bool seen = false;
  for (const sim::LinkId l : up)
    if (t.links()[l].kind == sim::LinkKind::NVSwitch) {
      CHECK(t.links()[l].bandwidth == sim::Bandwidth::gb_per_second(300));
      CHECK(t.links()[l].latency == sim::Time::ns(100));
      CHECK(t.link_ends(l).count == 6);
      seen = true;
    }
  CHECK(seen);
  // InfiniBand on a 2-node DGX-1 cluster: every IB link at the override.
  topology::ClusterSpec ib{.preset = "dgx1-v100", .nodes = 2};
  ib.links[sim::LinkKind::InfiniBand].bandwidth = sim::parse_bandwidth("200 Gb/s");
  CHECK(topology::ib_bandwidth_of(ib) == sim::Bandwidth::bytes_per_second(25'000'000'000));
  const auto two = topology::build_cluster(ib);
  for (const auto& l : two.links().all())
    if (l.kind == sim::LinkKind::InfiniBand) CHECK(l.bandwidth.bytes_per_second() % 25'000'000'000 == 0);
}

// Clusters: machines joined by a fat tree or a rail-optimized fabric; inter-node routes, leaf
// uplink bandwidth under oversubscription, and deterministic spreading over spines.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/error.h"
#include "topology/cluster.h"

using namespace hybridsim;
using topology::DeviceKind;
namespace presets = topology::presets;

namespace {

std::vector<std::string> names(const topology::Topology& t, sim::Route r) {
  std::vector<std::string> out;
  for (const sim::LinkId l : r) out.push_back(t.links()[l].name);
  return out;
}

// Sum of the bandwidths of the links from `device` to network switches named like `prefix*`.
std::int64_t uplink_bytes_per_second(const topology::Topology& t, std::string_view device,
                                     std::string_view prefix) {
  std::int64_t sum = 0;
  for (const auto l : t.out_links(t.device_by_name(device)))
    if (t.device(t.link_ends(l).to).name.starts_with(prefix))
      sum += t.links()[l].bandwidth.bytes_per_second();
  return sum;
}

}  // namespace

TEST_CASE("cluster: two DGX-1s route GPU traffic PCIe → NIC → leaf → NIC → PCIe (GPUDirect RDMA)") {
  const auto t = presets::cluster({.node = presets::Dgx1V100Params{}, .nodes = 2});
  CHECK(t.gpus().size() == 16);
  CHECK(t.node_count() == 2);
  CHECK(t.device(t.gpu(8)).name == "n1.GPU0");
  CHECK(t.device(t.gpu(8)).node == 1);
  CHECK(t.device(t.gpu(13)).local_gpu == 5);
  // 8 NICs fit one 16-port leaf: no spines.
  CHECK(t.devices_of_kind(DeviceKind::NetworkSwitch).size() == 1);
  const std::vector<std::string> expected{"PCIe n0.GPU2→n0.PLX1", "PCIe n0.PLX1→n0.NIC1",
                                          "IB n0.NIC1→leaf0",     "IB leaf0→n1.NIC1",
                                          "PCIe n1.NIC1→n1.PLX1", "PCIe n1.PLX1→n1.GPU3"};
  CHECK(names(t, t.route(t.device_by_name("n0.GPU2"), t.device_by_name("n1.GPU3"))) == expected);
  // Inside a machine, NVLink as before; GPU0→GPU5 still crosses QPI, not the fabric.
  CHECK(names(t, t.route(t.gpu(8), t.gpu(11))) ==
        std::vector<std::string>{"NVLink n1.GPU0→n1.GPU3"});
  const auto r = t.route(t.gpu(0), t.gpu(5));
  CHECK(r.size() == 5);
  CHECK(t.links()[r[2]].name == "QPI n0.CPU0→n0.CPU1");
  // EDR: 100 Gb/s = 12.5 GB/s per NIC port.
  const auto nic_link = t.link_between(t.device_by_name("n1.NIC3"), t.device_by_name("leaf0"));
  REQUIRE(nic_link);
  CHECK(t.links()[*nic_link].bandwidth == sim::Bandwidth::bytes_per_second(12'500'000'000));
}

TEST_CASE("cluster: fat-tree oversubscription sets the leaf uplink bandwidth") {
  // 8 DGX-1 × 4 NICs = 32 NIC ports over 8-port leaves: 4 leaves. Each leaf's downlinks carry
  // 8 × 12.5 = 100 GB/s, so its uplinks carry 100 / oversubscription GB/s in all.
  for (const double o : {1.0, 2.0, 4.0}) {
    const auto t = presets::cluster(
        {.node = presets::Dgx1V100Params{}, .nodes = 8, .oversubscription = o, .leaf_radix = 8});
    CAPTURE(o);
    CHECK(t.devices_of_kind(DeviceKind::NetworkSwitch).size() ==
          4 + static_cast<std::size_t>(8 / o));  // spines: round(8 / o), one cable each
    for (const char* leaf : {"leaf0", "leaf3"})
      CHECK(uplink_bytes_per_second(t, leaf, "spine") == static_cast<std::int64_t>(100e9 / o));
  }
  // Oversubscription 3 over 2 spines: 100/3 GB/s split in two aggregate links of 16.67 GB/s.
  const auto t = presets::cluster({.node = presets::Dgx1V100Params{},
                                   .nodes = 8,
                                   .oversubscription = 3.0,
                                   .leaf_radix = 8,
                                   .spines = 2});
  const auto up = t.link_between(t.device_by_name("leaf1"), t.device_by_name("spine1"));
  REQUIRE(up);
  CHECK(t.links()[*up].bandwidth == sim::Bandwidth::bytes_per_second(16'666'666'667));
  CHECK(t.link_ends(*up).count == 1);
}

TEST_CASE("cluster: equal-cost spine routes are spread deterministically") {
  const presets::ClusterParams p{
      .node = presets::Dgx1V100Params{}, .nodes = 8, .leaf_radix = 8, .spines = 4};
  const auto t = presets::cluster(p);
  const auto again = presets::cluster(p);
  std::set<std::string> spines_used;
  int cross_leaf = 0;
  // Machines 0–1 are on leaf0, 6–7 on leaf3: every route between them crosses one spine.
  for (int a = 0; a < 16; ++a)
    for (int b = 48; b < 64; ++b) {
      const auto r = t.route(t.gpu(a), t.gpu(b));
      std::vector<sim::LinkId> ids(r.begin(), r.end());
      const auto r2 = again.route(again.gpu(a), again.gpu(b));
      CHECK(ids == std::vector<sim::LinkId>(r2.begin(), r2.end()));  // same choice every build
      int spines = 0;
      for (const auto l : r) {
        const auto& to = t.device(t.link_ends(l).to);
        if (to.name.starts_with("spine")) {
          ++spines;
          spines_used.insert(to.name);
        }
      }
      CHECK(spines == 1);
      ++cross_leaf;
    }
  CHECK(cross_leaf == 256);
  // A hash of (source, destination) picks among the 4 spines: 256 pairs use all of them.
  CHECK(spines_used.size() == 4);
}

TEST_CASE("cluster: rail-optimized puts NIC k of every machine on rail k") {
  const auto t = presets::cluster(
      {.node = presets::Dgx1V100Params{}, .nodes = 4, .fabric = presets::Fabric::RailOptimized});
  // 4 rails × ceil(4 / 16) leaves; spines join the rails.
  CHECK(t.find_device("leaf3"));
  CHECK_FALSE(t.find_device("leaf4"));
  for (int n = 0; n < 4; ++n)
    for (int k = 0; k < 4; ++k) {
      const std::string nic = "n" + std::to_string(n) + ".NIC" + std::to_string(k);
      CHECK(t.link_between(t.device_by_name(nic), t.device_by_name("leaf" + std::to_string(k))));
    }
  // Same rail: the route stays on rail 1's leaf (no spine).
  const std::vector<std::string> expected{"PCIe n0.GPU3→n0.PLX1", "PCIe n0.PLX1→n0.NIC1",
                                          "IB n0.NIC1→leaf1",     "IB leaf1→n3.NIC1",
                                          "PCIe n3.NIC1→n3.PLX1", "PCIe n3.PLX1→n3.GPU2"};
  CHECK(names(t, t.route(t.device_by_name("n0.GPU3"), t.device_by_name("n3.GPU2"))) == expected);
}

TEST_CASE("cluster: invalid parameters are rejected with the field named") {
  using presets::ClusterParams;
  CHECK_THROWS_WITH_AS(presets::cluster({.nodes = 0}), doctest::Contains("nodes"), InputError);
  CHECK_THROWS_WITH_AS(presets::cluster({.oversubscription = 0.5}),
                       doctest::Contains("oversubscription"), InputError);
  CHECK_THROWS_WITH_AS(presets::cluster({.ib_bandwidth = sim::Bandwidth{}}),
                       doctest::Contains("ib_bandwidth"), InputError);
  CHECK_THROWS_WITH_AS(presets::cluster({.leaf_radix = 0}), doctest::Contains("leaf_radix"),
                       InputError);
  CHECK_THROWS_WITH_AS(presets::cluster({.node = presets::PcieServerParams{.nics = 0}}),
                       doctest::Contains("NIC"), InputError);
  CHECK_THROWS_WITH_AS(presets::cluster({.node = presets::Dgx1V100Params{.nvlink_bandwidth = {}}}),
                       doctest::Contains("nvlink_bandwidth"), InputError);
  CHECK(presets::parse_fabric("rail") == presets::Fabric::RailOptimized);
  CHECK_THROWS_WITH_AS(presets::parse_fabric("torus"), doctest::Contains("fat-tree"), InputError);
}

TEST_CASE(
    "cluster: leaf_count is the leaves the fabric builds, and with one there is no spine at any ratio") {
  // Fat tree: the NICs in order, leaf_radix a leaf (2 DGX H100: 16 NICs, one leaf; 3: 24, two).
  CHECK(presets::leaf_count(presets::Fabric::FatTree, 2, 8, 16) == 1);
  CHECK(presets::leaf_count(presets::Fabric::FatTree, 3, 8, 16) == 2);
  CHECK(presets::leaf_count(presets::Fabric::FatTree, 4, 4, 16) == 1);  // 4 DGX-1, 4 NICs each
  CHECK(presets::leaf_count(presets::Fabric::FatTree, 5, 4, 16) == 2);
  // Rails: ceil(nodes / leaf_radix) leaves on each of the NICs' rails.
  CHECK(presets::leaf_count(presets::Fabric::RailOptimized, 2, 8, 16) == 8);
  CHECK(presets::leaf_count(presets::Fabric::RailOptimized, 17, 4, 16) == 8);
  for (const auto& [nodes, leaves] : {std::pair{4, 1}, std::pair{5, 2}}) {
    const auto t =
        presets::cluster({.node = presets::Dgx1V100Params{}, .nodes = nodes, .oversubscription = 4.0});
    int built = 0, spines = 0;
    for (const auto d : t.devices_of_kind(DeviceKind::NetworkSwitch)) {
      built += t.device(d).name.starts_with("leaf");
      spines += t.device(d).name.starts_with("spine");
    }
    CHECK(built == leaves);
    CHECK((spines == 0) == (leaves == 1));
  }
}

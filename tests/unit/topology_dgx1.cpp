// The DGX-1 (V100) preset: the NVLink hybrid cube-mesh, its PCIe/QPI tree, routes and lookups.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "sim/error.h"
#include "topology/presets.h"

using namespace hybridsim;
using topology::DeviceId;
using topology::DeviceKind;

namespace {

std::vector<std::string> names(const topology::Topology& t, sim::Route r) {
  std::vector<std::string> out;
  for (const sim::LinkId l : r) out.push_back(t.links()[l].name);
  return out;
}

}  // namespace

TEST_CASE("dgx1_v100: 24 NVLinks in 16 pairs, 8 of them doubled, 6 per GPU") {
  const auto t = topology::presets::dgx1_v100();
  REQUIRE(t.gpus().size() == 8);
  int directed = 0, physical_directions = 0;
  std::set<std::pair<int, int>> doubled, single;
  std::vector<int> per_gpu(8, 0);
  for (sim::LinkId l = 0; l < t.links().size(); ++l) {
    if (t.links()[l].kind != sim::LinkKind::NVLink) continue;
    const auto& ends = t.link_ends(l);
    const int a = *t.device(ends.from).local_gpu, b = *t.device(ends.to).local_gpu;
    ++directed;
    physical_directions += ends.count;
    per_gpu[static_cast<std::size_t>(a)] += ends.count;
    // Bandwidth per direction is 25 GB/s per NVLink times the link count (hardware.md).
    CHECK(t.links()[l].bandwidth == sim::Bandwidth::gb_per_second(25) * ends.count);
    if (a < b) (ends.count == 2 ? doubled : single).insert({a, b});
  }
  // 16 GPU pairs × 2 directions; 24 physical NVLinks × 2 directions = 48.
  CHECK(directed == 32);
  CHECK(physical_directions == 48);
  for (const int n : per_gpu) CHECK(n == 6);
  // The documented doubled and single pairs (dgx1v_nvlink.csv).
  const std::set<std::pair<int, int>> expected_doubled{{0, 3}, {0, 4}, {1, 2}, {1, 5},
                                                       {2, 3}, {4, 7}, {5, 6}, {6, 7}};
  const std::set<std::pair<int, int>> expected_single{{0, 1}, {0, 2}, {1, 3}, {2, 6},
                                                      {3, 7}, {4, 5}, {4, 6}, {5, 7}};
  CHECK(doubled == expected_doubled);
  CHECK(single == expected_single);
}

TEST_CASE("dgx1_v100: devices, names, ranks and the exported link table") {
  const auto t = topology::presets::dgx1_v100();
  CHECK(t.devices_of_kind(DeviceKind::Gpu).size() == 8);
  CHECK(t.devices_of_kind(DeviceKind::Cpu).size() == 2);
  CHECK(t.devices_of_kind(DeviceKind::PcieSwitch).size() == 4);
  CHECK(t.devices_of_kind(DeviceKind::Nic).size() == 4);
  CHECK(t.node_count() == 1);
  for (int r = 0; r < 8; ++r) {
    const auto& d = t.device(t.gpu(r));
    CHECK(d.name == "GPU" + std::to_string(r));
    CHECK(d.gpu_rank == r);
    CHECK(d.local_gpu == r);
    CHECK(d.node == 0);
  }
  // 32 NVLink + 2·(8 GPU–PLX + 4 PLX–CPU + 4 NIC–PLX) PCIe + 2 QPI directed links.
  CHECK(t.links().size() == 66);
  const auto g0 = t.device_by_name("GPU0"), g3 = t.device_by_name("GPU3");
  const auto l = t.link_between(g0, g3);
  REQUIRE(l);
  CHECK(t.links()[*l].name == "NVLink GPU0→GPU3");
  CHECK(t.links()[*l].bandwidth == sim::Bandwidth::gb_per_second(50));
  CHECK(t.links()[*l].latency == sim::Time::ns(700));
  CHECK(t.link_ends(*l).from == g0);
  CHECK(t.link_ends(*l).count == 2);
  CHECK_FALSE(t.link_between(g0, t.device_by_name("GPU5")));
  CHECK_FALSE(t.find_device("GPU8"));
  CHECK_THROWS_AS(t.device_by_name("GPU8"), InputError);
  CHECK_THROWS_AS(t.gpu(8), InputError);
  // QPI: 2 links × 9.6 GT/s × 2 B = 38.4 GB/s per direction.
  const auto qpi = t.link_between(t.device_by_name("CPU0"), t.device_by_name("CPU1"));
  REQUIRE(qpi);
  CHECK(t.links()[*qpi].name == "QPI CPU0→CPU1");
  CHECK(t.links()[*qpi].bandwidth == sim::Bandwidth::bytes_per_second(38'400'000'000));
}

TEST_CASE("dgx1_v100: GPU0→GPU5 (no NVLink) goes PCIe → CPU → QPI → CPU → PCIe") {
  const auto t = topology::presets::dgx1_v100();
  const auto r = t.route(t.gpu(0), t.gpu(5));
  // GPU0 sits on PLX0 (CPU0), GPU5 on PLX2 (CPU1); GPUs do not relay by default.
  const std::vector<std::string> expected{"PCIe GPU0→PLX0", "PCIe PLX0→CPU0", "QPI CPU0→CPU1",
                                          "PCIe CPU1→PLX2", "PCIe PLX2→GPU5"};
  CHECK(names(t, r) == expected);
  CHECK(t.route_bandwidth(r) == sim::Bandwidth::gb_per_second(12));
  // The same GPU pair on one switch: GPU0→PLX0→GPU1 when NVLink is avoided.
  const std::vector<std::string> pcie{"PCIe GPU0→PLX0", "PCIe PLX0→GPU1"};
  CHECK(names(t, t.route(t.gpu(0), t.gpu(1), {.avoid_nvlink = true, .gpu_relay = false})) == pcie);
}

TEST_CASE("dgx1_v100: NVLink pairs route over their NVLink, relaying is an option") {
  const auto t = topology::presets::dgx1_v100();
  CHECK(names(t, t.route(t.gpu(0), t.gpu(1))) == std::vector<std::string>{"NVLink GPU0→GPU1"});
  CHECK(names(t, t.route(t.gpu(7), t.gpu(4))) == std::vector<std::string>{"NVLink GPU7→GPU4"});
  // With GPU relays, GPU0→GPU5 takes two NVLinks (through GPU1 or GPU4: both 25 + 50 GB/s).
  const auto relayed = t.route(t.gpu(0), t.gpu(5), {.avoid_nvlink = false, .gpu_relay = true});
  REQUIRE(relayed.size() == 2);
  for (const auto l : relayed) CHECK(t.links()[l].kind == sim::LinkKind::NVLink);
  CHECK(t.link_ends(relayed.back()).to == t.gpu(5));
  CHECK(t.route(t.gpu(2), t.gpu(2)).empty());
}

TEST_CASE("dgx1_v100: routes are cached and stable, each GPU's NIC is on its PCIe switch") {
  auto t = topology::presets::dgx1_v100();
  const auto before = t.cached_route_count();
  const auto a = t.route(t.gpu(0), t.gpu(5));
  const auto b = t.route(t.gpu(0), t.gpu(5));
  CHECK(a.data() == b.data());
  CHECK(t.cached_route_count() == before + 1);
  // Moving the topology keeps the routes valid (they live in the sealed implementation).
  const topology::Topology moved = std::move(t);
  CHECK(moved.route(moved.gpu(0), moved.gpu(5)).data() == a.data());
  for (int g = 0; g < 8; ++g) {
    const auto nic = moved.nic_for_gpu(moved.gpu(g));
    REQUIRE(nic);
    CHECK(moved.device(*nic).name == "NIC" + std::to_string(g / 2));
  }
}

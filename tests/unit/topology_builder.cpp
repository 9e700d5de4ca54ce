// TopologyBuilder: build-then-seal, GPU ranks, link names and counts, and invalid input.
#include <doctest/doctest.h>

#include "sim/error.h"
#include "topology/builder.h"

using namespace hybridsim;
using topology::DeviceKind;
using topology::TopologyBuilder;

TEST_CASE("builder: GPU ranks are node-major, then local index, whatever the insertion order") {
  TopologyBuilder b("two-boxes");
  b.add_device({.name = "B1", .kind = DeviceKind::Gpu, .node = 1, .local_gpu = 1});
  b.add_device({.name = "A0", .kind = DeviceKind::Gpu, .node = 0});
  b.add_device({.name = "B0", .kind = DeviceKind::Gpu, .node = 1, .local_gpu = 0});
  b.add_device({.name = "A1", .kind = DeviceKind::Gpu});  // node 0 by default, next local index 1
  b.add_device({.name = "sw", .kind = DeviceKind::NetworkSwitch});
  const auto t = std::move(b).build();
  REQUIRE(t.gpus().size() == 4);
  CHECK(t.device(t.gpu(0)).name == "A0");
  CHECK(t.device(t.gpu(1)).name == "A1");
  CHECK(t.device(t.gpu(2)).name == "B0");
  CHECK(t.device(t.gpu(3)).name == "B1");
  CHECK(t.device(t.gpu(3)).gpu_rank == 3);
  CHECK(t.node_count() == 2);
  CHECK_FALSE(t.device(t.device_by_name("sw")).node);  // fabric switches belong to no machine
  CHECK(t.name() == "two-boxes");
}

TEST_CASE("builder: links carry bandwidth × count, both directions, LinkId == insertion order") {
  TopologyBuilder b;
  const auto a = b.add_device({.name = "GPU0", .kind = DeviceKind::Gpu});
  const auto c = b.add_device({.name = "GPU1", .kind = DeviceKind::Gpu});
  const auto x = b.add_device({.name = "CPU0", .kind = DeviceKind::Cpu});
  b.connect(a, c,
            {.kind = sim::LinkKind::NVLink,
             .bandwidth = sim::Bandwidth::gb_per_second(25),
             .count = 3,
             .latency = sim::Time::ns(700)});
  b.connect(a, x,
            {.kind = sim::LinkKind::PCIe,
             .bandwidth = sim::Bandwidth::gb_per_second(12),
             .duplex = false,
             .label = "Gen3"});
  const auto t = std::move(b).build();
  REQUIRE(t.links().size() == 3);
  CHECK(t.links()[0].name == "NVLink GPU0→GPU1");
  CHECK(t.links()[1].name == "NVLink GPU1→GPU0");
  CHECK(t.links()[2].name == "Gen3 GPU0→CPU0");
  CHECK(t.links()[0].bandwidth == sim::Bandwidth::gb_per_second(75));
  CHECK(t.link_ends(1).count == 3);
  CHECK(t.link_ends(1).from == c);
  CHECK_FALSE(t.link_between(x, a));  // one-way
  CHECK(t.out_links(a).size() == 2);
  CHECK_THROWS_AS(t.route(x, a), InputError);  // no way back
}

TEST_CASE("builder: invalid devices and links are rejected clearly") {
  TopologyBuilder b;
  const auto a = b.add_device({.name = "GPU0", .kind = DeviceKind::Gpu});
  const auto c = b.add_device({.name = "GPU1", .kind = DeviceKind::Gpu});
  const topology::LinkParams ok{.kind = sim::LinkKind::NVLink,
                                .bandwidth = sim::Bandwidth::gb_per_second(25)};
  CHECK_THROWS_WITH_AS(b.add_device({.name = "GPU0", .kind = DeviceKind::Cpu}),
                       doctest::Contains("duplicate device name \"GPU0\""), InputError);
  CHECK_THROWS_AS(b.add_device({.name = "", .kind = DeviceKind::Cpu}), InputError);
  CHECK_THROWS_AS(b.add_device({.name = "C", .kind = DeviceKind::Cpu, .local_gpu = 0}), InputError);
  CHECK_THROWS_WITH_AS(b.connect(a, c, {.kind = sim::LinkKind::NVLink}),
                       doctest::Contains("bandwidth must be positive"), InputError);
  topology::LinkParams zero_count = ok;
  zero_count.count = 0;
  CHECK_THROWS_WITH_AS(b.connect(a, c, zero_count), doctest::Contains("count must be >= 1"),
                       InputError);
  CHECK_THROWS_WITH_AS(b.connect(a, a, ok), doctest::Contains("itself"), InputError);
  b.connect(a, c, ok);
  CHECK_THROWS_WITH_AS(b.connect(c, a, ok), doctest::Contains("declared twice"), InputError);
  b.add_device({.name = "GPU2", .kind = DeviceKind::Gpu, .node = 0, .local_gpu = 5});
  b.add_device({.name = "GPU3", .kind = DeviceKind::Gpu, .node = 0, .local_gpu = 5});
  CHECK_THROWS_WITH_AS(std::move(b).build(), doctest::Contains("local index 5"), InputError);
}

TEST_CASE("device kinds parse and print") {
  CHECK(topology::parse_device_kind("GPU") == DeviceKind::Gpu);
  CHECK(topology::parse_device_kind("pcie-switch") == DeviceKind::PcieSwitch);
  CHECK(topology::parse_device_kind("switch") == DeviceKind::NetworkSwitch);
  CHECK(topology::device_kind_name(DeviceKind::Nic) == "NIC");
  CHECK_THROWS_WITH_AS(topology::parse_device_kind("tpu"), doctest::Contains("expected one of gpu"),
                       InputError);
}

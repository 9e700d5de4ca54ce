// Custom topologies from YAML, and one located error per kind of mistake (file:line:col, field).
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/error.h"
#include "topology/yaml_loader.h"

using namespace hybridsim;

namespace {

constexpr const char* kBox = R"(name: two-gpus
nodes:
  - {name: GPU0, kind: gpu}
  - {name: GPU1, kind: gpu}
  - {name: PLX0, kind: pcie-switch}
links:
  - {a: GPU0, b: GPU1, kind: nvlink, bandwidth: 25 GB/s, latency: 700 ns, count: 2}
  - {a: GPU0, b: PLX0, kind: pcie, bandwidth: 12 GB/s}
  - {a: PLX0, b: GPU1, kind: pcie, bandwidth: 12 GB/s, duplex: false}
)";

// The message of the InputError that parsing `text` throws ("" if none).
std::string error_of(const std::string& text) {
  try {
    topology::parse_topology_yaml(text, "box.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("yaml: a custom topology parses into devices and directed links") {
  const auto t = topology::parse_topology_yaml(kBox);
  CHECK(t.name() == "two-gpus");
  CHECK(t.gpus().size() == 2);
  CHECK(t.device_count() == 3);
  // 2 duplex links + 1 one-way link.
  REQUIRE(t.links().size() == 5);
  CHECK(t.links()[0].name == "NVLink GPU0→GPU1");
  CHECK(t.links()[0].bandwidth == sim::Bandwidth::gb_per_second(50));  // 25 GB/s × 2 links
  CHECK(t.links()[0].latency == sim::Time::ns(700));
  CHECK(t.link_ends(0).count == 2);
  CHECK(t.links()[2].latency == sim::Time::zero());  // latency defaults to 0
  CHECK(t.links()[4].name == "PCIe PLX0→GPU1");
  CHECK_FALSE(t.link_between(t.device_by_name("GPU1"), t.device_by_name("PLX0")));
  CHECK(t.route(t.gpu(0), t.gpu(1), {.avoid_nvlink = true, .gpu_relay = false}).size() == 2);
}

TEST_CASE("yaml: machine indices and a file on disk") {
  const auto path = std::filesystem::temp_directory_path() / "hybridsim_topology_yaml_test.yaml";
  {
    std::ofstream out(path);
    out << "nodes:\n  - {name: a, kind: gpu, node: 1}\n  - {name: b, kind: gpu, node: 0}\n"
           "  - {name: s, kind: switch}\n"
           "links:\n  - {a: a, b: s, kind: ib, bandwidth: 100 Gb/s}\n"
           "  - {a: b, b: s, kind: ib, bandwidth: 100 Gb/s}\n";
  }
  const auto t = topology::load_topology_yaml(path.string());
  CHECK(t.device(t.gpu(0)).name == "b");  // node 0 first
  CHECK(t.node_count() == 2);
  CHECK(t.links()[0].bandwidth == sim::Bandwidth::bytes_per_second(12'500'000'000));
  CHECK(t.route(t.gpu(0), t.gpu(1)).size() == 2);
  std::filesystem::remove(path);
  CHECK_THROWS_WITH_AS(topology::load_topology_yaml(path.string()),
                       doctest::Contains("cannot open topology file"), InputError);
}

TEST_CASE("yaml error: a link to an unknown device") {
  CHECK(error_of("nodes:\n  - {name: GPU0, kind: gpu}\nlinks:\n"
                 "  - {a: GPU0, b: GPU9, kind: nvlink, bandwidth: 25 GB/s}\n") ==
        "box.yaml:4:18: links[0].b: unknown device \"GPU9\": declare it under nodes: first");
}

TEST_CASE("yaml error: a link without bandwidth") {
  const std::string e = error_of(
      "nodes:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n"
      "  - a: a\n    b: b\n    kind: nvlink\n");
  CHECK(e ==
        "box.yaml:5:5: links[0]: missing required key \"bandwidth\" (a positive bandwidth "
        "per link per direction, e.g. \"25 GB/s\")");
}

TEST_CASE("yaml error: a duplicate device name") {
  CHECK(error_of("nodes:\n  - {name: a, kind: gpu}\n  - {name: a, kind: cpu}\n") ==
        "box.yaml:3:12: nodes[1].name: duplicate device name \"a\" (first declared at "
        "box.yaml:2:12)");
}

TEST_CASE("yaml error: zero bandwidth") {
  CHECK(error_of("nodes:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n"
                 "  - {a: a, b: b, kind: nvlink, bandwidth: 0 GB/s}\n") ==
        "box.yaml:5:43: links[0].bandwidth: must be positive, got \"0 GB/s\"");
}

TEST_CASE("yaml error: unknown device kind and unknown link kind") {
  const std::string device = error_of("nodes:\n  - {name: a, kind: tpu}\n");
  CHECK(device.starts_with("box.yaml:2:21: nodes[0].kind: unknown device kind \"tpu\""));
  const std::string link = error_of(
      "nodes:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n"
      "  - {a: a, b: b, kind: warp, bandwidth: 1 GB/s}\n");
  CHECK(link.starts_with("box.yaml:5:24: links[0].kind: unknown link kind \"warp\""));
}

TEST_CASE("yaml error: unknown keys, at the top, in a device and in a link") {
  CHECK(error_of("nodes: []\ndevices: []\n") ==
        "box.yaml:2:1: topology: unknown key \"devices\"; expected one of name, nodes, links");
  CHECK(error_of("nodes:\n  - {name: a, kind: gpu, memory: 16 GB}\n")
            .starts_with("box.yaml:2:26: nodes[0]: unknown key \"memory\""));
  CHECK(error_of("nodes:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n"
                 "  - {a: a, b: b, kind: nvlink, bandwith: 1 GB/s}\n")
            .starts_with("box.yaml:5:32: links[0]: unknown key \"bandwith\""));
}

TEST_CASE("yaml error: bad values are located and say what was expected") {
  const std::string head = "nodes:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n";
  CHECK(error_of(head + "  - {a: a, b: b, kind: pcie, bandwidth: fast}\n")
            .starts_with("box.yaml:5:41: links[0].bandwidth: bad bandwidth \"fast\""));
  CHECK(error_of(head + "  - {a: a, b: b, kind: pcie, bandwidth: 1 GB/s, latency: soon}\n")
            .starts_with("box.yaml:5:58: links[0].latency: "));
  CHECK(error_of(head + "  - {a: a, b: b, kind: pcie, bandwidth: 1 GB/s, count: 0}\n")
            .starts_with("box.yaml:5:56: links[0].count: expected the number of physical links, an "
                         "integer >= 1 (default 1), got 0"));
  CHECK(error_of(head + "  - {a: a, b: b, kind: pcie, bandwidth: 1 GB/s, duplex: maybe}\n")
            .starts_with("box.yaml:5:57: links[0].duplex: expected true"));
  CHECK(
      error_of(head + "  - {a: a, b: a, kind: pcie, bandwidth: 1 GB/s}\n")
          .starts_with("box.yaml:5:5: links[0]: link a – a: a device cannot be linked to itself"));
  CHECK(
      error_of("nodes:\n  - {name: a, kind: gpu, node: -1}\n")
          .starts_with(
              "box.yaml:2:32: nodes[0].node: expected the machine index, an integer >= 0, got -1"));
  CHECK(error_of("nodes: {a: 1}\n").starts_with("box.yaml:1:8: nodes: a list of devices"));
  CHECK(error_of("nodes: [\n").starts_with("box.yaml:"));
  CHECK(error_of("").starts_with("box.yaml: empty topology file"));
  CHECK(error_of("links: []\n")
            .starts_with("box.yaml:1:1: topology: missing required key \"nodes\""));
}

// Custom topologies from YAML, and one located error per kind of mistake (file:line:col, field,
// what was expected), with the messages every YAML input shares.
#include <doctest/doctest.h>
#include <unistd.h>
#include "tests/paths/paths.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "schema_checks.h"
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
  const auto path = std::filesystem::temp_directory_path() /
                    ("hybridsim_topology_yaml_test-" + std::to_string(getpid()) + ".yaml");
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
  CHECK_THROWS_WITH_AS(
      topology::load_topology_yaml(path.string()),
      ("cannot open topology file \"" + path.string() + "\": No such file or directory").c_str(), InputError);
}

TEST_CASE("yaml: a link machines rarely have is a note naming its line, and is taken as written") {
  // hunt10: an InfiniBand link between two GPUs of one machine, or an NVLink between machines, was
  // taken without a word, where it is more often a slip of a kind or a node than a machine. Users
  // model odd machines (an NVLink domain across machines), so it is a note, not a refusal.
  const auto notes_of = [](const std::string& text, const std::string& source) {
    std::vector<std::string> notes;
    topology::parse_topology_yaml(text, source, &notes);
    return notes;
  };
  std::vector<std::string> notes;
  const auto ib = topology::parse_topology_yaml(
      "nodes:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n"
      "links:\n  - {a: GPU0, b: GPU1, kind: infiniband, bandwidth: 25 GB/s}\n",
      "ib.yaml", &notes);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] ==
        "ib.yaml:5:5: links[0]: a link of kind infiniband between GPUs \"GPU0\" and \"GPU1\" of one machine "
        "(node 0), taken as written; a machine's GPUs usually meet over nvlink, nvswitch or pcie, and "
        "InfiniBand joins machines through their NICs");
  CHECK(ib.links()[0].kind == sim::LinkKind::InfiniBand);  // as written
  const auto nv = notes_of(
      "nodes:\n  - {name: GPU0, kind: gpu, node: 0}\n  - {name: GPU1, kind: gpu, node: 1}\n"
      "  - {name: NVS, kind: nvswitch, node: 1}\nlinks:\n"
      "  - {a: GPU0, b: GPU1, kind: nvlink, bandwidth: 25 GB/s}\n"
      "  - {a: GPU1, b: NVS, kind: nvswitch, bandwidth: 25 GB/s}\n"
      "  - {a: GPU0, b: NVS, kind: nvswitch, bandwidth: 25 GB/s}\n",
      "nv.yaml");
  REQUIRE(nv.size() == 2);  // links[1] joins GPU1 to its own machine's switch
  CHECK(nv[0] ==
        "nv.yaml:6:5: links[0]: a link of kind nvlink between \"GPU0\" (node 0) and \"GPU1\" (node 1), "
        "two machines, taken as written (an NVLink domain across machines); machines are usually "
        "joined by infiniband through their NICs");
  CHECK(nv[1].starts_with(
      "nv.yaml:8:5: links[2]: a link of kind nvswitch between \"GPU0\" (node 0) and \"NVS\" "
      "(node 1), two machines"));
  // What machines have: none (NVLink and PCIe inside, InfiniBand through a switch of no machine).
  CHECK(notes_of(kBox, "box.yaml").empty());
  CHECK(notes_of("nodes:\n  - {name: a, kind: gpu, node: 0}\n  - {name: b, kind: gpu, node: 1}\n"
                 "  - {name: s, kind: switch}\nlinks:\n"
                 "  - {a: a, b: s, kind: ib, bandwidth: 100 Gb/s}\n"
                 "  - {a: b, b: s, kind: ib, bandwidth: 100 Gb/s}\n",
                 "fabric.yaml")
            .empty());
}

TEST_CASE("yaml error: a file of no GPU, and machines numbered with a gap, are refused where written") {
  // Both loaded (exit 0): "0 GPUs on 0 machines" and "2 GPUs on 3 machines". On the first, collective
  // refused its default GPUs as the list "0--1" and run its dp 1 as "expected dp × mp <= 0"; the
  // second counted a machine 1 that holds nothing.
  CHECK(
      error_of("nodes: []\n") ==
      "box.yaml:1:8: nodes: no GPU among them (the list is empty); expected at least one device of kind gpu");
  CHECK(error_of("nodes:\n  - {name: c, kind: cpu}\n  - {name: s, kind: plx}\nlinks:\n"
                 "  - {a: c, b: s, kind: pcie, bandwidth: 16 GB/s}\n") ==
        "box.yaml:2:3: nodes: no GPU among its 2 devices; expected at least one device of kind gpu");
  CHECK(
      error_of("nodes:\n  - {name: a, kind: gpu, node: 0}\n  - {name: s, kind: switch}\n"
               "  - {name: b, kind: gpu, node: 2}\nlinks:\n  - {a: a, b: s, kind: ib, bandwidth: 100 Gb/s}\n"
               "  - {a: b, b: s, kind: ib, bandwidth: 100 Gb/s}\n") ==
      "box.yaml:4:5: nodes[2].node: machine 2, but no device is on machine 1; expected machines numbered "
      "from 0 "
      "without a gap (a machine of no device is counted, empty)");
  // A switch of no machine joins them and needs none; one GPU alone is a topology (of 1 device).
  const auto one = topology::parse_topology_yaml("nodes:\n  - {name: g, kind: gpu}\n", "one.yaml");
  CHECK(one.node_count() == 1);
  CHECK(one.device_count() == 1);
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
        "box.yaml:5:5: links[0].bandwidth: missing required field; expected a bandwidth such as \"25 GB/s\" "
        "or \"100 Gb/s\", > 0");
}

TEST_CASE("yaml error: a duplicate device name") {
  CHECK(error_of("nodes:\n  - {name: a, kind: gpu}\n  - {name: a, kind: cpu}\n") ==
        "box.yaml:3:12: nodes[1].name: duplicate device name \"a\" (first declared at "
        "box.yaml:2:12); expected a unique device name");
}

TEST_CASE("yaml error: zero bandwidth") {
  CHECK(
      error_of("nodes:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n"
               "  - {a: a, b: b, kind: nvlink, bandwidth: 0 GB/s}\n") ==
      "box.yaml:5:43: links[0].bandwidth: got \"0 GB/s\"; expected a bandwidth such as \"25 GB/s\" or \"100 "
      "Gb/s\", > 0");
}

TEST_CASE("yaml error: unknown device kind and unknown link kind") {
  const std::string device = error_of("nodes:\n  - {name: a, kind: tpu}\n");
  CHECK(device ==
        "box.yaml:2:21: nodes[0].kind: unknown value \"tpu\" (did you mean 'gpu'?); expected one of: gpu, "
        "cpu, pcie-switch (plx), nvswitch, nic, switch (network-switch)");
  const std::string link = error_of(
      "nodes:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n"
      "  - {a: a, b: b, kind: warp, bandwidth: 1 GB/s}\n");
  CHECK(link ==
        "box.yaml:5:24: links[0].kind: unknown value \"warp\"; expected one of: nvlink, nvswitch, pcie, cpu "
        "(qpi, upi), infiniband (ib), ethernet, generic");
  // Kinds are read as before: any case, and the aliases.
  CHECK(error_of("nodes:\n  - {name: a, kind: GPU}\n  - {name: b, kind: PLX}\nlinks:\n"
                 "  - {a: a, b: b, kind: PCIe, bandwidth: 1 GB/s}\n") == "");
}

TEST_CASE("yaml error: a scenario file given as a topology file is said to be one") {
  // `hybridsim topology SCENARIO.yaml` said "cluster: unknown field" (hunt6).
  CHECK(error_of("name: gnmt\ncluster: {preset: dgx1-v100, nodes: 1}\nworkload: {network: gnmt}\n") ==
        "box.yaml:2:1: cluster: a scenario's section: this is a scenario file, not a topology file (name, "
        "nodes, links); expected a topology file; for a scenario's cluster, its cluster.preset's name with "
        "--nodes in its place");
  // A topology file with a stray `cluster` key beside its nodes is an unknown field as before.
  CHECK(error_of("nodes: []\ncluster: 1\n") ==
        "box.yaml:2:1: cluster: unknown field; expected one of: name, nodes, links");
}

TEST_CASE("yaml error: unknown keys, at the top, in a device and in a link") {
  CHECK(error_of("nodes: []\ndevices: []\n") ==
        "box.yaml:2:1: devices: unknown field; expected one of: name, nodes, links");
  CHECK(error_of("nodes: []\nlink: []\n") ==
        "box.yaml:2:1: link: unknown field (did you mean 'links'?); expected one of: name, nodes, links");
  CHECK(error_of("nodes:\n  - {name: a, kind: gpu, memory: 16 GB}\n") ==
        "box.yaml:2:26: nodes[0].memory: unknown field; expected one of: name, kind, node");
  CHECK(error_of("nodes:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n"
                 "  - {a: a, b: b, kind: nvlink, bandwith: 1 GB/s}\n") ==
        "box.yaml:5:32: links[0].bandwith: unknown field (did you mean 'bandwidth'?); expected one of: a, b, "
        "kind, "
        "bandwidth, latency, count, duplex, label");
}

TEST_CASE(
    "yaml error: the rules every YAML input shares — repeated keys, keys that are not text, one document") {
  // Before the shared reader, the first two were silently ignored and the third was
  // "internal error: yaml-cpp: error at line 2, column 1: bad conversion".
  CHECK(error_of("nodes: [{name: a, kind: gpu}]\nname: x\nname: y\n") ==
        "box.yaml:3:1: invalid YAML: repeated key 'name'");
  CHECK(error_of("nodes:\n  - {name: a, kind: gpu, kind: cpu}\n") ==
        "box.yaml:2:26: invalid YAML: repeated key 'kind'");
  CHECK(error_of("nodes: [{name: a, kind: gpu}]\n[x]: 1\n") ==
        "box.yaml:2:1: invalid YAML: a key must be plain text, not a list or mapping");
  CHECK(error_of("nodes: [{name: a, kind: gpu}]\n---\nnodes: []\n") ==
        "box.yaml:3:1: invalid YAML: expected one document, found 2 (remove the extra '---')");
}

TEST_CASE("yaml error: an alias bomb, a directory and a device are refused at once, naming the file") {
  const std::string bomb = std::string(HYBRIDSIM_SOURCE_DIR) + "/tests/data/bad/alias-bomb-topology.yaml";
  CHECK_THROWS_WITH_AS(
      topology::load_topology_yaml(bomb),
      (bomb + ":9:14: invalid YAML: more than 250000 nodes once aliases are expanded (the limit for "
              "any input file); expected a smaller document or fewer aliases")
          .c_str(),
      InputError);
  const std::string dir = std::string(HYBRIDSIM_SOURCE_DIR) + "/tests/data";
  CHECK_THROWS_WITH_AS(topology::load_topology_yaml(dir),
                       ("cannot open topology file \"" + dir + "\": is a directory").c_str(), InputError);
  CHECK_THROWS_WITH_AS(topology::load_topology_yaml("/dev/zero"),
                       "cannot open topology file \"/dev/zero\": not a regular file (a character device)",
                       InputError);
}

TEST_CASE("yaml: the schema table is well formed and topology/README.md holds its reference") {
  test::check_well_formed(topology::topology_schema());
  test::check_defaults(topology::topology_schema());
  test::check_reference_block("topology/README.md", topology::topology_schema().reference_markdown());
}

TEST_CASE("yaml error: bad values are located and say what was expected") {
  const std::string head = "nodes:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\nlinks:\n";
  CHECK(error_of(head + "  - {a: a, b: b, kind: pcie, bandwidth: fast}\n") ==
        "box.yaml:5:41: links[0].bandwidth: got \"fast\"; expected a bandwidth such as \"25 GB/s\" or \"100 "
        "Gb/s\", > 0");
  CHECK(error_of(head + "  - {a: a, b: b, kind: pcie, bandwidth: 1 GB/s, latency: soon}\n") ==
        "box.yaml:5:58: links[0].latency: got \"soon\"; expected a time such as \"700 ns\", from 0 s to 1 s");
  CHECK(error_of(head + "  - {a: a, b: b, kind: pcie, bandwidth: 1 GB/s, count: 0}\n") ==
        "box.yaml:5:56: links[0].count: got \"0\"; expected a whole number from 1 to 65536");
  CHECK(error_of(head + "  - {a: a, b: b, kind: pcie, bandwidth: 1 GB/s, duplex: maybe}\n") ==
        "box.yaml:5:57: links[0].duplex: got \"maybe\"; expected true or false");
  CHECK(
      error_of(head + "  - {a: a, b: a, kind: pcie, bandwidth: 1 GB/s}\n")
          .starts_with("box.yaml:5:5: links[0]: link a – a: a device cannot be linked to itself"));
  CHECK(error_of("nodes:\n  - {name: a, kind: gpu, node: -1}\n") ==
        "box.yaml:2:32: nodes[0].node: got \"-1\"; expected a whole number from 0 to 1048575");
  CHECK(error_of("nodes: {a: 1}\n") ==
        "box.yaml:1:8: nodes: got a mapping; expected a list of devices {name, kind, node}");
  CHECK(error_of("nodes: [\n") == "box.yaml:2:1: invalid YAML: end of sequence flow not found");
  CHECK(error_of("") ==
        "box.yaml:1:1: nodes: missing required field; expected a list of devices {name, kind, node}");
  CHECK(error_of("links: []\n") ==
        "box.yaml:1:1: nodes: missing required field; expected a list of devices {name, kind, node}");
}

TEST_CASE("yaml error: a GPU joined to no other is named where it is declared") {
  // GPU2 hangs off its own switch: no chain of links joins it to GPU0, so no run could route a
  // byte to it. GPU1 reaches GPU0 through PLX0.
  CHECK(
      error_of("nodes:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n"
               "  - {name: PLX0, kind: plx}\n  - {name: PLX1, kind: plx}\n  - {name: GPU2, kind: gpu}\n"
               "links:\n  - {a: GPU0, b: PLX0, kind: pcie, bandwidth: 12 GB/s}\n"
               "  - {a: GPU1, b: PLX0, kind: pcie, bandwidth: 12 GB/s}\n"
               "  - {a: GPU2, b: PLX1, kind: pcie, bandwidth: 12 GB/s}\n") ==
      "box.yaml:6:5: nodes[4]: GPU \"GPU2\" is not connected to GPU \"GPU0\" by any chain of links; expected "
      "every GPU connected to the others");
  // A chain of GPUs with direct links only (a ring machine, as ideal-ring) is accepted.
  CHECK(error_of(
            "nodes:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n  - {name: GPU2, kind: gpu}\n"
            "links:\n  - {a: GPU0, b: GPU1, kind: nvlink, bandwidth: 25 GB/s}\n"
            "  - {a: GPU1, b: GPU2, kind: nvlink, bandwidth: 25 GB/s}\n") == "");
  // Two GPUs and no links at all.
  CHECK(error_of("nodes:\n  - {name: a, kind: gpu}\n  - {name: b, kind: gpu}\n")
            .starts_with("box.yaml:3:5: nodes[1]: GPU \"b\" is not connected"));
}

TEST_CASE("topology yaml: a GPU that cannot send to another along the links' directions is named") {
  // GPU0 -> GPU1 one way only loaded, and every run stopped at its first route ("no route from GPU1
  // to GPU0 ..."), naming neither the file nor a line.
  CHECK(error_of("nodes:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\nlinks:\n"
                 "  - {a: GPU0, b: GPU1, kind: nvlink, bandwidth: 25 GB/s, duplex: false}\n") ==
        "box.yaml:3:5: nodes[1]: GPU \"GPU1\" cannot send to GPU \"GPU0\" along the links' directions (a "
        "duplex: false link carries a to b only); expected every GPU able to send to every other");
  CHECK(error_of("nodes:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\nlinks:\n"
                 "  - {a: GPU1, b: GPU0, kind: nvlink, bandwidth: 25 GB/s, duplex: false}\n")
            .starts_with("box.yaml:3:5: nodes[1]: GPU \"GPU0\" cannot send to GPU \"GPU1\""));
  // One-way links that close a cycle reach every GPU: a directed ring loads.
  CHECK(error_of(
            "nodes:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n  - {name: GPU2, kind: gpu}\n"
            "links:\n  - {a: GPU0, b: GPU1, kind: nvlink, bandwidth: 25 GB/s, duplex: false}\n"
            "  - {a: GPU1, b: GPU2, kind: nvlink, bandwidth: 25 GB/s, duplex: false}\n"
            "  - {a: GPU2, b: GPU0, kind: nvlink, bandwidth: 25 GB/s, duplex: false}\n")
            .empty());
}

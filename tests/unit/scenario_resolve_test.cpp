// Resolution of scenarios into runnable objects: topologies with link overrides, profiles scaled to
// the batch, placements, mappings and options; errors located at the scenario field.
#include <doctest/doctest.h>
#include <unistd.h>
#include "tests/paths/paths.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scenarios/loader/resolve.h"
#include "sim/error.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using namespace hybridsim::scenarios;

namespace {

std::string example(const std::string& name) {
  return std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/examples/" + name;
}

std::string resolve_error(const std::string& text, const std::filesystem::path& base = ".") {
  try {
    resolve(parse_scenario(text, "s.yaml", {}, base));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The directed link between two named devices.
const sim::LinkSpec& link(const topology::Topology& t, std::string_view a, std::string_view b) {
  const auto l = t.link_between(t.device_by_name(a), t.device_by_name(b));
  REQUIRE(l);
  return t.links()[*l];
}

// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             ("hybridsim-scenario-" + name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << text;
  }
};

}  // namespace

TEST_CASE("resolve: GNMT data parallel over the 8 GPUs of one DGX-1") {
  const ResolvedScenario r = resolve(load_scenario(example("dgx1-gnmt-dp8.yaml")));
  CHECK(r.topology.name() == "dgx1-v100");
  CHECK(r.topology.gpus().size() == 8);
  CHECK(r.profile.meta.network == "gnmt");
  CHECK(r.profile.meta.batch_per_gpu == 128);  // the profile's own batch (batch_per_worker: auto)
  CHECK(r.mapping.dp == 8);
  CHECK(r.mapping.mp == 1);
  CHECK(r.mapping.gpu_count() == 8);
  CHECK(r.placement.mp == 1);
  CHECK(r.placement.gpu_of_op == std::vector<std::uint32_t>(r.profile.ops.size(), 0));
  CHECK(r.step.bucket_size == sim::Bytes::of(25'000'000));
  CHECK(r.step.compute_scale == 1.0);
  CHECK(r.comm.algorithm == workloads::AllReduceAlgorithm::Ring);
  CHECK_FALSE(r.comm.channels);
  CHECK(r.collective.message_size == sim::Bytes::kib(512));
  CHECK(r.collective.reduction_bandwidth == sim::Bandwidth::gb_per_second(225));
  CHECK(r.switching == sim::Switching::CutThrough);
  CHECK(r.executor.contention);
  // GPU0–GPU3 are joined by two NVLinks of 25 GB/s: 50 GB/s per direction (topology presets).
  CHECK(link(r.topology, "GPU0", "GPU3").bandwidth == sim::Bandwidth::gb_per_second(50));
  const std::string text = describe(r);
  CHECK(text.starts_with("scenario:      GNMT on one DGX-1, data parallel over 8 GPUs\n"));
  CHECK(text.find("\ncluster:       dgx1-v100, 8 GPUs\n") != std::string::npos);
  CHECK(text.find("\nparallelism:   dp 8 × mp 1 = 8 GPUs, global batch 1024\n") != std::string::npos);
  CHECK(text.find(
            "\ncommunication: ring/auto, channels auto, messages 512 KiB, buckets 25 MB, reduction 225 GB/s "
            "(auto: V100's HBM / 4), cut-through\n") != std::string::npos);
}

TEST_CASE("resolve: a 4-node cluster shows its NVLink and InfiniBand overrides in the built links") {
  const ResolvedScenario r = resolve(load_scenario(example("cluster4-inception-dp32.yaml")));
  CHECK(r.topology.gpus().size() == 32);
  CHECK(r.mapping.dp == 32);
  // nvlink: 50 GB/s per link; n0.GPU0–n0.GPU1 have one NVLink, n0.GPU0–n0.GPU3 two.
  CHECK(link(r.topology, "n0.GPU0", "n0.GPU1").bandwidth == sim::Bandwidth::gb_per_second(50));
  CHECK(link(r.topology, "n2.GPU0", "n2.GPU3").bandwidth == sim::Bandwidth::gb_per_second(100));
  CHECK(link(r.topology, "n0.GPU0", "n0.GPU1").latency == sim::Time::ns(700));  // not overridden
  // infiniband: 200 Gb/s = 25 GB/s and 600 ns on every NIC port (both directions).
  int nic_links = 0;
  for (sim::LinkId l = 0; l < r.topology.links().size(); ++l) {
    const auto& ends = r.topology.link_ends(l);
    const bool nic = r.topology.device(ends.from).kind == topology::DeviceKind::Nic ||
                     r.topology.device(ends.to).kind == topology::DeviceKind::Nic;
    if (!nic || r.topology.links()[l].kind != sim::LinkKind::InfiniBand) continue;
    ++nic_links;
    CHECK(r.topology.links()[l].bandwidth == sim::Bandwidth::gb_per_second(25));
    CHECK(r.topology.links()[l].latency == sim::Time::ns(600));
  }
  CHECK(nic_links == 4 * 4 * 2);  // 4 machines × 4 NICs × 2 directions
  CHECK(r.comm.algorithm == workloads::AllReduceAlgorithm::Hierarchical);
  CHECK(describe(r).find("\nlinks:         nvlink 50 GB/s; infiniband 25 GB/s 600 ns\n") !=
        std::string::npos);
}

TEST_CASE("resolve: link overrides reach the NVSwitch, PCIe, CPU and idealized presets") {
  // nvswitch bandwidth is per NVLink into the switch; a GPU has 6: 6 × 40 GB/s = 240 GB/s.
  const auto dgx2 = resolve(parse_scenario(R"(cluster:
  preset: dgx2
  gpus_per_node: 4
  links: {nvswitch: {bandwidth: 40 GB/s}, pcie: {bandwidth: 16 GB/s}, cpu: {latency: 1 us}}
workload: {network: gnmt}
)", "s.yaml"));
  CHECK(dgx2.topology.gpus().size() == 4);
  CHECK(link(dgx2.topology, "GPU0", "NVSwitch").bandwidth == sim::Bandwidth::gb_per_second(240));
  CHECK(link(dgx2.topology, "GPU0", "PLX0").bandwidth == sim::Bandwidth::gb_per_second(16));
  CHECK(link(dgx2.topology, "CPU0", "CPU1").latency == sim::Time::us(1));
  const auto ring =
      resolve(parse_scenario("cluster: {preset: ideal-ring, gpus_per_node: 4, links: {generic: {bandwidth: "
                             "10 GB/s, latency: 2 us}}}\n"
                             "workload: {network: gnmt}\n",
                             "s.yaml"));
  CHECK(ring.topology.gpus().size() == 4);
  CHECK(link(ring.topology, "GPU3", "GPU0").bandwidth == sim::Bandwidth::gb_per_second(10));
  CHECK(link(ring.topology, "GPU3", "GPU0").latency == sim::Time::us(2));
}

TEST_CASE("resolve: a custom topology file and a profile file are found relative to the scenario file") {
  const TempDir dir("custom");
  dir.write("topologies/pair.yaml",
            "name: pair\nnodes: [{name: A, kind: gpu}, {name: B, kind: gpu}]\n"
            "links: [{a: A, b: B, kind: nvlink, bandwidth: 30 GB/s, count: 2}]\n");
  const workloads::Profile inception = workloads::builtin_profile("inception-v3");
  dir.write("profiles/inception.yaml", workloads::profile_to_yaml(inception));
  dir.write("scenarios/s.yaml", "cluster: {topology: ../topologies/pair.yaml}\n"
                                "workload: {profile: ../profiles/inception.yaml}\nparallelism: {dp: 2}\n");
  const ResolvedScenario r = resolve(load_scenario((dir.path / "scenarios/s.yaml").string()));
  CHECK(r.topology.name() == "pair");
  CHECK(r.topology.gpus().size() == 2);
  CHECK(link(r.topology, "A", "B").bandwidth == sim::Bandwidth::gb_per_second(60));
  CHECK(r.mapping.dp == 2);
  CHECK(r.profile == inception);
  // A missing file is reported at the scenario field ("cluster: {topology: " is 20 columns), then
  // the loader's own message.
  dir.write("scenarios/missing.yaml", "cluster: {topology: nowhere.yaml}\nworkload: {network: gnmt}\n");
  const std::string missing = dir.path / "scenarios/missing.yaml";
  std::string message;
  try {
    resolve(load_scenario(missing));
  } catch (const InputError& e) {
    message = e.what();
  }
  CHECK_MESSAGE(message.starts_with(missing + ":1:21: cluster.topology: "), message);
}

TEST_CASE("resolve: a topology file's notes come with the topology, from its one load") {
  // An InfiniBand link between two GPUs of one machine, and an NVLink between machines, are taken as
  // written and noted (topology/yaml_loader.h). The file's notes were read again by a second parse
  // (scenarios::topology_file_notes) for run and each sweep point; the resolved scenario keeps the
  // ones of the load that built its topology, in the file's order, each naming the file's line.
  const TempDir dir("notes");
  dir.write("odd.yaml",
            "nodes:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n"
            "  - {name: GPU2, kind: gpu, node: 1}\nlinks:\n"
            "  - {a: GPU0, b: GPU1, kind: infiniband, bandwidth: 25 GB/s}\n"
            "  - {a: GPU1, b: GPU2, kind: nvlink, bandwidth: 25 GB/s}\n");
  dir.write("s.yaml", "cluster: {topology: odd.yaml}\nworkload: {network: gnmt}\nparallelism: {dp: 3}\n");
  const ResolvedScenario r = resolve(load_scenario((dir.path / "s.yaml").string()));
  const std::string file = (dir.path / "odd.yaml").string();
  REQUIRE(r.topology_notes.size() == 2);
  CHECK(r.topology_notes[0] ==
        file +
            ":6:5: links[0]: a link of kind infiniband between GPUs \"GPU0\" and \"GPU1\" of one machine "
            "(node 0), taken as written; a machine's GPUs usually meet over nvlink, nvswitch or pcie, and "
            "InfiniBand joins machines through their NICs");
  CHECK(r.topology_notes[1] ==
        file +
            ":7:5: links[1]: a link of kind nvlink between \"GPU1\" (node 0) and \"GPU2\" (node 1), two "
            "machines, taken as written (an NVLink domain across machines); machines are usually joined by "
            "infiniband through their NICs");
  CHECK(r.topology.links()[0].kind == sim::LinkKind::InfiniBand);  // as written
  // A file of links machines have, and a preset, have none.
  dir.write("pair.yaml",
            "nodes: [{name: A, kind: gpu}, {name: B, kind: gpu}]\n"
            "links: [{a: A, b: B, kind: nvlink, bandwidth: 25 GB/s}]\n");
  dir.write("p.yaml", "cluster: {topology: pair.yaml}\nworkload: {network: gnmt}\nparallelism: {dp: 2}\n");
  CHECK(resolve(load_scenario((dir.path / "p.yaml").string())).topology_notes.empty());
  CHECK(resolve(load_scenario(example("dgx1-gnmt-dp8.yaml"))).topology_notes.empty());
}

TEST_CASE("resolve: placement rules, the explicit mapping and batch scaling") {
  const ResolvedScenario r = resolve(load_scenario(example("dgx1-gnmt-mp2-rules.yaml")));
  const auto gpu_of = [&](std::string_view op) { return r.placement.gpu_of_op[r.profile.op_by_name(op)]; };
  // Rules: enc* → 0, embedding* → 0, everything else → 1.
  CHECK(gpu_of("embedding") == 0);
  CHECK(gpu_of("enc.L0.fw.t0") == 0);
  CHECK(gpu_of("dec.L0.t0") == 1);
  CHECK(gpu_of("classifier") == 1);
  CHECK(r.mapping.gpu_rank == std::vector<std::vector<int>>{{0, 3}, {1, 2}, {4, 7}, {5, 6}});
  REQUIRE(r.scenario.outputs.trace);
  CHECK(r.scenario.outputs.trace->window == sim::TimeWindow{sim::Time::zero(), sim::Time::ms(50)});

  // batch_per_worker 64 halves GNMT's 128: a 117.852 us GEMM becomes 58.926 us, tokens per step
  // 6,144 become 3,072; gradients keep their size. compute_speed 2 halves kernels again, in the step.
  const ResolvedScenario half = resolve(parse_scenario(
      "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt, batch_per_worker: 64, compute_speed: 2}\n",
      "s.yaml"));
  const workloads::Profile full = workloads::Profile(resolve(parse_scenario(
      "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n", "s.yaml")).profile);
  const auto& op = half.profile.ops[half.profile.op_by_name("enc.L0.fw.t0")];
  CHECK(op.forward[0].duration == sim::parse_time("58.926 us"));
  CHECK(half.profile.meta.batch_per_gpu == 64);
  CHECK(half.profile.meta.units_per_step == 3072);
  CHECK(half.profile.parameter_bytes() == full.parameter_bytes());
  CHECK(op.activation_bytes.count() * 2 ==
        full.ops[full.op_by_name("enc.L0.fw.t0")].activation_bytes.count());
  CHECK(half.step.compute_scale == 0.5);
}

TEST_CASE("resolve: errors are prefixed with the scenario location of the field") {
  // 16 workers on 8 GPUs; "  dp: 16" puts the 16 in column 7 of line 3.
  CHECK(resolve_error("cluster: {preset: dgx1-v100}\nparallelism:\n  dp: 16\nworkload: {network: gnmt}\n") ==
        "s.yaml:3:7: parallelism: dp × mp = 16 × 1 = 16 GPUs, but the cluster dgx1-v100 has 8; expected dp × "
        "mp <= 8");
  CHECK(resolve_error(
            "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n"
            "parallelism: {mp: 2, placement: [{match: \"enc*\", gpu: 0}, {match: \"nothing*\", gpu: 1}, "
            "{match: \"*\", gpu: 1}]}\n") ==
        "s.yaml:3:59: parallelism.placement[1]: placement pattern \"nothing*\" matches no op of gnmt");
  CHECK(resolve_error("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n"
                      "parallelism: {mp: 2, placement: [{match: \"enc*\", gpu: 1}]}\n") ==
        "s.yaml:3:33: parallelism.placement: op \"embedding\" (layer \"embedding\") matches no placement "
        "rule; add a "
        "catch-all rule such as \"*\": 0");
  CHECK(resolve_error("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n"
                      "parallelism: {dp: 2, mapping: [[0], [9]]}\n") ==
        "s.yaml:3:38: parallelism.mapping[1][0]: GPU 9 is outside the cluster dgx1-v100; expected a GPU rank "
        "from 0 to 7");
  const std::string missing =
      resolve_error("cluster: {preset: dgx1-v100}\nworkload: {profile: missing.yaml}\n");
  CHECK_MESSAGE(missing.starts_with("s.yaml:2:21: workload.profile: "), missing);
}

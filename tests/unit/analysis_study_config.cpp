// The study file reader: the shipped study files parse, every field lands in the config, and bad
// input names file:line:col, the field and what was expected.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis/study/study_config.h"
#include "schema_checks.h"
#include "sim/error.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/profile/profile_io.h"

using namespace hybridsim;
using analysis::parse_study_config;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_study_config(yaml, "s.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const std::string kHead = "format: hybridsim-study/1\n";

}  // namespace

TEST_CASE("study config: the shipped study files parse") {
  const std::filesystem::path dir = std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios" / "study";
  const auto full = analysis::load_study_config(dir / "hybrid-vs-dp.yaml");
  REQUIRE(full.networks.size() == 3);
  CHECK(full.networks[0].name == "inception-v3");
  CHECK(full.networks[0].partitioner == workloads::Partitioner::Branches);  // its towers in parallel
  CHECK(full.networks[1].curve.network == "gnmt");
  CHECK(full.networks[2].dataset.samples == 40'000'000);
  CHECK(full.gpus == std::vector<int>{8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384});
  CHECK(full.mp == std::vector<int>{2, 4});
  CHECK(topology::ib_bandwidth_of(full.cluster) == sim::Bandwidth::bytes_per_second(12'500'000'000));  // EDR
  CHECK(full.ib_factors == std::vector<double>{2.0});
  // Inception-V3 and GNMT add a curve of another shape to optimistic/pessimistic; BigLSTM has two.
  CHECK(full.networks[0].sensitivity_curves.size() == 3);
  CHECK(full.networks[0].sensitivity_curves[2].variant == "lars_v06");
  CHECK(full.networks[1].sensitivity_curves[2].variant == "measured");
  CHECK(full.networks[2].sensitivity_curves.size() == 2);
  CHECK(full.output == "out/study/hybrid-vs-dp");
  CHECK(full.fast_path == sim::FastPath::Bounded);  // the full grid folds rings within 0.1%
  const auto quick = analysis::load_study_config(dir / "quick.yaml");
  // communication.fast_path not written: a scenario's default, bounded
  CHECK(quick.fast_path == sim::FastPath::Bounded);
  CHECK(quick.gpus.back() == 512);
  CHECK(quick.ib_factors.empty());
  const auto ci = analysis::load_study_config(dir / "ci.yaml");
  CHECK(ci.gpus == std::vector<int>{8, 16, 32});
}

TEST_CASE("study config: every field, custom curves and a profile file") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hybridsim-study-config-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    workloads::Profile p = workloads::builtin_profile("biglstm");
    p.meta.network = "my-lstm";
    std::ofstream out(dir / "my.yaml");
    workloads::save_profile(p, out);
  }
  const std::string yaml =
      kHead +
      "title: t\n"
      "networks:\n"
      "  - gnmt\n"
      "  - {name: inception-v3, variant: pessimistic, partitioner: layers, sensitivity: []}\n"
      "  - profile: my.yaml\n"
      "    efficiency: biglstm\n"
      "    curve: {table: [[1024, 25], [4096, 40]]}\n"
      "    dataset_samples: 1000\n"
      "gpus: [16, 64]\n"
      "mp: [2]\n"
      "cluster: {preset: dgx1-v100, ib_bandwidth: 200 Gb/s, fabric: rail-optimized, "
      "oversubscription: 2}\n"
      "communication: {algorithm: hierarchical, bucket_size: 6.25 MB, message_size: 1 MiB, "
      "fast_path: bounded}\n"
      "sensitivity: {variants: [optimistic], ib_factors: [2, 4]}\n"
      "output: out/x\n"
      "threads: 3\n";
  std::ofstream(dir / "s.yaml") << yaml;
  const auto c = analysis::load_study_config(dir / "s.yaml");
  CHECK(c.title == "t");
  REQUIRE(c.networks.size() == 3);
  CHECK(c.networks[0].sensitivity_curves.size() == 1);  // the study-level [optimistic]
  CHECK(c.networks[1].curve.variant == "pessimistic");
  CHECK(c.networks[1].partitioner == workloads::Partitioner::Layers);
  CHECK(c.networks[1].sensitivity_curves.empty());
  CHECK(c.networks[2].name == "my-lstm");
  CHECK(c.networks[2].curve.variant == "custom");
  CHECK(c.networks[2].curve.efficiency.epochs(4096).epochs == 40);
  CHECK(c.networks[2].sensitivity_curves.empty());  // a custom curve has no built-in siblings
  CHECK(c.networks[2].dataset.samples == 1000);
  CHECK(topology::ib_bandwidth_of(c.cluster) == sim::Bandwidth::bytes_per_second(25'000'000'000));
  CHECK(c.cluster.fabric == topology::presets::Fabric::RailOptimized);
  CHECK(c.cluster.oversubscription == 2.0);
  CHECK(c.algorithm == workloads::AllReduceAlgorithm::Hierarchical);
  CHECK(c.bucket_size == sim::Bytes::of(6'250'000));
  CHECK(c.message_size == sim::Bytes::mib(1));
  CHECK(c.fast_path == sim::FastPath::Bounded);
  CHECK(c.ib_factors == std::vector<double>{2.0, 4.0});
  CHECK(c.output == "out/x");
  CHECK(c.threads == 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("study config: errors name the place, the field and what was expected") {
  // Line 2, column 1: the misspelt key.
  CHECK(error_of(kHead + "gpu: [8]\nnetworks: [gnmt]\ngpus: [8]\n") ==
        "s.yaml:2:1: gpu: unknown field (did you mean 'gpus'?); expected one of: format, title, networks, "
        "gpus, mp, "
        "cluster, workload, communication, sensitivity, output, threads");
  CHECK(error_of("networks: [gnmt]\ngpus: [8]\n") ==
        "s.yaml:1:1: format: missing required field; expected hybridsim-study/1");
  CHECK(error_of("format: hybridsim-study/2\nnetworks: [gnmt]\ngpus: [8]\n") ==
        "s.yaml:1:9: format: got \"hybridsim-study/2\"; expected hybridsim-study/1");
  // gpus must increase: the 8 after 16 is at line 3, column 12.
  CHECK(error_of(kHead + "networks: [gnmt]\ngpus: [16, 8]\n") ==
        "s.yaml:3:12: gpus[1]: got 8 after 16; expected values in increasing order without repeats");
  CHECK(error_of(kHead + "networks: [gnmt]\ngpus: [1]\n") ==
        "s.yaml:3:8: gpus[0]: got \"1\"; expected a whole number from 2 to 1000000");
  CHECK(error_of(kHead + "networks: [gnmt]\ngpus: [8]\nmp: [2, x]\n") ==
        "s.yaml:4:9: mp[1]: got \"x\"; expected a whole number from 2 to 1000000");
  CHECK(
      error_of(kHead + "networks: [gnmt, resnet]\ngpus: [8]\n") ==
      "s.yaml:2:18: networks[1]: unknown value \"resnet\"; expected a built-in network (inception-v3, gnmt, "
      "biglstm) or a mapping");
  CHECK(error_of(kHead + "networks: [gnmt, gnmt]\ngpus: [8]\n") ==
        "s.yaml:2:18: networks[1]: \"gnmt\" appears twice; expected each network once");
  CHECK(error_of(kHead + "networks: [gnmt]\ngpus: [8]\ncluster: {ib_bandwidth: fast}\n") ==
        "s.yaml:4:25: cluster.ib_bandwidth: got \"fast\"; expected a bandwidth such as \"25 GB/s\" or \"100 "
        "Gb/s\", > 0");
  CHECK(
      error_of(kHead + "networks: [gnmt]\ngpus: [8]\ncluster: {preset: ideal-ring}\n") ==
      "s.yaml:4:19: cluster.preset: cluster preset \"ideal-ring\": expected a machine preset that can form a "
      "cluster: dgx1-v100, dgx2, nvswitch, dgx-a100, dgx-h100, hgx-h200 or pcie-server");
  const std::string variant = error_of(kHead + "networks: [{name: gnmt, variant: wild}]\ngpus: [8]\n");
  CHECK(variant.find(
            "s.yaml:2:34: networks[0].variant: unknown statistical-efficiency curve \"gnmt/wild\"") == 0);
  CHECK(variant.find("gnmt/measured") != std::string::npos);  // the known curves are listed
  CHECK(error_of(kHead + "networks: [{name: gnmt, profile: x.yaml}]\ngpus: [8]\n") ==
        "s.yaml:2:12: networks[0]: both name and profile given; expected exactly one of name (a built-in "
        "profile) "
        "or profile (a file)");
  CHECK(error_of(kHead + "networks: [{name: gnmt, curve: {e_min: 3}}]\ngpus: [8]\n") ==
        "s.yaml:2:32: networks[0].curve.b_noise: missing required field (the parametric form needs e_min, "
        "b_noise "
        "and supported); expected a number > 0, or give table instead");
  CHECK(error_of(kHead + "networks: [{name: gnmt, curve: {table: [[2, 1], [1, 2]]}}]\ngpus: [8]\n") ==
        "s.yaml:2:50: networks[0].curve.table[1]: batch 1 does not follow 2; expected strictly increasing "
        "batches");
  // A table reads as a scenario's training.efficiency.table does (scenarios/loader/efficiency_points.h).
  CHECK(error_of(kHead + "networks: [{name: gnmt, curve: {table: [[1024, 25]]}}]\ngpus: [8]\n") ==
        "s.yaml:2:40: networks[0].curve.table: got 1 item; expected at least 2: a list of [global batch, "
        "epochs]");
  CHECK(error_of(kHead + "networks: [{name: gnmt, curve: {table: [[1024, 25], [2048]]}}]\ngpus: [8]\n") ==
        "s.yaml:2:53: networks[0].curve.table[1]: got a list; expected [global batch, epochs]: a whole batch "
        ">= 1 and "
        "epochs > 0, at most 1,000,000 epochs");
  // A curve past the epochs limit (scenarios/loader/efficiency_points.h): as written, or at a global batch of
  // the grid (gnmt's 128 a GPU: 1 GPU is 128, 8 GPUs 1,024), refused at the curve before any step runs.
  CHECK(error_of(kHead + "networks: [{name: gnmt, curve: {e_min: 1e300, b_noise: 2, supported: [1, 2]}}]\n"
                         "gpus: [8]\n") ==
        "s.yaml:2:40: networks[0].curve.e_min: got \"1e300\"; expected a number > 0 and <= 1000000");
  CHECK(error_of(kHead + "networks: [{name: gnmt, curve: {e_min: 3, b_noise: 1e-300, supported: [1, 2]}}]\n"
                         "gpus: [8]\n") ==
        "s.yaml:2:32: networks[0].curve: at the global batch 128 the curve gives 3.84e+302 epochs, over the "
        "limit "
        "of 1,000,000 epochs (a b_noise far under the batch) (1 data-parallel worker); expected a curve "
        "within it at every global batch of the grid");
  CHECK(error_of(kHead + "networks: [{name: gnmt, curve: {table: [[128, 1], [256, 1000]]}}]\ngpus: [64]\n")
            .find("at the global batch 8192 the curve gives") != std::string::npos);
  CHECK(
      error_of(kHead +
               "networks: [{name: gnmt, curve: {e_min: 3, b_noise: 2, supported: [1, 2], table: []}}]\n"
               "gpus: [8]\n") ==
      "s.yaml:2:40: networks[0].curve.e_min: cannot be combined with table; expected either table or e_min, "
      "b_noise, supported");
  CHECK(error_of(kHead + "networks: [gnmt]\ngpus: [8]\ncommunication: {algorithm: star}\n") ==
        "s.yaml:4:28: communication.algorithm: unknown value \"star\"; expected one of: auto, ring, tree, "
        "hierarchical");
  CHECK(error_of(kHead + "networks: [gnmt]\ngpus: [8]\ncommunication: {fast_path: fast}\n") ==
        "s.yaml:4:28: communication.fast_path: unknown value \"fast\"; expected one of: auto, bounded, off");
  CHECK(error_of(kHead + "networks: [gnmt]\ngpus: [8]\nsensitivity: {ib_factors: [0]}\n") ==
        "s.yaml:4:28: sensitivity.ib_factors[0]: got \"0\"; expected a number > 0 and <= 1000");
  // A study-wide variant a network lacks is refused where it is written, not at the network
  // (Inception-V3 has no "measured" curve; GNMT does).
  const std::string study_wide = error_of(
      kHead + "networks: [gnmt, inception-v3]\ngpus: [8]\nsensitivity: {variants: [optimistic, measured]}\n");
  CHECK(study_wide.find("s.yaml:4:38: sensitivity.variants[1]: unknown statistical-efficiency curve "
                        "\"inception-v3/measured\"") == 0);
  CHECK(
      error_of(kHead + "networks: [{name: gnmt}]\ngpus: [8]\nsensitivity: {variants: [nope]}\n")
          .find("s.yaml:4:26: sensitivity.variants[0]: unknown statistical-efficiency curve \"gnmt/nope\"") ==
      0);
  CHECK(error_of(kHead + "networks: [gnmt\n") == "s.yaml:3:1: invalid YAML: end of sequence flow not found");
}

TEST_CASE(
    "study config: the rules every YAML input shares — repeated and unknown keys, keys that are not text") {
  // Before the shared reader, a repeated key was silently ignored (the first value won).
  CHECK(error_of(kHead + "networks: [gnmt]\ngpus: [8]\ngpus: [16]\n") ==
        "s.yaml:4:1: invalid YAML: repeated key 'gpus'");
  CHECK(error_of(kHead + "networks: [gnmt]\ngpus: [8]\n{a: 1}: 2\n") ==
        "s.yaml:4:1: invalid YAML: a key must be plain text, not a list or mapping");
  CHECK(error_of(kHead + "networks: [{name: gnmt, varaint: measured}]\ngpus: [8]\n") ==
        "s.yaml:2:25: networks[0].varaint: unknown field (did you mean 'variant'?); expected one of: name, "
        "profile, "
        "efficiency, variant, curve, dataset_samples, partitioner, sensitivity, communication");
  CHECK(error_of(kHead + "networks: [gnmt]\ngpus: [8]\n---\n") ==
        "s.yaml:5:1: invalid YAML: expected one document, found 2 (remove the extra '---')");
  CHECK(error_of("") == "s.yaml:1:1: format: missing required field; expected hybridsim-study/1");
}

TEST_CASE("study config: an alias bomb, a directory and a device are refused at once, naming the file") {
  const auto error_loading = [](const std::filesystem::path& path) {
    try {
      analysis::load_study_config(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string bomb = std::string(HYBRIDSIM_SOURCE_DIR) + "/tests/data/bad/alias-bomb-study.yaml";
  CHECK(error_loading(bomb) ==
        bomb +
            ":9:14: invalid YAML: more than 250000 nodes once aliases are expanded (the "
            "limit for any input file); expected a smaller document or fewer aliases");
  const std::string dir = std::string(HYBRIDSIM_SOURCE_DIR) + "/scenarios/study";
  CHECK(error_loading(dir) == "cannot open study file \"" + dir + "\": is a directory");
  CHECK(error_loading("/dev/zero") ==
        "cannot open study file \"/dev/zero\": not a regular file (a character device)");
}

TEST_CASE("study config: the schema table is well formed and analysis/README.md holds its reference") {
  test::check_well_formed(analysis::study_schema());
  test::check_defaults(analysis::study_schema());
  test::check_reference_block("analysis/README.md", analysis::study_schema().reference_markdown());
}

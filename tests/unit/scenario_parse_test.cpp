// Scenario files: defaults from the schema, a full round trip through YAML, and --set overrides.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scenarios/loader/scenario.h"
#include "sim/error.h"

using namespace hybridsim;
using namespace hybridsim::scenarios;

namespace {

constexpr const char* kMinimal = "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n";

// Every field away from its default, so the round trip exercises every reader and writer.
constexpr const char* kFull = R"(name: "everything: set"
description: a scenario with every field away from its default
cluster:
  preset: dgx2
  nodes: 3
  gpus_per_node: 4
  fabric: rail-optimized
  oversubscription: 2.5
  leaf_radix: 8
  spines: 3
  links:
    nvswitch: {bandwidth: 50 GB/s, latency: 400 ns}
    pcie: {bandwidth: 15.75 GB/s, latency: 600 ns}
    cpu: {bandwidth: 20 GB/s}
    infiniband: {bandwidth: 200 Gb/s, latency: 1 us}
workload:
  network: biglstm
  batch_per_worker: 64
  compute_speed: 1.5
parallelism:
  dp: 4
  mp: 2
  placement:
    - {match: "lstm*", gpu: 1}
    - {match: "*", gpu: 0}
  mapping: [[0, 1], [2, 3], [4, 5], [6, 7]]
communication:
  algorithm: hierarchical
  channels: 4
  message_size: 256 KiB
  bucket_size: 50 MB
  reduction_bandwidth: off
  switching: store-and-forward
  compute_contention: off
  gradient_copies: off
  pcie_only: true
training:
  network: biglstm
  efficiency: {table: [[1024, 25], [4096, 30.5]], max_batch: 8192}
  dataset_samples: 40000000
variability: {steps: 4, seed: 7, kernel_jitter: 0.05, sequence_lengths: wmt16-en-de, batching: random,
              length_buckets: 3, trace_step: 3}
outputs:
  directory: results/full
  formats: [csv, json]
  trace: {file: t.json.gz, detail: messages, gpus: "0-3,6", window: "1 ms:2.5 ms", gzip: true}
sweep:
  mode: zip
  parameters:
    - {path: communication.message_size, values: [128 KiB, 1 MiB]}
    - {path: parallelism, values: [{dp: 8, mp: 1}, {dp: 2, mp: 4, placement: layers}]}
)";

std::string error_of(const std::string& text, std::vector<std::string> overrides = {}) {
  try {
    parse_scenario(text, "s.yaml", overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("scenario: absent fields take the schema's defaults, which match the structs' initializers") {
  const Scenario s = parse_scenario(kMinimal, "dir/minimal.yaml");
  CHECK(s.name == "minimal");  // the file name without .yaml
  CHECK(s.cluster.preset == "dgx1-v100");
  CHECK(s.cluster.nodes == 1);
  CHECK_FALSE(s.cluster.gpus_per_node);
  CHECK(s.cluster.fabric == topology::presets::Fabric::FatTree);
  CHECK(s.cluster.oversubscription == 1.0);
  CHECK(s.cluster.leaf_radix == 16);
  CHECK_FALSE(s.cluster.spines);
  CHECK(s.cluster.links == LinkOverrides{});
  CHECK(s.workload.network == "gnmt");
  CHECK_FALSE(s.workload.batch_per_worker);
  CHECK(s.workload.compute_speed == 1.0);
  CHECK(s.parallelism == ParallelismSettings{});
  // The schema's default texts ("512 KiB", "25 MB", "auto") give exactly the struct defaults.
  CHECK(s.communication == CommunicationSettings{});
  CHECK(s.communication.message_size == sim::Bytes::of(524'288));
  CHECK(s.communication.bucket_size == sim::Bytes::of(25'000'000));
  CHECK_FALSE(s.communication.reduction_bandwidth);  // auto: the simulated GPU's, at resolve
  CHECK(s.training == TrainingSettings{});
  CHECK(s.training.efficiency.variant == "default");
  CHECK(s.outputs.directory == "out/minimal");
  CHECK(s.outputs.formats == std::vector<OutputFormat>{OutputFormat::Table});
  CHECK_FALSE(s.outputs.trace);
  CHECK(s.sweep.parameters.empty());
  CHECK(s.base_dir == ".");
  // A trace block with no fields turns tracing on with its defaults.
  const Scenario t = parse_scenario(std::string(kMinimal) + "outputs: {trace: {}}\n", "t.yaml");
  REQUIRE(t.outputs.trace);
  CHECK(*t.outputs.trace == TraceSettings{});
  CHECK(t.outputs.trace->file == "trace.json");
}

TEST_CASE("scenario: every field is read with its unit") {
  const Scenario s = parse_scenario(kFull, "full.yaml");
  CHECK(s.name == "everything: set");
  CHECK(s.cluster.preset == "dgx2");
  CHECK(s.cluster.nodes == 3);
  CHECK(s.cluster.gpus_per_node == 4);
  CHECK(s.cluster.fabric == topology::presets::Fabric::RailOptimized);
  CHECK(s.cluster.oversubscription == 2.5);
  CHECK(s.cluster.spines == 3);
  CHECK(s.cluster.links[sim::LinkKind::NVSwitch].bandwidth == sim::Bandwidth::gb_per_second(50));
  CHECK(s.cluster.links[sim::LinkKind::NVSwitch].latency == sim::Time::ns(400));
  CHECK(s.cluster.links[sim::LinkKind::PCIe].bandwidth == sim::Bandwidth::bytes_per_second(15'750'000'000));
  CHECK_FALSE(s.cluster.links[sim::LinkKind::CpuInterconnect].latency);
  CHECK(s.cluster.links[sim::LinkKind::InfiniBand].bandwidth ==
        sim::Bandwidth::bytes_per_second(25'000'000'000));  // 200 Gb/s
  CHECK(s.workload.batch_per_worker == 64);
  CHECK(s.workload.compute_speed == 1.5);
  CHECK(s.parallelism.placement.kind == PlacementSettings::Kind::Rules);
  CHECK(s.parallelism.placement.rules == std::vector<PlacementRuleSetting>{{"lstm*", 1}, {"*", 0}});
  CHECK(s.parallelism.mapping == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(s.communication.algorithm == workloads::AllReduceAlgorithm::Hierarchical);
  CHECK(s.communication.channels == 4);
  CHECK(s.communication.message_size == sim::Bytes::kib(256));
  CHECK(s.communication.reduction_bandwidth == sim::Bandwidth());  // off
  CHECK(s.communication.switching == sim::Switching::StoreAndForward);
  CHECK(s.communication.pcie_only);
  CHECK(s.training.efficiency.kind == EfficiencySettings::Kind::Table);
  CHECK(s.training.efficiency.table ==
        std::vector<std::pair<std::int64_t, double>>{{1024, 25.0}, {4096, 30.5}});
  CHECK(s.training.efficiency.max_batch == 8192);
  CHECK(s.training.dataset_samples == 40'000'000);
  CHECK(s.variability == workloads::Variability{4, 7, 0.05, workloads::LengthDistribution::Wmt16EnDe,
                                                workloads::Batching::Random, 3});
  CHECK(s.communication.compute_contention == false);
  CHECK(s.communication.gradient_copies == false);
  CHECK(s.outputs.formats == std::vector<OutputFormat>{OutputFormat::Csv, OutputFormat::Json});
  REQUIRE(s.outputs.trace);
  CHECK(s.outputs.trace->gpus == TraceGpus{.all = false, .list = std::vector<int>{0, 1, 2, 3, 6}});
  CHECK(s.trace_step == 3);
  CHECK(s.outputs.trace->window == sim::TimeWindow{sim::Time::ms(1), sim::Time::us(2500)});
  CHECK(s.outputs.trace->detail == TraceDetail::Messages);
  CHECK(s.sweep.mode == SweepSettings::Mode::Zip);
  REQUIRE(s.sweep.parameters.size() == 2);
  CHECK(s.sweep.parameters[1].values ==
        std::vector<std::string>{"{dp: 8, mp: 1}", "{dp: 2, mp: 4, placement: layers}"});
  // Locations are 1-based file:line:col of the value: line 5 is "  nodes: 3" (the 3 in column 10);
  // line 25 is '    - {match: "*", gpu: 0}' (the 0 in column 25).
  CHECK(location_of(s, "cluster.nodes") == "full.yaml:5:10");
  CHECK(location_of(s, "parallelism.placement[1].gpu") == "full.yaml:25:25");
  CHECK(location_of(s, "communication.message_size") == "full.yaml:30:17");
  // A field left at its default is located at its section: "    cpu: {bandwidth: 20 GB/s}" (line 14).
  CHECK(location_of(s, "cluster.links.cpu.latency") == "full.yaml:14:10");
}

TEST_CASE("scenario: round trip — a scenario written as YAML and read back is equal") {
  const Scenario full = parse_scenario(kFull, "full.yaml");
  const std::string yaml = scenario_to_yaml(full);
  const Scenario again = parse_scenario(yaml, "full.yaml");
  CHECK(again == full);
  CHECK(scenario_to_yaml(again) == yaml);  // the canonical text is a fixed point

  const Scenario minimal = parse_scenario(kMinimal, "minimal.yaml");
  CHECK(parse_scenario(scenario_to_yaml(minimal), "minimal.yaml") == minimal);

  // Parametric efficiency and a named one survive too.
  const Scenario p = parse_scenario(
      std::string(kMinimal) + "training: {efficiency: {e_min: 3.15, b_noise: 9057}}\n", "p.yaml");
  CHECK(p.training.efficiency.kind == EfficiencySettings::Kind::Parametric);
  CHECK(p.training.efficiency.e_min == 3.15);
  CHECK(parse_scenario(scenario_to_yaml(p), "p.yaml") == p);
  // The canonical form of the minimal scenario, spelled out: every default explicit.
  CHECK(scenario_to_yaml(minimal) ==
        "name: minimal\n"
        "cluster:\n  preset: dgx1-v100\n  nodes: 1\n  gpus_per_node: auto\n  fabric: fat-tree\n"
        "  oversubscription: 1\n  leaf_radix: 16\n  spines: auto\n  gpu_memory: auto\n"
        "workload:\n  network: gnmt\n  batch_per_worker: auto\n  compute_speed: 1\n  gpu_speeds: []\n"
        "parallelism:\n  dp: 1\n  mp: 1\n  placement: auto\n  mapping: auto\n"
        "communication:\n  algorithm: auto\n  protocol: auto\n  channels: auto\n  message_size: 512 KiB\n  "
        "bucket_size: 25 MB\n"
        "  reduction_bandwidth: auto\n  switching: cut-through\n"
        "  compute_contention: on\n  gradient_copies: on\n  ddp: torch\n  exchange: every-micro-batch\n"
        "  pcie_only: false\n"
        "training:\n  network: auto\n  efficiency: default\n  dataset_samples: auto\n  global_batch: auto\n"
        "variability:\n  steps: 1\n  seed: 1\n  kernel_jitter: 0\n  sequence_lengths: fixed\n  batching: "
        "bucketed\n"
        "  length_buckets: 5\n"
        "outputs:\n  directory: out/minimal\n  formats: [table]\n");
}

// outputs.trace.gpus says what `hybridsim run --trace-gpus` says: all is every GPU, and the
// default (left out, or "classes") one GPU per class; each is written back as it was read.
TEST_CASE("scenario: outputs.trace.gpus and variability.trace_step, their words and write-back") {
  const auto with = [](const std::string& extra) {
    return parse_scenario(std::string(kMinimal) + extra, "w.yaml");
  };
  const Scenario left_out = with("outputs: {trace: {}}\n");
  CHECK(left_out.outputs.trace->gpus == TraceGpus{});
  CHECK(with("outputs: {trace: {gpus: classes}}\n").outputs.trace->gpus == TraceGpus{});
  const Scenario all = with("outputs: {trace: {gpus: all}}\n");
  CHECK(all.outputs.trace->gpus.all);
  CHECK_FALSE(all.outputs.trace->gpus.list);
  for (const Scenario& s : {left_out, all, with("outputs: {trace: {gpus: \"2-3\"}}\n")})
    CHECK(parse_scenario(scenario_to_yaml(s), "w.yaml") == s);
  CHECK(scenario_to_yaml(left_out).find("gpus: classes\n") != std::string::npos);
  CHECK(scenario_to_yaml(all).find("gpus: all\n") != std::string::npos);

  CHECK(with("").trace_step == 1);
  CHECK(with("variability: {steps: 5, trace_step: first}\n").trace_step == 1);
  const Scenario slowest = with("variability: {steps: 5, trace_step: slowest}\n");
  CHECK(slowest.trace_step == kSlowestTraceStep);
  CHECK(with("variability: {steps: 5, trace_step: 4}\n").trace_step == 4);
  // No value (a fuzzer's find: an internal error before) is the key left out, as for any other key.
  CHECK(with("variability: {steps: 3, trace_step: ,}\n").trace_step == 1);
  CHECK(with("variability: {steps: 3, trace_step: }\n").trace_step == 1);
  CHECK(scenario_to_yaml(slowest).find("  trace_step: slowest\n") != std::string::npos);
  CHECK(parse_scenario(scenario_to_yaml(slowest), "w.yaml") == slowest);
  CHECK(error_of(std::string(kMinimal) + "variability: {trace_step: last}\n", {}).ends_with(
      ": variability.trace_step: got \"last\"; expected first, slowest or a whole number from 1 to 10000"));
}

TEST_CASE("scenario: --set overrides scalars, units and whole mappings before validation") {
  const std::string base = std::string(kMinimal) + "parallelism: {dp: 8, placement: layers}\n";
  // A scalar, located at the override rather than the file.
  const Scenario a = parse_scenario(base, "s.yaml", std::vector<std::string>{"cluster.nodes=4"});
  CHECK(a.cluster.nodes == 4);
  CHECK(location_of(a, "cluster.nodes") == "--set cluster.nodes=4");
  CHECK(a.provenance.overrides == std::vector<std::string>{"cluster.nodes=4"});
  // A value with a unit and a space (the shell passes communication.message_size=256 KiB).
  const Scenario b =
      parse_scenario(base, "s.yaml", std::vector<std::string>{"communication.message_size=256 KiB"});
  CHECK(b.communication.message_size == sim::Bytes::kib(256));
  // A mapping replaces the whole section: placement returns to its default.
  const Scenario c = parse_scenario(base, "s.yaml", std::vector<std::string>{"parallelism={dp: 4, mp: 2}"});
  CHECK(c.parallelism.dp == 4);
  CHECK(c.parallelism.mp == 2);
  CHECK(c.parallelism.placement.kind == PlacementSettings::Kind::Auto);
  // Later overrides win; null removes the key (back to its default).
  const Scenario d =
      parse_scenario(base, "s.yaml", std::vector<std::string>{"parallelism.dp=2", "parallelism.dp=null"});
  CHECK(d.parallelism.dp == 1);
  // An empty value (an unset shell variable) is refused, not read as null.
  CHECK_THROWS_WITH_AS(parse_scenario(base, "s.yaml", std::vector<std::string>{"parallelism.dp= "}),
                       "--set parallelism.dp= : the value is empty (an unset shell variable?); expected "
                       "path=value, or parallelism.dp=null to remove the key (its default again)",
                       InputError);
  // A field under a scalar turns it into a mapping: a named curve becomes a parametric one.
  const Scenario e = parse_scenario(
      base, "s.yaml",
      std::vector<std::string>{"training.efficiency.e_min=3", "training.efficiency.b_noise=9000"});
  CHECK(e.training.efficiency.kind == EfficiencySettings::Kind::Parametric);
  CHECK(e.training.efficiency.b_noise == 9000.0);
  // A section absent from the file is created.
  const Scenario f =
      parse_scenario(kMinimal, "s.yaml", std::vector<std::string>{"outputs.trace.detail=messages"});
  REQUIRE(f.outputs.trace);
  CHECK(f.outputs.trace->detail == TraceDetail::Messages);
}

TEST_CASE("scenario: --set errors name the override, with a suggestion for a near-miss path") {
  CHECK(error_of(kMinimal, {"cluster.node=4"}) ==
        "--set cluster.node=4: unknown field 'cluster.node' (did you mean 'cluster.nodes'?)");
  CHECK(error_of(kMinimal, {"comunication.message_size=1 MB"}) ==
        "--set comunication.message_size=1 MB: unknown field 'comunication.message_size' (did you mean "
        "'communication.message_size'?)");
  // With no near name, the fields of the section it names (a file's refusal lists them too): "unknown
  // field 'training.accumulation'" alone left a DeepSpeed user to guess that it is global_batch.
  CHECK(error_of(kMinimal, {"frobnicate=1"}) ==
        "--set frobnicate=1: unknown field 'frobnicate' (a scenario's fields: name, description, cluster, "
        "workload, parallelism, pipeline, communication, training, variability, simulation, outputs, sweep)");
  CHECK(error_of(kMinimal, {"training.accumulation=4"}) ==
        "--set training.accumulation=4: unknown field 'training.accumulation' (training's fields: network, "
        "efficiency, dataset_samples, global_batch, micro_batch, recompute)");
  CHECK(error_of(kMinimal, {"cluster.links.nvlink.speed=1 GB/s"})
            .ends_with("unknown field 'cluster.links.nvlink.speed' (cluster.links.nvlink's fields: "
                       "bandwidth, latency)"));
  CHECK(error_of(kMinimal, {"cluster.nodes"}).starts_with("--set cluster.nodes: expected path=value"));
  CHECK(error_of(kMinimal, {"cluster.nodes=four"}) ==
        "--set cluster.nodes=four: cluster.nodes: got \"four\"; expected a whole number from 1 to 8192");
  CHECK(
      error_of(kMinimal, {"parallelism={dp: 4, mp: 0}"}) ==
      "--set parallelism={dp: 4, mp: 0}: parallelism.mp: got \"0\"; expected a whole number from 1 to 4096");
  CHECK(error_of(kMinimal, {"parallelism={dp: 4"}).starts_with("--set parallelism={dp: 4: invalid YAML: "));
  // List items cannot be set one by one; the whole list can.
  CHECK(error_of(kMinimal, {"parallelism.placement[0].gpu=1"}).starts_with(
      "--set parallelism.placement[0].gpu=1: unknown field 'parallelism.placement[0].gpu'"));
}

TEST_CASE("scenario: an override's refusal and location quote it as its OverrideOrigin spells it") {
  // The Python module spells set={'nope': 1}; an override it did not spell reads as --set.
  const OverrideOrigin py{.spelled = {"set={'cluster.nodes': 4}", "set={'nope': 1}"}};
  const std::vector<std::string> both{"cluster.nodes=4", "nope=1"};
  CHECK_THROWS_WITH_AS(parse_scenario(kMinimal, "s.yaml", both, ".", py),
                       "set={'nope': 1}: unknown field 'nope' (did you mean 'name'?)", InputError);
  const Scenario a = parse_scenario(kMinimal, "s.yaml", std::vector<std::string>{"cluster.nodes=4"}, ".", py);
  CHECK(location_of(a, "cluster.nodes") == "set={'cluster.nodes': 4}");
  CHECK(OverrideOrigin{}.where(0, "nope=1") == "--set nope=1");
  CHECK(py.where(2, "nope=1") == "--set nope=1");
  // Set twice: both named as written.
  const std::vector<std::string> twice{"cluster.nodes=4", "cluster.nodes=2"};
  CHECK_THROWS_WITH_AS(
      check_overrides_once(twice, {.spelled = {"set[0]='cluster.nodes=4'", "parallelism=Parallelism(dp=2)"}}),
      "parallelism=Parallelism(dp=2): cluster.nodes is set twice (first by "
      "set[0]='cluster.nodes=4'), and only the last would count; expected each field set once",
      InputError);
  CHECK_THROWS_WITH_AS(
      check_overrides_once(twice),
      "--set cluster.nodes=2: cluster.nodes is set twice (first by --set cluster.nodes=4), and "
      "only the last would count; expected each field set once",
      InputError);
  // A long spelling is cut as a long --set text is.
  const std::string long_spelling = "set={'workload.network': '" + std::string(200, 'x') + "'}";
  CHECK(OverrideOrigin{.spelled = {long_spelling}}.where(0, "workload.network=x") ==
        long_spelling.substr(0, 80) + "... (228 bytes)");
}

TEST_CASE("workload.gpu_speeds: per-GPU speeds parse, round-trip and refuse a GPU listed twice") {
  const Scenario s = parse_scenario(
      std::string(kMinimal) + "\n", "s.yaml",
      std::vector<std::string>{"workload.gpu_speeds=[{gpu: 3, speed: 0.5}, {gpu: 0, speed: 2}]"});
  REQUIRE(s.workload.gpu_speeds.size() == 2);
  CHECK(s.workload.gpu_speeds[0] == GpuSpeedSetting{3, 0.5});
  CHECK(s.workload.gpu_speeds[1] == GpuSpeedSetting{0, 2.0});
  CHECK(parse_scenario(scenario_to_yaml(s), "s.yaml") == s);
  CHECK(parse_scenario(kMinimal, "s.yaml").workload.gpu_speeds.empty());
}

TEST_CASE("scenario: an override a later one would make count for nothing is refused, naming both") {
  // A section set whole after a field inside it replaces the field: it ran with the section's
  // default, exit 0, while the run's scenario line said the field was set.
  CHECK_THROWS_WITH_AS(
      check_overrides_once(
          std::vector<std::string>{"communication.bucket_size=50MB", "communication={algorithm: tree}"}),
      "--set communication={algorithm: tree}: replaces the whole of communication, so "
      "communication.bucket_size set before it (by --set communication.bucket_size=50MB) would never count; "
      "expected communication.bucket_size inside this value, or set after it",
      InputError);
  CHECK_THROWS_WITH_AS(check_overrides_once(std::vector<std::string>{"parallelism.dp=2", "parallelism=null"}),
                       doctest::Contains("--set parallelism=null: replaces the whole of parallelism, so "
                                         "parallelism.dp set before it"),
                       InputError);
  // A field set again inside a section's value given before: the value's is lost.
  CHECK_THROWS_WITH_AS(
      check_overrides_once(std::vector<std::string>{"parallelism={dp: 4}", "parallelism.dp=2"}),
      "--set parallelism.dp=2: parallelism.dp is set twice (first by --set parallelism={dp: 4}), and only "
      "the last would count; expected each field set once",
      InputError);
  const auto lost = lost_override("cluster={preset: dgx1-v100, links: {nvlink: {bandwidth: 50 GB/s}}}",
                                  "cluster.links.nvlink.bandwidth=25 GB/s");
  REQUIRE(lost);
  CHECK(lost->field == "cluster.links.nvlink.bandwidth");
  // Both count: a field the section's value does not write, set after it; a section removed, then
  // a field of it set again; fields side by side; a value that is no mapping (refused by its own
  // parse, not here); a field whose name only begins as the section's does.
  CHECK_NOTHROW(check_overrides_once(std::vector<std::string>{"parallelism={mp: 2}", "parallelism.dp=2"}));
  CHECK_NOTHROW(check_overrides_once(std::vector<std::string>{"parallelism=null", "parallelism.dp=2"}));
  CHECK_NOTHROW(check_overrides_once(std::vector<std::string>{"parallelism.dp=2", "parallelism.mp=2"}));
  CHECK_NOTHROW(check_overrides_once(std::vector<std::string>{"communication=50MB", "communication.x=1"}));
  CHECK_FALSE(lost_override("parallelism={dp: 2}", "parallelism.dpx=1"));
}

TEST_CASE("scenario: a YAML merge key '<<' reads the mapping it names, the mapping's own keys first") {
  // yaml-cpp leaves merge keys to the reader: "<<" was refused as an unknown field, "did you mean".
  const Scenario s = parse_scenario(std::string(kMinimal) +
                                        "communication: &c {algorithm: ring, message_size: 1 MiB}\n"
                                        "sweep:\n  parameters:\n    - path: communication\n"
                                        "      values: [*c, {<<: *c, algorithm: tree}]\n",
                                    "s.yaml");
  CHECK(s.communication.message_size == sim::Bytes::mib(1));
  // The sweep's second value: the anchor's entries, its own algorithm first.
  REQUIRE(s.sweep.parameters.size() == 1);
  REQUIRE(s.sweep.parameters[0].values.size() == 2);
  const std::string& merged = s.sweep.parameters[0].values[1];
  CAPTURE(merged);
  CHECK(merged.find("algorithm: tree") != std::string::npos);
  CHECK(merged.find("ring") == std::string::npos);
  CHECK(merged.find("message_size: 1 MiB") != std::string::npos);
  const std::string misspelt =
      error_of(std::string(kMinimal) + "communication: {<<: {algorithm: ring, mesage_size: 1 MiB}}\n");
  CHECK(misspelt.starts_with("s.yaml:"));
  CHECK(misspelt.find("communication.mesage_size: unknown field") != std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "communication: {<<: {algorithm: ring}, channels: 2}\n") == "");
}

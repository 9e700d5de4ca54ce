// Fabric keys (cluster.fabric, oversubscription, leaf_radix, spines, links.infiniband) on a cluster of
// one machine change nothing, since no step crosses InfiniBand: `run` says so in a note (stderr,
// RunReport::notes, Python's notes) naming each key and where it was written, and a sweep over
// cluster.nodes that includes 1 runs every point and says it once for those points. A note, not a
// refusal: the same file runs with --set cluster.nodes=1 and sweeps over nodes include 1.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "analysis/api/hybridsim.h"
#include "scenarios/loader/ignored_keys.h"
#include "scenarios/loader/scenario.h"

namespace api = hybridsim::api;
namespace scenarios = hybridsim::scenarios;

namespace {

const std::string kFabricOneMachine =
    "cluster:\n"
    "  preset: dgx1-v100\n"
    "  fabric: rail-optimized\n"
    "  oversubscription: 2\n"
    "workload: {network: gnmt}\n"
    "parallelism: {dp: 8}\n";

}  // namespace

TEST_CASE("fabric keys on one machine: a note naming each key where it was written") {
  const api::RunReport r =
      api::run({.path = "fabric.yaml", .text = kFabricOneMachine}, {.write_outputs = false});
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0] ==
        "cluster.fabric (fabric.yaml:3:11), cluster.oversubscription (fabric.yaml:4:21): not used: the "
        "cluster is one dgx1-v100 machine (cluster.nodes 1), so no step crosses InfiniBand; they apply "
        "with cluster.nodes > 1");
  // The step is the one without them: nothing crosses InfiniBand.
  const api::RunReport plain = api::run({.path = "plain.yaml",
                                         .text = "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n"
                                                 "parallelism: {dp: 8}\n"},
                                        {.write_outputs = false});
  CHECK(plain.notes.empty());
  CHECK(r.run.step.step_time == plain.run.step.step_time);
  // An InfiniBand override by --set is named by its --set text.
  const api::RunReport ib =
      api::run({.path = "plain.yaml",
                .text = "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n",
                .set = {"cluster.links.infiniband.bandwidth=200 Gb/s"}},
               {.write_outputs = false});
  REQUIRE(ib.notes.size() == 1);
  CHECK(ib.notes[0].starts_with(
      "cluster.links.infiniband (--set cluster.links.infiniband.bandwidth=200 Gb/s): not used"));
}

TEST_CASE("fabric keys: no note with more than one machine, or when written at their defaults") {
  auto note = [](const std::string& text) {
    return scenarios::unused_fabric_note(scenarios::parse_scenario(text, "f.yaml"));
  };
  CHECK_FALSE(
      note("cluster: {preset: dgx1-v100, nodes: 2, fabric: rail-optimized}\n"
           "workload: {network: gnmt}\n"));
  // scenario_to_yaml writes every key, defaults included: they change nothing anywhere.
  CHECK_FALSE(
      note("cluster: {preset: dgx1-v100, fabric: fat-tree, oversubscription: 1}\n"
           "workload: {network: gnmt}\n"));
  CHECK(note("cluster: {preset: dgx-a100, spines: 4}\nworkload: {network: gnmt}\n")
            .value_or("")
            .starts_with("cluster.spines (f.yaml:1:37): not used: the cluster is one dgx-a100 machine"));
}

TEST_CASE("variability steps with nothing drawn: a note that they are alike") {
  // Two steps of the same program, nothing drawn: step 2 is step 1 again (the mean is step 1's).
  const api::RunReport r = api::run({.path = "steps.yaml",
                                     .text = "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\n"
                                             "parallelism: {dp: 8}\nvariability: {steps: 2}\n"},
                                    {.write_outputs = false});
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0] ==
        "steps.yaml:4:22: variability.steps: 2 steps with nothing drawn (kernel_jitter 0, sequence_lengths "
        "fixed) are alike: step 1 is simulated once and stands for each, so the mean, p95, min and max are "
        "step 1's (events and messages its 2 times)");
  CHECK(r.run.step.spread.min == r.run.step.spread.max);
  CHECK_FALSE(scenarios::identical_steps_note(
      scenarios::parse_scenario("cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nvariability: "
                                "{steps: 2, kernel_jitter: 0.05}\n",
                                "j.yaml")));
}

TEST_CASE("a sweep over cluster.nodes that includes 1 runs every point and notes the fabric once") {
  const auto out =
      std::filesystem::temp_directory_path() / ("hybridsim-unused-fabric-sweep-" + std::to_string(getpid()));
  std::filesystem::remove_all(out);
  api::SweepOptions options;
  options.out = out;
  options.jobs = 1;
  options.progress = false;
  const api::SweepOutcome r = api::sweep(
      {.path = "fabric-sweep.yaml",
       .text = kFabricOneMachine + "sweep:\n  parameters:\n    - {path: cluster.nodes, values: [1, 2]}\n"},
      options);
  CHECK(r.points_run == 2);
  REQUIRE(r.notes.size() == 1);
  CHECK(
      r.notes[0].starts_with("sweep points 0: cluster.fabric (fabric-sweep.yaml:3:11), "
                             "cluster.oversubscription (fabric-sweep.yaml:4:21): not used"));
  std::filesystem::remove_all(out);
}

TEST_CASE("simulation.model_threads where no tree folds: a note naming why, none where trees may run") {
  const auto note = [](const std::string& communication) {
    return scenarios::unused_model_threads_note(scenarios::parse_scenario(
        "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nsimulation: {model_threads: 2}\n"
        "communication: " + communication + "\n",
        "t.yaml"));
  };
  const auto ring = note("{algorithm: ring}");
  REQUIRE(ring);
  CHECK(*ring == "simulation.model_threads (t.yaml:3:29): not used: communication.algorithm: ring runs no "
                 "tree, and the threads run a folded step's tree models; it applies with "
                 "communication.algorithm tree or auto");
  CHECK(note("{algorithm: hierarchical}"));
  const auto off = note("{algorithm: tree, fast_path: off}");
  REQUIRE(off);
  CHECK(off->find("communication.fast_path: off folds nothing") != std::string::npos);
  CHECK_FALSE(note("{algorithm: tree}"));
  CHECK_FALSE(note("{algorithm: auto}"));
  // Not written: no note, whatever the algorithm.
  CHECK_FALSE(scenarios::unused_model_threads_note(scenarios::parse_scenario(
      "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\ncommunication: {algorithm: ring}\n",
      "t.yaml")));
}

// A pipeline's step program (workloads/program/pipeline_program.h) simulates ZeRO-1 per stage
// (issue 31): a run of parallelism.pp above 1 with parallelism.zero 1 is ZeRO-1's step, and no note
// says it leaves ZeRO out. Before, the step was ZeRO 0's (the same step time and events) beside a
// memory line of ZeRO-1's shards, and a note said so.
namespace {

// Llama 3 8B's 2-layer slice, dp 2 × pp 2 on one DGX H100: 4 micro-batches, a step under a second.
const std::string kPipeline =
    "cluster: {preset: dgx-h100}\n"
    "workload: {network: llama3-8b, model: {layers_simulated: 2}}\n"
    "parallelism: {dp: 2, pp: 2}\n"
    "training: {micro_batch: 1, global_batch: 4}\n";

bool has_pipeline_note(const api::RunReport& r) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [](const std::string& n) { return n.find("the pipeline's step") != n.npos; });
}

}  // namespace

TEST_CASE("pipeline with ZeRO-1: the step is ZeRO-1's, without a note leaving it out") {
  const api::RunReport plain = api::run({.path = "p.yaml", .text = kPipeline}, {.write_outputs = false});
  const api::RunReport zero1 = api::run({.path = "p.yaml", .text = kPipeline, .set = {"parallelism.zero=1"}},
                                        {.write_outputs = false});
  // Each stage's reduce-scatter, optimizer on half its parameters and all-gather: another step.
  CHECK(zero1.run.step.step_time != plain.run.step.step_time);
  CHECK(zero1.run.step.events != plain.run.step.events);
  CHECK_FALSE(has_pipeline_note(plain));
  CHECK_FALSE(has_pipeline_note(zero1));
}

TEST_CASE("placement: a partitioner or rules for workers of one GPU is noted as not used") {
  // mp 1: every op runs on the worker's one GPU, so placement: layers changed nothing, without a word.
  auto note = [](const std::string& parallelism) {
    return scenarios::unused_placement_note(scenarios::parse_scenario(
        "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: " + parallelism + "\n",
        "p.yaml"));
  };
  CHECK(note("{dp: 8, placement: layers}").value_or("") ==
        "parallelism.placement (p.yaml:3:33): not used: parallelism.mp is 1, so each worker runs every op on "
        "its "
        "one GPU; it applies with mp > 1");
  CHECK(note("{dp: 8, placement: [{match: \"*\", gpu: 0}]}").has_value());
  CHECK_FALSE(note("{dp: 4, mp: 2, placement: layers}"));
  CHECK_FALSE(note("{dp: 8, placement: auto}"));  // the default, as scenario_to_yaml writes it
  CHECK_FALSE(note("{dp: 8}"));
  const api::RunReport r =
      api::run({.path = "p.yaml",
                .text = "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: {dp: 8}\n",
                .set = {"parallelism.placement=stacks"}},
               {.write_outputs = false});
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].starts_with("parallelism.placement (--set parallelism.placement=stacks): not used"));
}

TEST_CASE("bucket size: written for dp 1 is noted as not used") {
  // dp 1 exchanges no gradients between replicas: communication.bucket_size 1 MB changed nothing,
  // without a word.
  auto note = [](const std::string& parallelism) {
    return scenarios::unused_bucket_size_note(scenarios::parse_scenario(
        "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\nparallelism: " + parallelism +
            "\ncommunication: {bucket_size: 1 MB}\n",
        "b.yaml"));
  };
  CHECK(
      note("{dp: 1, mp: 2}").value_or("") ==
      "communication.bucket_size (b.yaml:4:30): not used: parallelism.dp is 1, so no gradients are exchanged "
      "between data-parallel replicas (no bucket is formed); it applies with dp > 1");
  CHECK_FALSE(note("{dp: 2}"));
  CHECK_FALSE(scenarios::unused_bucket_size_note(scenarios::parse_scenario(
      "cluster: {preset: dgx1-v100}\nworkload: {network: gnmt}\ncommunication: {bucket_size: 25 MB}\n",
      "b.yaml")));  // the default, as scenario_to_yaml writes it
}

TEST_CASE("recompute: selective under flash attention is noted as not used, and is none's step") {
  // Selective recomputation drops the attention's stored softmax and dropout outputs; flash attention
  // never stores them, so selective ran recompute none's step and memory without a word.
  const std::string slice =
      "cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, model: {layers_simulated: 2}}\n"
      "parallelism: {dp: 8}\n";
  auto note = [&](const std::string& recompute) {
    return scenarios::unused_recompute_note(
        scenarios::parse_scenario(slice + "training: {recompute: " + recompute + "}\n", "r.yaml"));
  };
  CHECK(note("selective").value_or("") ==
        "training.recompute (r.yaml:4:23): not used: selective recomputation drops the attention's stored "
        "softmax and dropout outputs to recompute them in backward, but workload.model.attention: flash "
        "never stores them, so the step and its memory are recompute none's; it applies with "
        "workload.model.attention: unfused");
  CHECK_FALSE(note("full"));
  CHECK_FALSE(note("none"));
  CHECK_FALSE(scenarios::unused_recompute_note(scenarios::parse_scenario(slice, "r.yaml")));
  CHECK_FALSE(scenarios::unused_recompute_note(scenarios::parse_scenario(
      "cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, model: {layers_simulated: 2, attention: "
      "unfused}}\nparallelism: {dp: 8}\ntraining: {recompute: selective}\n",
      "r.yaml")));

  // The run says it, and its step and memory are none's; unfused, selective moves both.
  const auto run = [&](const std::vector<std::string>& set) {
    return api::run({.path = "r.yaml", .text = slice, .set = set}, {.write_outputs = false});
  };
  const api::RunReport selective = run({"training.recompute=selective"});
  const api::RunReport none = run({});
  REQUIRE(selective.notes.size() == 1);
  CHECK(
      selective.notes[0].starts_with("training.recompute (--set training.recompute=selective): not used: "));
  CHECK(none.notes.empty());
  namespace workloads = hybridsim::workloads;
  const auto peak = [](const api::RunReport& r) { return workloads::largest_peak(r.run.memory.peaks()); };
  CHECK(selective.run.step.step_time == none.run.step.step_time);
  CHECK(peak(selective) == peak(none));
  const api::RunReport unfused_selective =
      run({"workload.model.attention=unfused", "training.recompute=selective"});
  const api::RunReport unfused_none = run({"workload.model.attention=unfused"});
  CHECK(unfused_selective.notes.empty());
  CHECK(unfused_selective.run.step.step_time != unfused_none.run.step.step_time);
  CHECK(peak(unfused_selective) < peak(unfused_none));
}

TEST_CASE("oversubscription and spines where every NIC plugs into one leaf: a note, the step unchanged") {
  // 2 DGX H100 machines: 16 NICs, one leaf of 16 ports, so no spine; oversubscription 4 ran as 1.
  const std::string two =
      "cluster: {preset: dgx-h100, nodes: 2, oversubscription: 4, spines: 2}\n"
      "workload: {network: gnmt}\nparallelism: {dp: 16}\n";
  const auto note = scenarios::unused_fabric_note(scenarios::parse_scenario(two, "leaf.yaml"));
  CHECK(note.value_or("") ==
        "cluster.oversubscription (leaf.yaml:1:57), cluster.spines (leaf.yaml:1:68): not used: every NIC of "
        "the 2 dgx-h100 machines plugs into one leaf switch (cluster.leaf_radix 16), so no step crosses a "
        "spine; they apply with more than one leaf (more machines, or a smaller cluster.leaf_radix)");
  // run says it (its notes, as stderr's), and the step is the one without them.
  const api::RunReport r = api::run({.path = "leaf.yaml", .text = two}, {.write_outputs = false});
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0] == *note);
  const api::RunReport plain = api::run(
      {.path = "plain.yaml",
       .text = "cluster: {preset: dgx-h100, nodes: 2}\nworkload: {network: gnmt}\nparallelism: {dp: 16}\n"},
      {.write_outputs = false});
  CHECK(r.run.step.step_time == plain.run.step.step_time);
  // Past one leaf (3 machines, or leaf_radix 8) they shape the fabric: no note.
  CHECK_FALSE(scenarios::unused_fabric_note(scenarios::parse_scenario(
      "cluster: {preset: dgx-h100, nodes: 3, oversubscription: 4}\nworkload: {network: gnmt}\n", "f.yaml")));
  CHECK_FALSE(scenarios::unused_fabric_note(
      scenarios::parse_scenario("cluster: {preset: dgx-h100, nodes: 2, leaf_radix: 8, oversubscription: "
                                "4}\nworkload: {network: gnmt}\n",
                                "f.yaml")));
  // A DGX-1 has 4 NICs: 4 machines (32 GPUs) fill one leaf.
  CHECK(scenarios::unused_fabric_note(
            scenarios::parse_scenario("cluster: {preset: dgx1-v100, nodes: 4, oversubscription: 2}\n"
                                      "workload: {network: gnmt}\n",
                                      "f.yaml"))
            .value_or("")
            .starts_with("cluster.oversubscription (f.yaml:1:58): not used: every NIC of the 4 dgx1-v100"));
}

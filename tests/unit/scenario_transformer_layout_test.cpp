// What a transformer's placement and mapping lines say (scenarios/loader/transformer_layout_text.h),
// checked against the GPUs the resolved mapping gives each replica, stage and TP rank.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "scenarios/loader/transformer_layout_text.h"

using namespace hybridsim;
using namespace hybridsim::scenarios;

namespace {

ResolvedScenario llama(const std::string& parallelism) {
  return resolve(
      parse_scenario("cluster: {preset: dgx-h100, nodes: 2}\n"
                     "workload: {network: llama3-8b, model: {layers_simulated: 8}}\n"
                     "parallelism: " +
                         parallelism + "\ntraining: {global_batch: 8}\n",
                     "s.yaml"));
}

}  // namespace

TEST_CASE("transformer layout: the lines say which GPU runs each replica's stage and TP rank") {
  // tp 2 x pp 4 x dp 2 said "stage s of TP rank r of replica q on GPU s x 4 + q x 2 + r", and tp 4 x
  // dp 2 the 2017 networks' "all ops on GPU 0" and "workers on consecutive GPUs".
  const ResolvedScenario pipeline = llama("{dp: 2, tp: 2, pp: 4}");
  CHECK(pipeline.placement.description ==
        "pipeline: 4 stages of whole layers, each stage's layers split over a TP group of 2 GPUs");
  CHECK(pipeline.mapping.description ==
        "replica q's stage s: its TP group on GPUs 4s + 2q to 4s + 2q + 1 (TP rank r on GPU 4s + 2q + r); "
        "stage s of every replica on GPUs 4s to 4s + 3");
  // The mapping's workers are dp × tp one-GPU ranks, q·tp + r, each with its pp stages.
  for (int q = 0; q < 2; ++q)
    for (int r = 0; r < 2; ++r)
      for (int s = 0; s < 4; ++s) CHECK(pipeline.mapping.gpu_rank[q * 2 + r][s] == 4 * s + 2 * q + r);

  const ResolvedScenario tensor = llama("{dp: 2, tp: 4}");
  CHECK(tensor.placement.description ==
        "every layer split over a TP group of 4 GPUs (its weight matrices by columns and rows, Megatron's)");
  CHECK(tensor.mapping.description ==
        "replica q: its TP group on GPUs 4q to 4q + 3 (TP rank r on GPU 4q + r)");
  for (int q = 0; q < 2; ++q)
    for (int r = 0; r < 4; ++r) CHECK(tensor.mapping.gpu_rank[q * 4 + r][0] == 4 * q + r);

  CHECK(llama("{dp: 8}").mapping.description == "replica q on GPU q");
  CHECK(llama("{dp: 8}").placement.description == "every layer on every GPU");
  CHECK(transformer_layout_text(1, 8, 1).mapping == "the TP group on GPUs 0 to 7 (TP rank r on GPU r)");
  CHECK(transformer_layout_text(1, 2, 4).mapping ==
        "stage s: its TP group on GPUs 2s to 2s + 1 (TP rank r on GPU 2s + r)");
  CHECK(transformer_layout_text(2, 1, 4).mapping ==
        "replica q's stage s on GPU 2s + q; stage s of every replica on GPUs 2s to 2s + 1");
  CHECK(transformer_layout_text(1, 1, 1).mapping == "the one replica on GPU 0");
}

TEST_CASE("transformer mapping: a written mapping lists each replica's TP group, TP rank r in column r") {
  // Every mapping with tp > 1 was refused, by two rules that disagreed: dp lists of one GPU ("lists
  // 2 workers, expected dp = 8"), dp x tp lists ("lists 8 workers, but parallelism.dp = 2"), dp lists
  // of tp GPUs ("lists 4 GPUs, but parallelism.mp = 1").
  const ResolvedScenario split = llama("{dp: 2, tp: 4, mapping: [[0, 2, 4, 6], [1, 3, 5, 7]]}");
  CHECK(split.mapping.description == "custom mapping");
  REQUIRE(split.mapping.gpu_rank.size() == 8);
  for (int q = 0; q < 2; ++q)
    for (int r = 0; r < 4; ++r) CHECK(split.mapping.gpu_rank[q * 4 + r] == std::vector<int>{2 * r + q});
  // The default's GPUs written out resolve to the default's workers.
  const ResolvedScenario written = llama("{dp: 2, tp: 4, mapping: [[0, 1, 2, 3], [4, 5, 6, 7]]}");
  CHECK(written.mapping.gpu_rank == llama("{dp: 2, tp: 4}").mapping.gpu_rank);
  // A row of another length than tp is refused at the row, naming tp.
  CHECK_THROWS_WITH(llama("{dp: 2, tp: 4, mapping: [[0], [1]]}"),
                    "s.yaml:3:39: parallelism.mapping[0]: lists 1 GPUs, but parallelism.tp = 4; expected tp "
                    "GPU ranks per replica (its TP group, TP rank r in column r)");
}

TEST_CASE("transformer mapping: a TP group on more than one machine is said, with why") {
  // tp 16 on two DGX A100 ran its TP collectives over InfiniBand while the line said only "the TP
  // group on GPUs 0 to 15", and tp's help "one machine's NVLink".
  const ResolvedScenario wide =
      resolve(parse_scenario("cluster: {preset: dgx-a100, nodes: 2}\n"
                             "workload: {network: llama3-8b, model: {layers_simulated: 2, kv_heads: 16}}\n"
                             "parallelism: {tp: 16}\ntraining: {global_batch: 1}\n",
                             "s.yaml"));
  CHECK(wide.mapping.description ==
        "the TP group on GPUs 0 to 15 (TP rank r on GPU r); 1 TP group spans up to 2 machines (tp 16 is more "
        "than a machine's 8 GPUs): its collectives cross the network");
  // tp 4 of a pipeline on 2 DGX H100: every group on one machine, nothing added.
  CHECK(llama("{dp: 2, tp: 4}").mapping.description.find("spans") == std::string::npos);
}

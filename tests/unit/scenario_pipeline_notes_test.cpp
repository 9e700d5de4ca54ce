// A pipeline of fewer micro-batches a step than stages idles most of its step: `run` and `sweep` say
// so in a note naming training.global_batch (where it was written), the micro-batches and the bubble's
// share, (pp − 1)/(m + pp − 1). The default global batch (dp × micro_batch, one micro-batch) under
// pp 8 ran an 87.5% bubble without a word.
#include <doctest/doctest.h>

#include <string>

#include "analysis/api/hybridsim.h"
#include "scenarios/loader/pipeline_notes.h"
#include "scenarios/loader/scenario.h"

using namespace hybridsim;

namespace {

const std::string kSlice =
    "cluster: {preset: dgx-a100, nodes: 8}\n"
    "workload: {network: gpt3-175b, model: {attention: unfused, layers_simulated: 16}}\n"
    "parallelism: {dp: 2, tp: 4, pp: 8}\n";

std::optional<std::string> note(const std::string& extra) {
  return scenarios::few_micro_batches_note(scenarios::parse_scenario(kSlice + extra, "p.yaml"));
}

}  // namespace

TEST_CASE("pipeline notes: fewer micro-batches than stages are noted with the bubble's share") {
  CHECK(note("").value_or("") ==
        "training.global_batch is not written, so it is 1 micro-batch a step of dp 2 × micro_batch 1, "
        "fewer than the pp 8 stages: each stage idles 7 of every 8 micro-batch slots, 87.5% of the step (the "
        "pipeline's bubble, (pp − 1)/(m + pp − 1)); at training.global_batch 16 (pp micro-batches) it is "
        "46.7%, and less with more");
  CHECK(note("training: {micro_batch: 2, global_batch: 12}\n").value_or("") ==
        "training.global_batch (p.yaml:4:42) 12 is 3 micro-batches a step of dp 2 × micro_batch 2, fewer "
        "than the pp 8 stages: each stage idles 7 of every 10 micro-batch slots, 70.0% of the step (the "
        "pipeline's bubble, (pp − 1)/(m + pp − 1)); at training.global_batch 32 (pp micro-batches) it is "
        "46.7%, and less with more");
  CHECK(note("pipeline: {schedule: gpipe}\ntraining: {global_batch: 14}\n"));  // GPipe's bubble is 1F1B's
  CHECK_FALSE(note("training: {global_batch: 16}\n"));  // 8 micro-batches: as many as stages
  CHECK_FALSE(note("training: {global_batch: 64}\n"));
  CHECK_FALSE(scenarios::few_micro_batches_note(scenarios::parse_scenario(
      "cluster: {preset: dgx-a100}\nworkload: {network: llama3-8b, model: {layers_simulated: 2}}\n"
      "parallelism: {dp: 8}\n",
      "p.yaml")));  // no pipeline
}

TEST_CASE("pipeline notes: run says the note with the scenario's others") {
  const api::RunReport r =
      api::run(api::ScenarioInput{.path = "p.yaml", .text = kSlice + "training: {global_batch: 6}\n"},
               api::RunRequest{.write_outputs = false});
  bool said = false;
  for (const std::string& n : r.notes) said = said || n.starts_with("training.global_batch (p.yaml:4:");
  CHECK(said);
}

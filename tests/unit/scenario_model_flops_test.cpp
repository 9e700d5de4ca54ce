// A transformer run's model FLOPs (TFLOP/s per GPU, MFU) are counted in double: Llama 3 405B's
// micro-batch of 512 sequences is about 1e19 FLOPs, past int64, and a run at a what-if capacity
// printed "model FLOPs -271.1 TFLOP/s per GPU, MFU -27.4%" with exit 0.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "analysis/run/scenario_run.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "workloads/generators/transformer_model.h"

using namespace hybridsim;

TEST_CASE("model FLOPs: a micro-batch past int64's FLOPs is counted, not wrapped") {
  const scenarios::ResolvedScenario r = scenarios::resolve(scenarios::parse_scenario(
      "cluster: {preset: dgx-h100, gpu_memory: 90000 TiB}\nworkload: {network: llama3-405b}\n"
      "parallelism: {dp: 1, tp: 8}\ntraining: {micro_batch: 512}\n",
      "f.yaml"));
  REQUIRE(r.transformer);
  const workloads::TransformerModel model = workloads::named_transformer("llama3-405b");
  const double sequence = workloads::model_flop_per_iteration(model, 1, false);
  CHECK(r.transformer->mfu_flop_per_micro_batch == 512 * sequence);
  CHECK(r.transformer->mfu_flop_per_micro_batch >
        static_cast<double>(std::numeric_limits<std::int64_t>::max()));  // main: negative, wrapped
  CHECK(r.transformer->model_flop_per_micro_batch >= r.transformer->mfu_flop_per_micro_batch);
}

TEST_CASE("model FLOPs: MFU is of the peak of the GPUs simulated, the preset's times their mean speed") {
  // compute_speed 4 runs every kernel 4 times as fast; against the H100's own peak the MFU read 106.8%,
  // at 10 206.9% (hunt4). The same layer slice at speed 1 and 4: each MFU of its own GPU's peak, under 1.
  const auto run = [](double speed) {
    return analysis::run_scenario(
        scenarios::resolve(scenarios::parse_scenario(
            "cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, compute_speed: " +
                std::to_string(speed) +
                ", model: {layers_simulated: 2}}\nparallelism: {dp: 8}\n"
                "training: {micro_batch: 1, global_batch: 8, recompute: none}\n",
            "s.yaml")),
        {});
  };
  const analysis::ScenarioRun one = run(1), four = run(4);
  REQUIRE(one.mfu);
  REQUIRE(four.mfu);
  CHECK(*four.mfu < 1);
  CHECK(*one.mfu < 1);
  // The achieved rate grows less than 4 times (communication does not speed up), so the MFU falls.
  CHECK(*four.model_tflops_per_gpu > 3 * *one.model_tflops_per_gpu);
  CHECK(*four.mfu < *one.mfu);
  CHECK(*four.mfu == doctest::Approx(*four.model_tflops_per_gpu / 4 / *one.model_tflops_per_gpu * *one.mfu));
  const auto metrics = analysis::run_metrics(four);
  const auto line =
      std::find_if(metrics.begin(), metrics.end(), [](const auto& kv) { return kv.first == "model FLOPs"; });
  REQUIRE(line != metrics.end());
  CHECK(line->second.find(" of the GPUs' peak x 4, their mean speed (workload.compute_speed, gpu_speeds)") !=
        std::string::npos);
  // gpu_speeds of 4 on every GPU are the same GPUs: the same MFU (it read 106.8% too).
  const analysis::ScenarioRun each = analysis::run_scenario(
      scenarios::resolve(scenarios::parse_scenario(
          "cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, model: {layers_simulated: 2}, "
          "gpu_speeds: [{gpu: 0, speed: 4}, {gpu: 1, speed: 4}, {gpu: 2, speed: 4}, {gpu: 3, speed: 4}, "
          "{gpu: 4, speed: 4}, {gpu: 5, speed: 4}, {gpu: 6, speed: 4}, {gpu: 7, speed: 4}]}\n"
          "parallelism: {dp: 8}\ntraining: {micro_batch: 1, global_batch: 8, recompute: none}\n",
          "s.yaml")),
      {});
  REQUIRE(each.mfu);
  CHECK(*each.mfu == doctest::Approx(*four.mfu));
}

TEST_CASE("model FLOPs: the MFU of GPUs a million times the preset's speed is of their peak, not wrapped") {
  // compute_speed 1000 and gpu_speeds of 1000 on every GPU (each key's bound): the GPUs simulated have
  // 1e6 times an H100's BF16 peak, about 1e21 FLOP/s, past int64; kept as one int64 product it read
  // "MFU -0.0% of the GPUs' peak x 1e+06" with exit 0 (the review of hunt4).
  std::string speeds;
  for (int g = 0; g < 8; ++g)
    speeds += (g ? ", " : "") + std::string("{gpu: ") + std::to_string(g) + ", speed: 1000}";
  const analysis::ScenarioRun fast = analysis::run_scenario(
      scenarios::resolve(scenarios::parse_scenario(
          "cluster: {preset: dgx-h100}\nworkload: {network: llama3-8b, compute_speed: 1000, model: "
          "{layers_simulated: 2}, gpu_speeds: [" +
              speeds +
              "]}\nparallelism: {dp: 8}\ntraining: {micro_batch: 1, global_batch: 8, recompute: none}\n",
          "s.yaml")),
      {});
  REQUIRE(fast.mfu);
  REQUIRE(fast.model_tflops_per_gpu);
  CHECK(*fast.mfu > 0);
  CHECK(*fast.mfu < 1);
  // The MFU is the achieved rate over the GPUs' peak, the H100's 989.4 TFLOP/s (BF16 dense) times 1e6.
  CHECK(*fast.mfu ==
        doctest::Approx(*fast.model_tflops_per_gpu / (fast.mfu_peak_scale * 989.4)).epsilon(0.01));
  CHECK(fast.mfu_peak_scale == doctest::Approx(1e6));
}

// A transformer run's model FLOPs (TFLOP/s per GPU, MFU) are counted in double: Llama 3 405B's
// micro-batch of 512 sequences is about 1e19 FLOPs, past int64, and a run at a what-if capacity
// printed "model FLOPs -271.1 TFLOP/s per GPU, MFU -27.4%" with exit 0.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "scenarios/loader/resolve.h"
#include "workloads/generators/transformer_model.h"

using namespace hybridsim;

TEST_CASE("model FLOPs: a micro-batch past int64's FLOPs is counted, not wrapped") {
  const scenarios::ResolvedScenario r = scenarios::resolve(scenarios::parse_scenario(
      "cluster: {preset: dgx-h100, gpu_memory: 90000 TiB}\nworkload: {network: llama3-405b}\n"
      "parallelism: {dp: 1, tp: 8}\ntraining: {micro_batch: 512}\n",
      "f.yaml"));
  REQUIRE(r.transformer);
  const workloads::TransformerModel model = workloads::named_transformer("llama3-405b");
  const double sequence = static_cast<double>(workloads::model_flop_per_iteration(model, 1, false));
  CHECK(r.transformer->mfu_flop_per_micro_batch == 512 * sequence);
  CHECK(r.transformer->mfu_flop_per_micro_batch >
        static_cast<double>(std::numeric_limits<std::int64_t>::max()));  // main: negative, wrapped
  CHECK(r.transformer->model_flop_per_micro_batch >= r.transformer->mfu_flop_per_micro_batch);
}

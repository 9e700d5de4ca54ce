// Issue 28: Llama 3 70B's step with tensor parallelism inside each DGX H100 and data parallelism
// across them (scenarios/llm/llama3-70b-1024-h100.yaml) folds onto one machine's 8 GPUs: its TP
// groups are shadows of the representative machine's, each TP rank's gradient ring folds over the
// replicas. Here at tp 8 × dp 8 and 16, whose full simulations the battery can afford (the
// scenario's own 1,024 GPUs take 1e9 events in full): with the fast path on (auto, exact) every
// GPU must finish at the time, with the communication, of the step simulated rank by rank.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "tests/unit/fold_exact_case.h"

using namespace hybridsim;

namespace {

analysis::StepResult run_llama(int replicas, const std::string& layers, sim::FastPath mode) {
  const std::vector<std::string> sets = {"cluster.nodes=" + std::to_string(replicas),
                                         "parallelism.dp=" + std::to_string(replicas),
                                         "workload.model.layers_simulated=" + layers};
  scenarios::Scenario s =
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/llama3-70b-1024-h100.yaml", sets);
  s.communication.fast_path = mode;
  return analysis::run_scenario(scenarios::resolve(s), {}).step;
}

}  // namespace

TEST_CASE("Llama 3 70B, tp 8 x dp 8 and 16 on DGX H100: folded onto one machine, as in full") {
  struct Case {
    int replicas;
    std::string layers;
  };
  for (const Case& c : {Case{8, "80"}, Case{16, "8"}}) {
    CAPTURE(c.replicas);
    const analysis::StepResult fast = run_llama(c.replicas, c.layers, sim::FastPath::Auto);
    const analysis::StepResult full = run_llama(c.replicas, c.layers, sim::FastPath::Off);
    CAPTURE(fast.simulation.full_reason);
    CAPTURE(fast.simulation.step_fold_reason);
    CHECK(fast.gpus == 8 * c.replicas);
    CHECK(full.simulation.folded == 0);
    CHECK(fast.simulation.gpus_simulated == 8);  // one machine stands for every replica
    CHECK(fast.events * 4 < full.events);
    testing::check_same_step(fast, full);
  }
}

// Issue 29: a pipelined step with data parallelism (tp × pp × dp) folds onto one pipeline replica:
// its stages' machines are the representatives, the other replicas' transfers between their
// stages are shadows, and each stage's gradient ring folds over the replicas. GPT-3 175B's layers
// (a slice the full simulation can afford) on DGX A100 at tp 8 × pp 4 × dp 4 (16 machines), under
// GPipe, 1F1B and interleaved 1F1B, and under ZeRO-1: with the fast path on every GPU must finish
// at the time, with the communication, of the step simulated rank by rank.
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

analysis::StepResult run_pipeline(const std::string& schedule, sim::FastPath mode,
                                  const std::vector<std::string>& fabric = {"cluster.fabric=rail-optimized"},
                                  const std::string& zero = "0") {
  std::vector<std::string> sets = {"cluster.nodes=16",
                                   "parallelism.dp=4",
                                   "parallelism.pp=4",
                                   "workload.model.layers_simulated=8",
                                   "training.global_batch=32",
                                   "communication.algorithm=ring",
                                   "pipeline.schedule=" + schedule,
                                   "parallelism.zero=" + zero};
  if (schedule == "interleaved") sets.push_back("pipeline.virtual_stages=2");
  sets.insert(sets.end(), fabric.begin(), fabric.end());
  scenarios::Scenario s =
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/gpt3-175b-pp8-dgx-a100.yaml", sets);
  s.communication.fast_path = mode;
  return analysis::run_scenario(scenarios::resolve(s), {}).step;
}

}  // namespace

TEST_CASE("GPT-3 175B slice, tp 8 x pp 4 x dp 4 on DGX A100: folded onto one replica, as in full") {
  for (const std::string schedule : {"gpipe", "1f1b", "interleaved"}) {
    CAPTURE(schedule);
    const analysis::StepResult fast = run_pipeline(schedule, sim::FastPath::Auto);
    const analysis::StepResult full = run_pipeline(schedule, sim::FastPath::Off);
    CAPTURE(fast.simulation.full_reason);
    CAPTURE(fast.simulation.step_fold_reason);
    std::string refused;
    for (const std::string& r : fast.simulation.refused) refused += r + "; ";
    CAPTURE(refused);
    CHECK(fast.gpus == 128);
    CHECK(full.simulation.folded == 0);
    CHECK(fast.simulation.gpus_simulated == 32);  // one replica: a machine per stage
    CHECK(fast.events * 2 < full.events);
    testing::check_same_step(fast, full);
  }
}

// Smaller rail leaves put the stages' transfers through the spines, as 16 machines a leaf do from
// 2,048 DGX H100 on: with 4 machines a leaf each stage is a leaf of its own per rail, and a
// replica's forward and backward transfers into a stage meet on one spine-to-leaf link (its
// representative's meet on another); with 2 a stage's gradient ring crosses a spine too, over
// links the transfers use, which the schedule keeps apart in time (the ring starts after the
// flush). On the fat tree (2 machines a leaf) the transfers and rings cross spines as well.
TEST_CASE("GPT-3 175B slice, tp 8 x pp 4 x dp 4: transfers through the spines, folded as in full") {
  struct Case {
    std::vector<std::string> fabric;
    bool folds;  // onto one replica
  };
  const Case cases[] = {
      {{"cluster.fabric=rail-optimized", "cluster.leaf_radix=4"}, true},
      {{"cluster.fabric=rail-optimized", "cluster.leaf_radix=2"}, true},
      {{"cluster.fabric=fat-tree"}, true},
  };
  for (const Case& c : cases)
    for (const std::string schedule : {"gpipe", "1f1b"}) {
      CAPTURE(c.fabric.back());
      CAPTURE(schedule);
      const analysis::StepResult fast = run_pipeline(schedule, sim::FastPath::Auto, c.fabric);
      const analysis::StepResult full = run_pipeline(schedule, sim::FastPath::Off, c.fabric);
      std::string refused;
      for (const std::string& r : fast.simulation.refused) refused += r + "; ";
      CAPTURE(refused);
      if (c.folds) CHECK(fast.simulation.gpus_simulated == 32);
      testing::check_same_step(fast, full);
    }
}

// Issue 31: under ZeRO-1 each stage's group reduce-scatters its gradients after the flush and
// all-gathers its updated parameters after the optimizer; those rings fold over the replicas as the
// all-reduces did.
TEST_CASE("GPT-3 175B slice, tp 8 x pp 4 x dp 4 under ZeRO-1: folded onto one replica, as in full") {
  for (const std::string schedule : {"1f1b", "interleaved"}) {
    CAPTURE(schedule);
    const analysis::StepResult fast =
        run_pipeline(schedule, sim::FastPath::Auto, {"cluster.fabric=rail-optimized"}, "1");
    const analysis::StepResult full =
        run_pipeline(schedule, sim::FastPath::Off, {"cluster.fabric=rail-optimized"}, "1");
    std::string refused;
    for (const std::string& r : fast.simulation.refused) refused += r + "; ";
    CAPTURE(refused);
    CAPTURE(fast.simulation.step_fold_reason);
    CHECK(full.simulation.folded == 0);
    CHECK(fast.simulation.gpus_simulated == 32);
    testing::check_same_step(fast, full);
    CHECK(full.step_time != run_pipeline(schedule, sim::FastPath::Off).step_time);
  }
}

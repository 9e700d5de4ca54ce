// fold_p2p_shadows_exact (analysis/step/step_fold_p2p.h) plans the routes of every ring and transfer
// pair between machines once, seconds at 16,384 GPUs: it is told of them (PlanTicks) by the GPUs of
// the rings and pairs planned, from 0 to all of them, at least every kWorkTickEvery.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_fold.h"
#include "analysis/step/step_fold_p2p.h"
#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/work_progress.h"

using namespace hybridsim;

namespace {

struct Told final : sim::WorkProgress {
  std::vector<std::uint64_t> done;
  std::vector<std::uint64_t> total;
  std::vector<std::string> parts;
  void built(std::string_view part, std::uint64_t d, std::uint64_t t, std::string_view unit) override {
    done.push_back(d);
    total.push_back(t);
    parts.push_back(std::string(part) + " (" + std::string(unit) + ")");
  }
};

}  // namespace

TEST_CASE("fold p2p: planning the routes between machines is told by their GPUs, 0 to all") {
  // GPT-3 175B's slice at tp 8 x pp 4 x dp 4 on 16 DGX A100 (tests/scale/pipeline_fold_test.cpp):
  // a stage per machine, a replica per 4 machines. Between machines: each stage's gradient rings,
  // one per tensor-parallel rank (4 stages x 8 = 32 rings of 4 GPUs, 128 GPUs), and the transfer
  // pairs between neighbouring stages, each way (4 replicas x 3 boundaries x 8 ranks x 2 ways = 192
  // pairs, 384 GPUs): 512 GPUs planned, each ring or pair once. A ring adds 4 and a pair 2, so a tick
  // comes as the count passes the last one's by 64 or more, at most 64 + 3 after it.
  const std::vector<std::string> sets = {"cluster.nodes=16",
                                         "parallelism.dp=4",
                                         "parallelism.pp=4",
                                         "workload.model.layers_simulated=8",
                                         "training.global_batch=32",
                                         "communication.algorithm=ring",
                                         "cluster.fabric=rail-optimized"};
  const scenarios::Scenario s =
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/gpt3-175b-pp8-dgx-a100.yaml", sets);
  const scenarios::ResolvedScenario resolved = scenarios::resolve(s);
  const analysis::StepSetup setup = analysis::step_setup(resolved);
  const workloads::StepProgram program = analysis::build_program(setup);
  analysis::StepFoldPlan plan = analysis::plan_step_fold(program, *setup.topology, {});
  REQUIRE(!plan.empty());
  Told told;
  CHECK(!analysis::fold_p2p_shadows_exact(program, *setup.topology, setup.comm, plan, &told).has_value());
  REQUIRE(told.done.size() >= 3);
  for (const std::string& part : told.parts) CHECK(part == "planning its members' routes (GPUs of rings)");
  for (const std::uint64_t t : told.total) CHECK(t == 512);
  CHECK(told.done.front() == 0);
  CHECK(told.done.back() == 512);
  // 512 in steps of 64 to 67: at least 512 / 67 ticks between the first and the last.
  CHECK(told.done.size() >= 2 + 512 / 67);
  for (std::size_t i = 1; i < told.done.size(); ++i) {
    CHECK(told.done[i] >= told.done[i - 1]);
    CHECK(told.done[i] - told.done[i - 1] <= 64 + 3);
  }
  // Without a listener the same answer, and the plan's pairs kept apart alike.
  analysis::StepFoldPlan alone = analysis::plan_step_fold(program, *setup.topology, {});
  CHECK(!analysis::fold_p2p_shadows_exact(program, *setup.topology, setup.comm, alone).has_value());
  CHECK(alone.kept_apart == plan.kept_apart);
}

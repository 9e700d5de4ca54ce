// ZeRO-1/2 with experts (ep > 1): the updated parameters' gather after the optimizer is split, the
// experts' bytes gathered apart over the replicas that hold them (workloads::shard_experts), each
// GPU's gathers its own collectives in a compute list still shared (sim::TaskList::own_collective).
// Rebuilt per GPU before, every compute list was a GPU's own (16 of 16 at ep 8 x dp 16, 8 at zero 0).
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <set>
#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "workloads/program/sharded_data_parallel.h"
#include "workloads/program/step_program.h"

using namespace hybridsim;

namespace {

workloads::StepProgram mixtral(const std::string& file, int zero) {
  const std::vector<std::string> sets = {"parallelism.zero=" + std::to_string(zero),
                                         "cluster.gpu_memory=1 TiB"};  // zero 0 needs more than 80 GB
  const scenarios::ResolvedScenario resolved =
      scenarios::resolve(scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/" + file, sets));
  return analysis::build_program(analysis::step_setup(resolved));
}

std::size_t distinct_compute_lists(const workloads::StepProgram& p) {
  std::set<const void*> lists;
  for (const sim::GpuProgram& gpu : p.gpus)
    for (const sim::StreamProgram& stream : gpu.streams)
      if (stream.name == "compute") lists.insert(stream.tasks.same_tasks());
  return lists.size();
}

}  // namespace

TEST_CASE("zero with experts: the experts' gather keeps compute lists shared, each GPU gathering as itself") {
  struct Case {
    std::string file;
    int zero;
  };
  // ep 8 x dp 16 on 2 DGX H100 (ZeRO-1 and -2); pp 2 x dp 8 x ep 4, ZeRO-1 (its shipped setting).
  for (const Case& c :
       {Case{"mixtral-8x7b-2x-dgx-h100-ep8.yaml", 1}, Case{"mixtral-8x7b-2x-dgx-h100-ep8.yaml", 2},
        Case{"mixtral-8x7b-pp2-zero1-2x-dgx-h100.yaml", 1}}) {
    CAPTURE(c.file);
    CAPTURE(c.zero);
    const workloads::StepProgram z0 = mixtral(c.file, 0);
    const workloads::StepProgram z = mixtral(c.file, c.zero);
    CHECK(distinct_compute_lists(z) == distinct_compute_lists(z0));  // 16 before, one a GPU
    CHECK(distinct_compute_lists(z) < z.gpus.size());
    int split = 0;  // GPUs whose experts' bytes are gathered apart
    for (std::size_t g = 0; g < z.gpus.size(); ++g) {
      std::set<std::uint32_t> gathers;
      for (const sim::StreamProgram& stream : z.gpus[g].streams)
        for (const sim::Task t : stream.tasks) {
          if (t.kind != sim::TaskKind::Collective) continue;
          const workloads::CollectiveSpec& spec = z.collectives.at(t.id);
          if (spec.role != workloads::CollectiveRole::UpdatedParameterAllGather) continue;
          CHECK(stream.name == "compute");
          REQUIRE(t.rank < spec.members.size());
          CHECK(spec.members[t.rank] == static_cast<int>(g));  // its own rank in its own group
          gathers.insert(t.id);
        }
      CHECK(gathers.size() >= 1);
      CHECK(gathers.size() <= 2);
      split += gathers.size() == 2 ? 1 : 0;
    }
    CHECK(split > 0);
  }
}

TEST_CASE("expert ops: one test, for expert parallelism and ZeRO alike, and none at ep 1") {
  // workloads::is_expert_op is what apply_expert_parallel splits and drops the gradients of, and what
  // the sharding pass divides the experts' copies and gathers by: ops 3 and 5 listed, ep 4 places them
  // on 4 EP ranks; op 4 is dense. At ep 1 no op is an expert op, listed or not (every replica holds
  // every expert: nothing is split).
  const workloads::ExpertParallelOptions ep4{.ep = 4, .syncs = {}, .expert_ops = {3, 5}};
  CHECK(workloads::is_expert_op(ep4, 3));
  CHECK(workloads::is_expert_op(ep4, 5));
  CHECK_FALSE(workloads::is_expert_op(ep4, 4));
  CHECK_FALSE(workloads::is_expert_op(ep4, 0));
  workloads::ExpertParallelOptions ep1 = ep4;
  ep1.ep = 1;
  CHECK_FALSE(workloads::is_expert_op(ep1, 3));
}

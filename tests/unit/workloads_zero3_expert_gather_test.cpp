// ZeRO-3 / FSDP with expert parallelism: each op's parameters are all-gathered over the GPUs that
// hold shards of them (workloads::gather_per_op, split by apply_expert_parallel as the experts'
// gradients are), and an expert op at dp = ep, held whole by each replica, is not gathered at all:
// the next op's gather is prefetched past it, as zero3_gathered_bytes counts the pair in flight.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/stream_executor.h"
#include "workloads/program/step_program.h"

using namespace hybridsim;
using workloads::CollectiveRole;

namespace {

// Mixtral 8x7B's 2-layer slice on one DGX H100: dp 4 x tp 2 (replica q's TP rank r on GPU 2q + r),
// ep as given, ZeRO `zero`.
analysis::StepSetup mixtral_setup(int ep, const std::string& zero) {
  static std::vector<scenarios::ResolvedScenario> kept;  // the setup points into its scenario
  kept.push_back(scenarios::resolve(
      scenarios::parse_scenario("cluster: {preset: dgx-h100}\n"
                                "workload: {network: mixtral-8x7b, model: {layers_simulated: 2}}\n"
                                "parallelism: {dp: 4, tp: 2, ep: " +
                                    std::to_string(ep) + ", zero: " + zero +
                                    ", sequence_parallel: true}\n"
                                    "training: {micro_batch: 1, global_batch: 4, recompute: none}\n",
                                "m.yaml")));
  return analysis::step_setup(kept.back());
}

bool is_expert(const analysis::StepSetup& s, std::uint32_t op) {
  return std::ranges::count(s.step.ep.expert_ops, op) > 0;
}

// Records when each GPU's compute stream starts each op's first kernel (forward and backward) and
// when each GPU's per-op gathers start, by the op they gather.
class FirstStarts final : public sim::StreamObserver {
 public:
  explicit FirstStarts(const workloads::StepProgram& p) : p_(p) {}
  void on_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                 sim::Time) override {
    const sim::Task t = p_.gpus[gpu].streams[stream].tasks[task];
    if (t.id >= p_.labels.size()) return;
    const workloads::KernelLabel& label = p_.labels[t.id];
    if (label.phase == workloads::Phase::Forward && label.kernel == 0)
      kernel.try_emplace({gpu, label.op}, start);
  }
  void on_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                     sim::Time) override {
    const sim::Task t = p_.gpus[gpu].streams[stream].tasks[task];
    const workloads::CollectiveSpec& spec = p_.collectives.at(t.id);
    if (spec.role == CollectiveRole::ParameterAllGather) gather.try_emplace({gpu, spec.op_index}, start);
  }
  // {gpu, op} -> the first (forward) start
  std::map<std::pair<std::uint32_t, std::uint32_t>, sim::Time> kernel, gather;

 private:
  const workloads::StepProgram& p_;
};

}  // namespace

TEST_CASE("ZeRO-3 with experts: each op gathered over the replicas holding its shards, none at dp = ep") {
  // By hand (../shared/reference/transformers.md's Mixtral row: hidden 4,096, 8 KV heads of 128,
  // SwiGLU 14,336 per expert, 8 experts; BF16, 2 bytes a parameter; tp 2):
  //  - layer.<i> (attention, norms, router): (2 x 4096^2 + 2 x 4096 x 1024) / 2 + the two norms'
  //    2 x 4096 and the router's 4096 x 8, which every TP rank holds whole: 21,012,480 parameters,
  //    42,024,960 B, over
  //    the 4 replicas of the GPU's TP rank, GPUs {r, r + 2, r + 4, r + 6};
  //  - layer.<i>.experts at ep 2: 8 / 2 = 4 experts of 3 x 4096 x 14336 / 2: 352,321,536
  //    parameters, 704,643,072 B, over the dp / ep = 2 replicas of its EP rank e (replicas e and
  //    e + 2): GPUs {2e + r, 2e + r + 4};
  //  - at ep 4 = dp each replica holds its 2 experts whole: nothing of them is sharded, so nothing
  //    is gathered (before: a one-member gather, forward and backward, on every GPU).
  // Each GPU gathers each op it gathers twice (before its forward and its backward): embedding,
  // 2 layers, head, and the 2 expert ops where dp / ep > 1: 12 at ep 2, 8 at ep 4.
  const std::int64_t dense_bytes = 2 * ((2 * 4096LL * 4096 + 2 * 4096LL * 1024) / 2 + 2 * 4096 + 4096 * 8);
  const std::int64_t expert_bytes = 2 * (4 * 3 * 4096LL * 14336 / 2);
  CHECK(dense_bytes == 42'024'960);
  CHECK(expert_bytes == 704'643'072);
  struct Case {
    int ep;
    std::string zero;
    std::size_t gathers_a_gpu;
  };
  for (const Case& c : {Case{2, "3", 12}, Case{4, "3", 8}, Case{4, "fsdp", 8}}) {
    CAPTURE(c.ep);
    CAPTURE(c.zero);
    const analysis::StepSetup s = mixtral_setup(c.ep, c.zero);
    const workloads::StepProgram p = analysis::build_program(s);
    std::size_t expert_specs = 0, dense_specs = 0;
    for (const workloads::CollectiveSpec& x : p.collectives) {
      if (x.role != CollectiveRole::ParameterAllGather) continue;
      CAPTURE(s.profile->ops[x.op_index].name);
      REQUIRE(!x.members.empty());
      const int r = x.members.front() % 2;
      if (is_expert(s, x.op_index)) {
        ++expert_specs;
        CHECK(x.size.count() == expert_bytes);
        const int e = x.members.front() / 2;
        CHECK(x.members == std::vector<int>{2 * e + r, 2 * e + r + 4});
      } else {
        ++dense_specs;
        CHECK(x.members == std::vector<int>{r, r + 2, r + 4, r + 6});
        if (s.profile->ops[x.op_index].name.starts_with("layer.")) CHECK(x.size.count() == dense_bytes);
      }
    }
    // Forward and backward of each op, for each group: 2 x 2 expert ops x 4 (EP rank, TP rank)
    // groups at ep 2; 2 x 4 dense ops x 2 TP ranks.
    CHECK(expert_specs == (c.ep == 2 ? 2u * 2 * 4 : 0u));
    CHECK(dense_specs == 2u * 4 * 2);
    for (std::size_t g = 0; g < p.gpus.size(); ++g) {
      CAPTURE(g);
      std::size_t gathers = 0;
      for (const sim::StreamProgram& stream : p.gpus[g].streams)
        for (const sim::Task t : stream.tasks) {
          if (t.kind != sim::TaskKind::Collective) continue;
          const workloads::CollectiveSpec& x = p.collectives.at(t.id);
          if (x.role != CollectiveRole::ParameterAllGather) continue;
          ++gathers;
          CHECK(stream.name == "parameters");
          REQUIRE(t.rank < x.members.size());
          CHECK(x.members[t.rank] == static_cast<int>(g));  // its own rank in its own group
        }
      CHECK(gathers == c.gathers_a_gpu);
    }
  }
}

TEST_CASE("ZeRO-3 with experts at dp = ep: the next layer's gather is prefetched past the experts") {
  // FSDP prefetches one gathered op ahead: op j's gather is issued when the compute stream starts the
  // op gathered before it. At dp = ep the experts are not gathered, so layer.1's gather starts the
  // moment layer.0 (its attention) starts, in simulated time to the picosecond; before, a
  // one-member gather of layer.0.experts stood between them and held it until the experts started,
  // after layer.0's attention, router and dispatch all-to-all (at dp 4 x ep 4 x tp 2 here; 221.0 ->
  // 219.0 ms a step for the 8-layer Mixtral slice at dp 8 x ep 8 x tp 2 on 2 DGX H100:
  // tests/bench/MEASUREMENTS.md, zeroep). At ep 2 the experts are gathered, and layer.1 waits for
  // them as before.
  for (const int ep : {4, 2}) {
    CAPTURE(ep);
    const analysis::StepSetup s = mixtral_setup(ep, "3");
    const workloads::StepProgram p = analysis::build_program(s);
    FirstStarts starts(p);
    const analysis::StepResult r = analysis::simulate_program(s, p, {.stream = &starts});
    CHECK(r.step_time > sim::Time::zero());
    const std::uint32_t layer0 = s.profile->op_by_name("layer.0"), layer1 = s.profile->op_by_name("layer.1");
    const std::uint32_t experts0 = s.profile->op_by_name("layer.0.experts");
    for (std::uint32_t g = 0; g < p.gpus.size(); ++g) {
      CAPTURE(g);
      REQUIRE(starts.gather.contains({g, layer1}));
      REQUIRE(starts.kernel.contains({g, layer0}));
      REQUIRE(starts.kernel.contains({g, experts0}));
      CHECK(starts.kernel.at({g, layer0}) < starts.kernel.at({g, experts0}));
      CHECK(starts.gather.at({g, layer1}) == starts.kernel.at({g, ep == 4 ? layer0 : experts0}));
      CHECK(starts.gather.contains({g, experts0}) == (ep == 2));
    }
  }
}

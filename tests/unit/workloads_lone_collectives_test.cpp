// Expert parallelism at dp = ep: each replica holds its experts whole, so their gradients have no
// one to be reduced with. The program has no collective of one member (workloads/program/
// lone_collectives.h; ZeRO-1/2's experts' gather is not made, sharded_data_parallel.h), keeps the
// copies around the experts' buckets, and simulates the same step to the picosecond.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "workloads/program/step_program.h"

using namespace hybridsim;

namespace {

// Mixtral 8x7B's 2-layer slice on one DGX H100: dp 4 x ep 4 x tp 2 (sequence parallel), ZeRO `zero`.
analysis::StepSetup mixtral_setup(const std::string& zero) {
  static std::vector<scenarios::ResolvedScenario> kept;  // the setup points into its scenario
  kept.push_back(scenarios::resolve(scenarios::parse_scenario(
      "cluster: {preset: dgx-h100}\n"
      "workload: {network: mixtral-8x7b, model: {layers_simulated: 2}}\n"
      "parallelism: {dp: 4, tp: 2, ep: 4, zero: " +
          zero + ", sequence_parallel: true}\ntraining: {micro_batch: 1, global_batch: 4, recompute: none}\n",
      "m.yaml")));
  return analysis::step_setup(kept.back());
}

}  // namespace

TEST_CASE("expert parallel at dp = ep: no collective of one member, the same step") {
  // The step each ZeRO stage simulated with the one-member collectives (main at fda1486: 16
  // reduces of the experts' gradients, 2 layers on each of 8 GPUs, and at stages 1 and 2 a gather
  // of the experts' updated parameters a GPU), in picoseconds: they moved nothing and took no time.
  // With each layer's two RMSNorms whole on both TP ranks (8,192 parameters, not 4,096) and the final
  // one with the LM head, the dense buckets hold those more bytes: 68,189,696,680 / 66,305,824,164 /
  // 65,936,774,424 / 65,688,575,260 before (1.16 us, 11 ns, 21 ns and 32 ns from these). With each
  // layer's QKV and the LM head's input-gradient all-reduce beside their weight-gradient GEMMs
  // (tpoverlap, 2026-12-07), 312,633,834 ps less at every stage: 68,188,533,384 / 66,305,835,213 /
  // 65,936,753,595 / 65,688,543,071 before. Under sequence parallelism, which a mixture under tp
  // needs since hunt11 (Megatron-LM's rule): 67,875,899,550 / 65,993,201,379 / 65,624,119,761 /
  // 65,375,909,237 without it.
  const struct {
    const char* zero;
    std::int64_t step_ps;
  } cases[] = {{"0", 67'804'708'298}, {"1", 65'825'325'252}, {"2", 65'573'029'469}, {"3", 65'493'382'484}};
  for (const auto& c : cases) {
    CAPTURE(c.zero);
    const analysis::StepSetup s = mixtral_setup(c.zero);
    const workloads::StepProgram p = analysis::build_program(s);
    for (const workloads::CollectiveSpec& spec : p.collectives) CHECK(spec.members.size() > 1);
    // Each GPU still copies each layer's experts' gradients into the buffer and back: 2 layers,
    // in and out, on 8 GPUs.
    int expert_copies = 0;
    for (const sim::GpuProgram& gpu : p.gpus)
      for (const sim::StreamProgram& stream : gpu.streams)
        for (const sim::Task t : stream.tasks)
          if (p.is_gradient_copy(t)) {
            const workloads::CollectiveSpec& bucket = p.copy_bucket(p.labels[t.id]);
            expert_copies += std::ranges::count(s.step.ep.expert_ops, bucket.op_index) > 0 ? 1 : 0;
          }
    CHECK(expert_copies == 32);
    CHECK(analysis::simulate_program(s, p, {}).step_time.ps() == c.step_ps);
  }
}

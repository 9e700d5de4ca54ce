// A transformer layer-slice's step built and simulated end to end (analysis/step/step_runner.h), for
// the tests of each parallel dimension: the generated step, its program and its result.
//   TransformerStepRun r = run_transformer_step({.model = "llama3-8b", .gpu = "h100", .dp = 2, .tp = 8},
//   topo);
#pragma once
#include <string>

#include "analysis/step/step_runner.h"
#include "topology/preset_registry.h"
#include "topology/topology.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/gpu/gpu.h"

namespace hybridsim::testing {

// One DGX H100 (8 GPUs on its NVSwitch), built once.
inline const topology::Topology& one_dgx_h100() {
  static const topology::Topology t = topology::build_cluster({.preset = "dgx-h100", .nodes = 1});
  return t;
}

struct TransformerStepSpec {
  std::string model;   // a named model (workloads/generators/transformer_model.h)
  std::string gpu;     // its key (workloads/gpu/gpu.h), BF16
  int dp = 1, tp = 1;  // dp × tp GPUs
  bool sequence_parallel = false;
  int zero = 0;
  int accumulation = 1;
  bool gradient_copies = true;     // StepOptions' default
  bool ideal_collectives = false;  // no reduction cost, no contention, the ideal protocol
};

struct TransformerStepRun {
  workloads::TransformerStep step;
  workloads::StepProgram program;
  analysis::StepResult result;
};

// Two layers of the model, one micro-batch of one sequence per GPU; `step` must outlive the setup.
inline workloads::TransformerStep transformer_step(const TransformerStepSpec& s) {
  return workloads::generate_transformer(
      {.model = workloads::named_transformer(s.model),
       .micro_batch = 1,
       .tp = s.tp,
       .sequence_parallel = s.sequence_parallel,
       .layers_simulated = 2},
      workloads::transformer_cost(workloads::gpu_by_key(s.gpu), workloads::Precision::Bf16));
}

inline analysis::StepSetup transformer_step_setup(const TransformerStepSpec& s,
                                                  const topology::Topology& topology,
                                                  const workloads::TransformerStep& step) {
  analysis::StepSetup setup;
  setup.profile = &step.profile;
  setup.topology = &topology;
  setup.placement = workloads::place_all_on_first(step.profile, 1);
  setup.mapping = workloads::default_mapping(topology, s.dp * s.tp, 1);
  setup.step.tp = s.tp;
  setup.step.tp_syncs = step.syncs;
  setup.step.tp_gradients = step.tp_gradients;
  setup.step.zero = s.zero;
  setup.step.accumulation = s.accumulation;
  setup.step.gradient_copies = s.gradient_copies;
  if (s.ideal_collectives) {
    setup.collective.reduction_bandwidth = sim::Bandwidth();
    setup.executor.contention = false;
    setup.comm.protocol = sim::Protocol::Ideal;
  }
  return setup;
}

inline TransformerStepRun run_transformer_step(const TransformerStepSpec& s,
                                               const topology::Topology& topology) {
  TransformerStepRun r;
  r.step = transformer_step(s);
  const analysis::StepSetup setup = transformer_step_setup(s, topology, r.step);
  r.program = analysis::build_program(setup);
  r.result = analysis::simulate_program(setup, r.program);
  return r;
}

}  // namespace hybridsim::testing

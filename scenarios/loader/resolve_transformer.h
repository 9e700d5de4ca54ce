// Transformer scenarios (workload.network: a named transformer or `transformer`, workload.model,
// parallelism.tp and sequence_parallel, training.recompute) resolved into the generated step of one
// TP rank (workloads/generators/transformer_gen.h), its cost model and the facts results report
// (model FLOPs, the GPU's dense peak). Errors are located at the key that causes them.
//   if (is_transformer(s)) { TransformerResolution t = resolve_transformer(s); t.step.profile; }
#pragma once
#include <cstdint>
#include <optional>

#include "scenarios/loader/scenario.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/memory/memory_model.h"
#include "workloads/memory/transformer_memory.h"

namespace hybridsim::scenarios {

bool is_transformer(const Scenario& s);

struct TransformerResolution {
  workloads::TransformerStep step;
  workloads::TransformerCost cost;
  // In double: Llama 3 405B's 512-sequence micro-batch is about 1e19 FLOPs, past int64.
  double model_flop_per_micro_batch = 0;  // Narayanan et al.'s count, the simulated layers'
  double mfu_flop_per_micro_batch = 0;    // without recomputation: what MFU counts
};
TransformerResolution resolve_transformer(const Scenario& s);

// parallelism.zero as a stage 0..3 (fsdp: 3).
int zero_stage(const Scenario& s);

// What the memory model is given for one GPU: a layer-slice counts its own layers, as the pipeline
// stage it stands for; ZeRO shards over parallelism.dp.
workloads::TransformerMemoryInput transformer_memory_input(const Scenario& s, const TransformerResolution& t);
// InputError located at workload.model when weights, gradients, Adam state and Korthikanti's
// activations of one GPU exceed `capacity` (nothing without a capacity); when even the largest
// sharding the cluster allows (`gpus`, `per_machine` to a machine: workloads::largest_sharding)
// would not fit, it says so, and that no tp, zero or recompute will do.
void check_transformer_memory(const Scenario& s, const TransformerResolution& t,
                              const std::optional<workloads::MemoryCapacity>& capacity, int gpus,
                              int per_machine);

}  // namespace hybridsim::scenarios

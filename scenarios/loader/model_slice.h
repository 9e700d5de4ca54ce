// A layer-slice's whole model (workload.model.layers_simulated below the model's layers): what one
// GPU of the whole model would hold, by the same closed form the slice's memory is checked with,
// so that a slice's run can say whether the model it stands for fits (its step time, throughput and
// memory are the slice's). Bytes; the verdict is the caller's, against the GPU's capacity.
//   if (auto m = model_slice(s, t, micro_batches)) m->whole_model.total();  // 331 GiB: gpt3-175b, tp 8
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "scenarios/loader/resolve_transformer.h"
#include "scenarios/loader/scenario.h"
#include "workloads/memory/memory_model.h"

namespace hybridsim::scenarios {

struct ModelSlice {
  std::string model;                  // "gpt3-175b"
  std::int64_t layers_simulated = 0;  // the slice's layers
  std::int64_t layers = 0;            // the model's
  int pp = 1;                         // stages the model's layers are split over, evenly
  int stage = 0;                      // the stage of whole_model: the one that holds the most
  workloads::MemoryBreakdown whole_model;  // one GPU's peak at every layer (weights, ..., activations)
};

// Nothing unless the scenario simulates fewer layers than its model has. Otherwise one GPU's memory
// at the model's own layers with the scenario's tp, sequence parallelism, recomputation, ZeRO, ep
// and micro-batch (transformer_memory_input with the model's layers); with pp > 1 each stage's by
// workloads::pipeline_memory over `micro_batches`, the model's layers split evenly (balanced_layers:
// pipeline.stages gives the slice's split, not the model's), and the largest stage kept.
std::optional<ModelSlice> model_slice(const Scenario& s, const TransformerResolution& t, int micro_batches);

}  // namespace hybridsim::scenarios

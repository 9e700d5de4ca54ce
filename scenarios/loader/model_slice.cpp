#include "scenarios/loader/model_slice.h"

#include "workloads/memory/pipeline_memory.h"
#include "workloads/memory/transformer_memory.h"

namespace hybridsim::scenarios {

std::optional<ModelSlice> model_slice(const Scenario& s, const TransformerResolution& t, int micro_batches) {
  const workloads::TransformerModel& model = t.step.config.model;
  if (t.step.layers_simulated >= model.layers) return std::nullopt;
  workloads::TransformerMemoryInput whole = transformer_memory_input(s, t);
  whole.model.layers = model.layers;  // the slice's layers set back to the model's
  ModelSlice out{.model = model.name,
                 .layers_simulated = t.step.layers_simulated,
                 .layers = model.layers,
                 .pp = s.parallelism.pp,
                 .stage = 0,
                 .whole_model = {}};
  workloads::TransformerMemory memory = workloads::transformer_memory(whole);
  if (s.parallelism.pp > 1) {
    const auto stages = workloads::pipeline_memory(whole,
                                                   {.pp = s.parallelism.pp,
                                                    .schedule = s.parallelism.pipeline.schedule,
                                                    .virtual_stages = s.parallelism.pipeline.virtual_stages},
                                                   micro_batches);
    out.stage = workloads::largest_stage(stages);
    memory = stages[static_cast<std::size_t>(out.stage)].memory;
  }
  out.whole_model = workloads::transformer_step_memory(whole, memory).ranks.front().peak;
  return out;
}

}  // namespace hybridsim::scenarios

// Memory of each stage of a transformer pipeline (pipeline_program.h): its layers' weights,
// gradients and Adam state as transformer_memory counts them (the embedding's on the first stage,
// the LM head's on the last), and the activations it holds at its peak — the layers of every
// micro-batch whose forward it has run and whose backward it has not, counted along the stage's
// schedule (pipeline_schedule.h): 1F1B holds min(p − s, m) micro-batches on stage s (p on the
// first), GPipe all m, interleaved (p − s − 1)·2 + (v − 1)·p + 1 chunk passes (Narayanan et al.
// 2021, §2.2; ../shared/reference/transformers.md); the loss's FP32 logits on the last, for each
// micro-batch whose loss it holds for its backward (one under 1F1B, m under GPipe).
//   auto stages = pipeline_memory({.model = named_transformer("gpt3-175b"), .tp = 8}, {.pp = 8}, 64);
//   stages[0].in_flight == 8
#pragma once
#include <vector>

#include "workloads/memory/transformer_memory.h"
#include "workloads/program/pipeline_schedule.h"

namespace hybridsim::workloads {

struct StageMemory {
  int first_layer = 0, layers = 0;  // the stage's layers (interleaved: over all its chunks)
  double in_flight = 0;             // micro-batches of its layers' activations held at the peak
  TransformerMemory memory;
};

// One entry per stage; `in.model.layers` is the layers pipelined (a slice's), `micro_batches` m.
std::vector<StageMemory> pipeline_memory(const TransformerMemoryInput& in, const PipelineOptions& pipeline,
                                         int micro_batches);

// One micro-batch's FP32 logits of the loss, on each GPU of the last stage (the vocabulary padded
// and split over tp, as the step computes it).
std::int64_t pipeline_logits_bytes(const TransformerMemoryInput& in);
// The most micro-batches whose loss the last stage holds at once for their backward (its model
// chunk's forwards not yet run backward): 1 under 1F1B, m under GPipe, m under interleaved with
// m = pp (every forward first, as Megatron-LM warms up then). The logits were counted once under
// every schedule: a GPipe last stage of Llama 3 8B at m 4 held 3.9 GiB of them, not 15.7.
int logits_in_flight(const PipelineOptions& pipeline, int micro_batches);

// The stage that holds the most (the first of equals): what one GPU of the pipeline needs.
int largest_stage(const std::vector<StageMemory>& stages);

// InputError "stage s of p (layers a-b) of <model> needs ..." for the first stage that does not fit.
void check_pipeline_fits(const std::vector<StageMemory>& stages, sim::Bytes capacity,
                         const std::string& model, const std::string& where);

}  // namespace hybridsim::workloads

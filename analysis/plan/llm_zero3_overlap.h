// ZeRO-3's data-parallel time the step waits for, from the program's order
// (workloads/program/sharded_data_parallel.h): each op's parameters all-gathered on a stream of
// their own one op ahead of the compute (FSDP's prefetch: op j + 1's gather issued when op j
// starts), its gradients reduce-scattered on the communication stream after its backward; both on
// the group's links, which two collectives at once share equally. Seconds, for the closed form
// (llm_closed_forms.h).
//   double exposed = zero3_exposed_seconds(setting, layout, machine);
#pragma once
#include "analysis/plan/llm_closed_forms.h"

namespace hybridsim::analysis {

// The seconds the compute stream waits on gathers over the step's m micro-batches, and the last
// reduce-scatters after the last backward, on the first (the only: ZeRO-3 takes no pipeline)
// stage's GPU. Each op's window is its kernels (llm_layer_seconds, llm_end_seconds), the gather of
// the next op beside it and the reduce-scatters still queued: the next op starts when both the
// window's kernels and that gather are done. A mixture's experts at dp = ep gather nothing (each
// replica holds its experts whole): the next op's gather runs beside them too.
double zero3_exposed_seconds(const LlmSetting& setting, const LlmLayout& layout, const LlmMachine& machine);

}  // namespace hybridsim::analysis

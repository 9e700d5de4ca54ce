// Pipeline scenarios (parallelism.pp > 1, pipeline.*) resolved into the step's mapping and
// pipeline options (workloads/program/pipeline_program.h) and checked stage by stage against the
// GPU's memory. Errors are located at the key that causes them.
//   WorkerMapping m = pipeline_mapping(s, topology);   // dp·tp workers × pp stages
//   apply_pipeline_settings(s, profile, step);         // after the training loop set step.accumulation
#pragma once
#include <optional>
#include <vector>

#include "scenarios/loader/resolve_transformer.h"
#include "scenarios/loader/scenario.h"
#include "topology/topology.h"
#include "workloads/program/mapping.h"
#include "workloads/memory/pipeline_memory.h"
#include "workloads/program/placement.h"

namespace hybridsim::scenarios {

// dp × tp workers (TP rank r of replica q is worker q·tp + r) of pp stages; stage s of worker w on
// GPU s·dp·tp + w, so that a stage's TP group sits on one machine's NVLink and the stages (and,
// within a stage, the data-parallel replicas) span the machines, as Megatron-LM orders its ranks.
workloads::WorkerMapping pipeline_mapping(const Scenario& s, const topology::Topology& topology);

// step.pipeline from the scenario, and `placement` its stages (the stage of each op, for reports);
// nothing for pp = 1, whose pipeline.* keys must be left out. step.accumulation is the
// micro-batches per step (training.global_batch / (dp × micro_batch)).
void apply_pipeline_settings(const Scenario& s, const workloads::Profile& profile,
                             workloads::StepOptions& step, workloads::MpPlacement& placement);

// InputError located at workload.model naming the first stage that does not fit `capacity`.
// Each stage's memory (pipeline_memory.h) with the scenario's tp, ZeRO stage and ep.
std::vector<workloads::StageMemory> pipeline_stage_memory(const Scenario& s, const TransformerResolution& t,
                                                          int micro_batches);
void check_pipeline_memory(const Scenario& s, const TransformerResolution& t,
                           const std::optional<workloads::MemoryCapacity>& capacity, int micro_batches);

}  // namespace hybridsim::scenarios

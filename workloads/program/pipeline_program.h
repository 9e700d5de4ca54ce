// One training step of a pipeline (StepOptions::pipeline, pp > 1) as per-GPU programs: each of
// the mapping's workers (dp × tp of them; TP rank r of replica q is worker q·tp + r) holds the
// pipeline's pp stages on its mp ranks. A transformer's profile is a chain — embedding, layers,
// LM head — cut into pp × v model chunks of whole layers (the embedding with the first, the head
// and loss with the last; chunk c on stage c mod pp). Each stage's compute stream runs its
// micro-batches' forward and backward chunks in the schedule's order (pipeline_schedule.h),
// waiting for the activation (forward) or its gradient (backward) from the neighbouring stage;
// each transfer is a point-to-point collective of the chunk's last op's activation bytes over the
// links between the two GPUs, on one send stream per peer (in the order the data becomes ready)
// and the peer's matching receive stream. After a chunk's last backward its gradients go to the
// stage's data-parallel collectives (over the same stage of every worker), and the optimizer runs
// once they are all done. Kernels are labelled with their micro-batch (KernelLabel::micro_batch).
// With tp > 1 the TP collectives are added on each stage's TP group (tensor_parallel.h); with
// options.zero 1 each stage's gradients are reduce-scattered over its data-parallel group after the
// flush, its optimizer updates 1/dp of them and the stage's updated parameters are all-gathered
// (sharded_data_parallel.h); with options.ep.ep > 1 the stages holding MoE layers run their
// all-to-alls on per-stage EP groups (expert_parallel.h).
//   StepProgram p = build_pipeline_program(profile, mapping, gpus, {.accumulation = 8,
//                                          .pipeline = {.pp = 4}});
#pragma once
#include <vector>

#include "workloads/program/build_progress.h"
#include "workloads/program/step_program_types.h"

namespace hybridsim::workloads {

// The global model chunk (0 .. pp·v − 1) of each op: the ops named "layer.N" (every op when none
// is) split by options.chunk_layers (or balanced_layers), a layer's other ops ("layer.N.experts")
// with it, the ops before the first layer with
// chunk 0 and those after the last with the last chunk. InputError when the ops are not a chain
// (each op reading only the one before it) or pipeline_problem finds one.
std::vector<int> pipeline_chunk_of_op(const Profile& profile, const PipelineOptions& options);
// How many of the profile's ops pipeline_chunk_of_op counts as layers.
int pipeline_layer_count(const Profile& profile);

// mapping.mp must be options.pipeline.pp; options.accumulation is the micro-batches per step.
// `progress` (null: nobody) is told every few workers (build_progress.h).
StepProgram build_pipeline_program(const Profile& profile, const WorkerMapping& mapping, int gpu_count,
                                   const StepOptions& options, ProgramBuildProgress* progress = nullptr);

}  // namespace hybridsim::workloads

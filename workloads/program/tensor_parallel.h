// Tensor parallelism on a step program: a data-parallel program of dp × tp workers (mp = 1,
// worker w = replica · tp + TP rank, so that a TP group is tp consecutive workers: one machine
// under the default mapping) becomes dp replicas of a TP group. Each data-parallel gradient
// collective is split into tp collectives, one per TP rank over the dp replicas of that rank (each
// rank holds a different shard), and the TP collectives of the transformer generator
// (TpSync) are inserted into every GPU's compute stream after the kernels that issue them, each
// one a collective of its TP group that the stream waits for.
//   StepProgram p = build_step_program(step.profile, place_all_on_first(step.profile, 1),
//                                      default_mapping(topology, dp * tp, 1), gpus, options);
//   apply_tensor_parallel(p, step.syncs, tp);
#pragma once
#include <span>
#include <vector>

#include "workloads/profile/tp_sync.h"
#include "workloads/program/build_progress.h"
#include "workloads/program/step_program_types.h"

namespace hybridsim::workloads {

// A pipeline's program (mp = pp stages, pipeline_program.h) gets a TP group per replica and stage.
// `gradients` (sequence parallelism's norms and routers; empty: none) become one all-reduce per TP
// group (CollectiveRole::NormGradientAllReduce) of those of the ops its stage runs, on the compute
// stream before the optimizer kernel, after the data-parallel gradients are done.
// The program's global_batch is left as its builder counted it (step_global_batch, step_program.h,
// which counts replicas by options.tp): apply it with that tp.
// InputError when the program's workers are not a multiple of tp. `progress` (null: nobody) is told
// every few replicas (build_progress.h).
void apply_tensor_parallel(StepProgram& program, std::span<const TpSync> syncs, int tp,
                           std::span<const TpGradient> gradients = {},
                           ProgramBuildProgress* progress = nullptr);

// [worker][mp rank] → the GPU that runs it (-1: none), for a program of `workers` workers: one rank
// a worker without a pipeline, its pp stages in one.
std::vector<std::vector<int>> gpu_of_worker_rank(const StepProgram& program, int workers);

}  // namespace hybridsim::workloads

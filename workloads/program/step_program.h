// One training step of a dp × mp strategy as per-GPU programs (sim/gpu_program.h): every GPU of
// every worker gets a compute stream (its ops' forward kernels in dataflow order, then backward, then
// the optimizer), a communication stream (the data-parallel gradient collectives, bucket by bucket,
// each launched as soon as backward has produced its gradients; or the profile's recorded buckets)
// and one send and one receive stream
// per model-parallel peer (activations forward, activation gradients backward). Collectives are
// described here (who, what, how large); their ring plans come from workloads/comm/comm_plan.h.
//   StepProgram s = build_step_program(profile, placement, mapping, {.bucket_size = Bytes::mib(25)});
#pragma once
#include "workloads/program/build_progress.h"
#include "workloads/program/step_program_types.h"

namespace hybridsim::workloads {

// GPU g's kernel-duration factor: options.compute_scale × options.gpu_compute_scale[g] (if listed).
double gpu_compute_scale(const StepOptions& options, std::size_t gpu);

// Samples per step over every replica and micro-batch: the profile's batch per worker × the
// replicas (the mapping's workers are dp × options.tp, and a TP group's workers process the same
// samples) × options.accumulation. The one formula: build_step_program and build_pipeline_program
// set StepProgram::global_batch with it, and the settings' parallelism line (scenarios/, before any
// program is built) prints it.
std::int64_t step_global_batch(const Profile& profile, const WorkerMapping& mapping,
                               const StepOptions& options);

// Tensor parallelism (options.tp, tensor_parallel.h), then ZeRO (options.zero,
// sharded_data_parallel.h), then expert parallelism (options.ep, expert_parallel.h) on a program
// just built: each reads the collectives the one before left. The one order, for build_step_program
// and build_pipeline_program alike.
void apply_parallel_dimensions(StepProgram& program, const Profile& profile, const StepOptions& options,
                               ProgramBuildProgress* progress);

// `gpu_count` is the cluster's GPU count (programs are indexed by global GPU rank). `progress`
// (null: nobody) is told every few workers (build_progress.h).
StepProgram build_step_program(const Profile& profile, const MpPlacement& placement,
                               const WorkerMapping& mapping, int gpu_count,
                               const StepOptions& options, ProgramBuildProgress* progress = nullptr);

}  // namespace hybridsim::workloads

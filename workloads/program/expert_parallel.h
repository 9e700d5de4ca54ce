// Expert parallelism on a step program (after tensor_parallel.h): the dp data-parallel replicas
// (each a TP group of tp GPUs) fall into EP groups of `ep` consecutive replicas — one machine
// under the default mapping, as Megatron-LM and DeepSpeed carve EP groups out of data
// parallelism. Each TP rank of a block of ep replicas is one EP group: the transformer
// generator's dispatch and combine all-to-alls (StepOptions::ep.syncs) are inserted into its GPUs'
// compute streams after the kernels that issue them, and the experts' gradient buckets (the
// buckets of StepOptions::ep.expert_ops) are all-reduced over the dp / ep replicas that hold the
// same experts instead of over all dp (none at dp = ep, where one replica holds them:
// lone_collectives.h; the copies around their buckets stay). Dense gradients keep all dp. In a
// pipeline (mp = pp stages a worker) each stage has EP groups of its own, of the same stage of the
// block's replicas, and only the stages that hold MoE layers run all-to-alls; expert buckets go over
// the replicas' same stage.
//   apply_expert_parallel(program, options.ep);   // program.tp already applied
#pragma once
#include "workloads/program/step_program_types.h"

namespace hybridsim::workloads {

// InputError when ep does not divide the program's data-parallel replicas.
void apply_expert_parallel(StepProgram& program, const ExpertParallelOptions& ep);

}  // namespace hybridsim::workloads

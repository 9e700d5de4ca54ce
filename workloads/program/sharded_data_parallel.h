// Sharded data parallelism (ZeRO, FSDP) on a step program, after tensor parallelism
// (tensor_parallel.h): each dense gradient collective over a data-parallel group becomes a
// reduce-scatter of the same bucket (every rank keeps the 1/dp it updates), and the optimizer
// updates only that shard (its kernel's time divided by dp, rounded up).
//   stage 1: the reduce-scatters wait until backward is done (DeepSpeed stage 1 reduces at the end
//            of the micro-batch that exchanges), then the optimizer, then an all-gather of the
//            updated 16-bit parameters over the group: those whose gradients the GPU reduce-scattered
//            (the profile's; in a pipeline its stage's, after the flush, over the same stage of every
//            replica: Megatron-LM's distributed optimizer, DeepSpeed's pipeline engine with ZeRO-1);
//   stage 2: the reduce-scatters run per bucket during backward (DeepSpeed's overlap_comm), then
//            the optimizer and the all-gather, as stage 1;
//   stage 3 (FSDP): before each op with parameters (a layer, the embedding, the head) runs its
//            forward, and again before its backward, its parameters are all-gathered on a stream of
//            their own ("parameters") that runs one op ahead of the compute stream (FSDP's forward
//            and backward prefetch: the gather of the next op is issued when this one starts); its
//            gradients are reduce-scattered after its backward (build_step_program makes one bucket
//            per op for this stage); no all-gather after the optimizer (the next step gathers).
// Per step and rank, stages 1 and 2 move 2(n−1)/n of the parameter bytes as an all-reduce would;
// stage 3 moves 3(n−1)/n (two gathers and a reduce-scatter) per micro-batch.
//   StepProgram p = build_step_program(...);  // options.tp, options.zero
//   apply_sharded_data_parallel(p, profile, 3);
#pragma once
#include "workloads/profile/profile.h"
#include "workloads/program/step_program_types.h"

namespace hybridsim::workloads {

// The options the step's layout is made with under options.zero: stage 1 exchanges gradients once,
// after the last micro-batch (DeepSpeed reduces at the accumulation boundary); stages 2 and 3 after
// every micro-batch (DeepSpeed refuses no_sync there: each micro-batch's gradients are reduced into
// the shards); stage 3 makes one bucket per op (FSDP reduce-scatters each wrapped layer's own).
StepOptions sharded_layout_options(StepOptions options);

// Whether ZeRO `stage` runs with `pp` pipeline stages (a program's mp ranks): a pipeline holds each
// stage's gradients whole until its flush, so stages 2 and 3 would save no memory there (DeepSpeed's
// PipelineEngine refuses them; Megatron-LM's distributed optimizer is ZeRO-1). The one rule for the
// scenario loader, the planner and apply_sharded_data_parallel.
constexpr bool zero_runs_with_pipeline(int stage, int pp) { return stage <= 1 || pp <= 1; }

// Whether op `op` is a mixture's expert op that expert parallelism places on ep.ep of the replicas'
// EP ranks (each expert then lives on dp / ep replicas, not on all dp): none at ep 1. The one test
// for this pass, shard_experts and apply_expert_parallel.
bool is_expert_op(const ExpertParallelOptions& ep, std::uint32_t op);

// Nothing for stage 0 or a program of one replica (program.dp == 1: nothing to shard over).
// InputError for a stage outside 0..3, stage 2 or 3 with model parallelism (program.mp > 1: a
// pipeline's stages) or sparse gradients.
// `ep`: a mixture's expert ops, whose buckets' copies out bring back 1/(dp / ep) (shard_experts below
// does the rest for them, after expert parallelism's split, which also takes stage 3's gathers of
// an expert op over its dp / ep replicas); at dp = ep stage 3 gathers no expert op (each replica
// holds its experts whole) and prefetches the next op's parameters past it.
void apply_sharded_data_parallel(StepProgram& program, const Profile& profile, int stage,
                                 const ExpertParallelOptions& ep = {});

// A mixture's experts under ZeRO (apply_expert_parallel calls it first, after the pass above): each
// expert lives on the dp / ep replicas of one EP rank, so its state is sharded over those, not over
// all dp. The optimizer kernel's experts' share (by the bytes the GPU reduce-scatters) runs on 1/(dp /
// ep) of them, not 1/dp, and stages 1 and 2 gather the experts' updated parameters in a collective
// of their own (op_index an expert op), which apply_expert_parallel then splits over those replicas
// as it splits their gradients; none at dp = ep (each replica holds its experts whole: it would
// have one member). Nothing where no gradient is reduce-scattered (no ZeRO).
void shard_experts(StepProgram& program, const ExpertParallelOptions& ep);

}  // namespace hybridsim::workloads

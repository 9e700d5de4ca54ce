// The critical path of a simulated training step: the chain of work that ends when the step ends,
// found by walking back from the last task to finish through what the stream executor recorded
// (sim/execution_record.h): a kernel was released by the task before it on its stream; a wait by
// the record the executor says released it (which may be on another stream or GPU), else by its own
// stream; a collective rank ends only after its last rank joined, so the path continues on the rank
// that joined last. The path is a chain of busy intervals with no gaps (a kernel's launch delay,
// kept from a profiler trace, counts as its own part), so its parts add up to the step time
// exactly: how much of the step is compute that nothing could overlap, and how much is
// communication on the way.
//   CriticalPath p = critical_path(program, executor.record(), executor.finish_time());
// A folded step (analysis/step/step_fold.h) passes each GPU's representative: members never ran.
#pragma once
#include <cstdint>

#include "sim/execution_record.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

struct CriticalPath {
  sim::Time compute;                   // kernels on the path, including the two parts below
  sim::Time compute_slowed;  // of compute: kernels' time beyond alone, from communication beside them
  sim::Time gradient_copies;           // of compute: data-parallel gradient copies, as alone
  sim::Time optimizer;                 // of compute: the optimizer's update, as alone
  sim::Time gradient_communication;    // data-parallel collectives on the path (ZeRO's gathers too)
  sim::Time model_parallel_transfers;  // activations and activation gradients on the path
  sim::Time tensor_parallel_communication;  // TP collectives (all-reduces, or SP's scatters and gathers)
  sim::Time expert_parallel_communication;  // a mixture of experts' dispatch and combine all-to-alls
  sim::Time launch_gaps;               // kernels' launch delays on the path (imported CPU gaps)
  int gpus_visited = 0;                // distinct GPUs the path runs on
  int gpu_changes = 0;                 // times it moves from one GPU to another
};

// The path of a step that ended at `step_time`; every task of `program` must have run (the record
// is the executor's for this program).
CriticalPath critical_path(const workloads::StepProgram& program, const sim::ExecutionRecord& record,
                           sim::Time step_time, const std::vector<std::uint32_t>& representative = {});

}  // namespace hybridsim::analysis

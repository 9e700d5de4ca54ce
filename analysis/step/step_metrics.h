// What a simulated training step did, per GPU: compute (the union of its kernel intervals),
// communication (the union of its data-parallel collectives and the model-parallel transfers it
// sends), exposed communication (communication while no kernel runs) and idle time (neither), from
// what the stream executor recorded (sim/execution_record.h). Two parts of compute are named: the
// time kernels ran longer than alone because collectives shared the GPU (SMs, memory bandwidth), and
// the data-parallel gradient copies as they would run alone. All times in picoseconds (sim::Time).
//   std::vector<GpuStepMetrics> m = step_metrics(program, executor.record(), step, finish);
#pragma once
#include <cstdint>
#include <vector>

#include "sim/execution_record.h"
#include "workloads/program/step_program.h"

namespace hybridsim::analysis {

struct GpuStepMetrics {
  int gpu = -1;  // global GPU rank
  sim::Time finish;  // when its last stream finished
  sim::Time compute;          // all kernels, including the two parts below
  sim::Time compute_slowed;   // of compute: kernels' time beyond alone, from communication beside them
  sim::Time gradient_copies;  // of compute: copies into and out of gradient buffers, as alone
  sim::Time communication;
  sim::Time exposed_communication;
  sim::Time idle;  // step time − (compute ∪ communication)
  std::int64_t kernels = 0;
  // The step split into parts that add up to it, each taking only what the ones before left:
  // compute − optimizer, optimizer, tp_communication, ep_communication, pipeline_bubble,
  // dp_communication, and the rest (exposed point-to-point sends, idle that is no pipeline's).
  sim::Time optimizer;         // of compute: the optimizer's update kernels, as alone
  sim::Time tp_communication;  // tensor-parallel collectives while no kernel runs
  sim::Time ep_communication;  // expert-parallel all-to-alls, exposed by compute and the above
  sim::Time pipeline_bubble;   // a pipeline stage's compute stream waiting on another stage, and
                               // idle after its last task until the step ends
  sim::Time dp_communication;  // data-parallel collectives (ZeRO's gathers too), exposed by the above
};

// A pipeline's (workloads/program/pipeline_program.h) events recorded when a transfer from
// another stage arrived: 1 an activation, 2 an activation gradient, 0 any other; empty for a step
// that is no pipeline. A compute stream's wait on one is the pipeline's bubble.
std::vector<std::uint8_t> pipeline_arrivals(const workloads::StepProgram& program);

// Metrics of every GPU the strategy uses, in global rank order, for a step of `step_time`;
// `gpu_finish[g]` is when GPU g's last stream finished. A folded step (`representative` not
// empty, sim::StepFold) recorded only its representatives: a member's figures are its
// representative's.
std::vector<GpuStepMetrics> step_metrics(const workloads::StepProgram& program,
                                         const sim::ExecutionRecord& record, sim::Time step_time,
                                         const std::vector<sim::Time>& gpu_finish,
                                         const std::vector<std::uint32_t>& representative = {});

}  // namespace hybridsim::analysis

// What a simulated training step did, per GPU: compute (the union of its kernel intervals),
// communication (the union of its data-parallel collectives and the model-parallel transfers it
// sends), exposed communication (communication while no kernel runs) and idle time (neither), from
// the intervals sim::StreamExecutor reports. All times in picoseconds (sim::Time).
//   StepMetricsCollector m(program);  executor.set_observer(&m);  ...;  m.gpu(3).exposed_communication
#pragma once
#include <cstdint>
#include <vector>

#include "sim/stream_executor.h"
#include "workloads/step_program.h"

namespace hybridsim::analysis {

struct GpuStepMetrics {
  int gpu = -1;  // global GPU rank
  sim::Time finish;  // when its last stream finished
  sim::Time compute;
  sim::Time communication;
  sim::Time exposed_communication;
  sim::Time idle;  // step time − (compute ∪ communication)
  std::int64_t kernels = 0;
};

class StepMetricsCollector final : public sim::StreamObserver {
 public:
  explicit StepMetricsCollector(const workloads::StepProgram& program);
  void on_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                 sim::Time end) override;
  void on_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                     sim::Time end) override;
  // Metrics of every GPU the strategy uses, in global rank order, for a step of `step_time`.
  std::vector<GpuStepMetrics> finish(sim::Time step_time, const std::vector<sim::Time>& gpu_finish);

 private:
  using Interval = std::pair<std::int64_t, std::int64_t>;
  const workloads::StepProgram& program_;
  std::vector<std::vector<Interval>> compute_;  // per GPU
  std::vector<std::vector<Interval>> comm_;
};

}  // namespace hybridsim::analysis

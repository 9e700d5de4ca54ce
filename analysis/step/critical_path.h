// The critical path of a simulated training step: the chain of work that ends when the step ends,
// found by walking back from the last task to finish. A kernel was released by the task before it
// on its stream; a wait by the record of its event (when that came later than the stream reached
// the wait), which may be on another stream or GPU; a collective rank ends only after its last
// rank joined, so the path continues on the rank that joined last. The path is a chain of busy
// intervals with no gaps (a kernel's launch delay, kept from a profiler trace, counts as its own
// part), so its parts add up to the step time exactly: how much of the step is compute that nothing
// could overlap, and how much is communication on the way.
//   CriticalPathCollector c(program);  (observe the executor)  ...;  CriticalPath p = c.finish(step);
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/stream_executor.h"
#include "workloads/step_program.h"

namespace hybridsim::analysis {

struct CriticalPath {
  sim::Time compute;
  sim::Time gradient_communication;    // data-parallel all-reduce / all-gather time on the path
  sim::Time model_parallel_transfers;  // activations and activation gradients on the path
  sim::Time launch_gaps;               // kernels' launch delays on the path (imported CPU gaps)
  int gpus_visited = 0;                // distinct GPUs the path runs on
  int gpu_changes = 0;                 // times it moves from one GPU to another
};

class CriticalPathCollector final : public sim::StreamObserver {
 public:
  explicit CriticalPathCollector(const workloads::StepProgram& program);
  void on_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                 sim::Time end) override;
  void on_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, sim::Time start,
                     sim::Time end) override;
  // The path of a step that ended at `step_time` (every task must have run).
  CriticalPath finish(sim::Time step_time) const;

 private:
  using Location = std::pair<std::uint32_t, std::uint32_t>;  // (stream, task)
  const workloads::StepProgram& program_;
  std::vector<std::uint32_t> first_stream_;               // per GPU: index of its first stream
  std::vector<const sim::StreamProgram*> streams_;        // all streams, GPU by GPU
  std::vector<std::uint32_t> gpu_of_stream_;
  std::vector<std::vector<std::int64_t>> end_;            // per stream, per task: end (ps)
  std::vector<std::vector<Location>> collective_ranks_;   // per collective, per rank
};

}  // namespace hybridsim::analysis

// sim::StreamExecutor — runs every GPU's streams (sim/gpu_program.h) on the event queue: kernels
// take their (scaled) duration, after their launch delay if any (idle time: observers see only the
// kernel), events are recorded and waited on like CUDA events, and collective tasks start their
// rank in a sim::Collective and block the stream until that rank is done.
//   StreamExecutor exec(queue, programs, collectives, /*events=*/n, {});
//   exec.start();  queue.run();  exec.finish_time();
#pragma once
#include <cstdint>
#include <vector>

#include "sim/collective.h"
#include "sim/gpu_program.h"

namespace hybridsim::sim {

// Observers see every task interval, for metrics and traces (analysis/ implements this).
class StreamObserver {
 public:
  virtual void on_kernel(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task, Time start,
                         Time end) = 0;
  virtual void on_collective(std::uint32_t gpu, std::uint32_t stream, std::uint32_t task,
                             Time start, Time end) = 0;

 protected:
  ~StreamObserver() = default;
};

struct StreamExecutorOptions {
  // Kernels that start while a collective runs on the same GPU take this much longer (they share
  // SMs and memory bandwidth). 1.0 = off (the default).
  double compute_slowdown_during_communication = 1.0;
};

class StreamExecutor final : public EventHandler {
 public:
  // `collectives[i]` serves tasks with Task::collective(i, rank). The programs and the collectives
  // must outlive the executor (it keeps pointers to them).
  StreamExecutor(EventQueue& queue, const std::vector<GpuProgram>& programs,
                 std::vector<Collective*> collectives, std::uint32_t event_count,
                 StreamExecutorOptions options);
  StreamExecutor(const StreamExecutor&) = delete;
  StreamExecutor& operator=(const StreamExecutor&) = delete;

  void set_observer(StreamObserver* observer) { observer_ = observer; }
  // Starts every stream at the current time.
  void start();

  bool is_done() const { return streams_done_ == streams_.size(); }
  // When the last stream of a GPU finished (its step time).
  Time gpu_finish_time(std::uint32_t gpu) const { return gpu_finish_[gpu]; }
  Time finish_time() const;
  // Describes streams that are stuck (waiting forever) after the queue ran dry; empty if none.
  std::string describe_stuck() const;

  void on_event(std::uint64_t tag) override;

 private:
  struct StreamState {
    const StreamProgram* program;
    std::uint32_t gpu;
    std::uint32_t local;  // index within its GPU
    std::uint32_t next = 0;
    Time task_start;
    bool delay_done = false;  // the current kernel's launch delay has passed
    bool done = false;
  };
  struct EventState {
    bool recorded = false;
    std::vector<std::uint32_t> waiters;  // streams blocked on it
  };
  void advance(std::uint32_t stream);
  void finish_task(std::uint32_t stream);

  EventQueue& queue_;
  std::vector<StreamState> streams_;
  std::vector<double> compute_scale_;
  std::vector<Collective*> collectives_;
  std::vector<std::vector<std::uint32_t>> collective_stream_;  // [collective][rank] → stream
  std::vector<EventState> events_;
  std::vector<std::uint32_t> active_collectives_;  // per GPU
  std::vector<Time> gpu_finish_;
  std::size_t streams_done_ = 0;
  StreamExecutorOptions options_;
  StreamObserver* observer_ = nullptr;
};

}  // namespace hybridsim::sim

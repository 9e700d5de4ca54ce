// Progress inside one event: a folded collective's models run queues of their own (sim/fast:
// folded_ring.cpp, tree_model.cpp) within one event of the step's queue, millions of events at
// 1,024 GPUs, some on worker threads (sim/fast/tree_model.h, AheadRuns). They count their events
// here; the thread that made the object (the owner, whose step waits on the models) is told every
// few thousand of its own runs' events and while it waits for a worker's, and reads the count of
// every thread's runs. A worker never calls tick(): it only adds to an atomic counter, and stops its
// run (ModelRunStopped) once a tick has thrown on the owner's thread (Ctrl-C in the Python module):
// the step unwinds at once, not after the worker's run of seconds that its destructor waits for.
//   struct Lines : sim::ModelProgress { void tick() override { ... events() ... } } lines;
//   config.model_progress = &lines;   // then every model run of a collective built with it counts
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>

#include "sim/event_queue.h"

namespace hybridsim::sim {

// Thrown by a worker's model run once the owner's step has stopped (ModelProgress::count); the run's
// result is never taken, so no one but sim::AheadRuns, which keeps it as the run's error, sees it.
struct ModelRunStopped final : std::exception {
  const char* what() const noexcept override { return "a model run stopped: its step was stopped"; }
};

class ModelProgress {
 public:
  // A model run's events between two counts: a few milliseconds of work, so one relaxed atomic add
  // and one thread-id compare per 2^16 events cost nothing a benchmark sees.
  static constexpr std::uint64_t kCountEvery = 1u << 16;

  ModelProgress() : owner_(std::this_thread::get_id()) {}
  ModelProgress(const ModelProgress&) = delete;
  ModelProgress& operator=(const ModelProgress&) = delete;

  // From a model run on any thread: `n` more events processed. On the owner's thread also tick();
  // on another, throws ModelRunStopped once a tick has thrown (the step is being unwound).
  void count(std::uint64_t n) {
    events_.fetch_add(n, std::memory_order_relaxed);
    if (std::this_thread::get_id() == owner_)
      told();
    else if (stopped_.load(std::memory_order_relaxed))
      throw ModelRunStopped();
  }
  // The owner, waiting for a worker's run (AheadRuns::take): tick() with the worker's count so far.
  void waiting() {
    if (std::this_thread::get_id() == owner_) told();
  }
  // The owner, at work between model runs for seconds (a folded tree matching its channel groups and
  // claiming its links at 65,536 GPUs): tick() with the count so far, so a line falls due as it
  // would in a model run. Off the owner's thread, nothing.
  void setting_up() {
    if (std::this_thread::get_id() == owner_) told();
  }
  // Whether a tick has thrown: the owner's step stops, and so do the workers' runs for it.
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }
  // Every model run's events counted so far, on any thread.
  std::uint64_t events() const { return events_.load(std::memory_order_relaxed); }

 protected:
  ~ModelProgress() = default;
  // On the owner's thread only, every kCountEvery of its runs' events and while it waits; may throw
  // (the owner stops the step), which unwinds out of the model run.
  virtual void tick() = 0;
  // tick(), on the owner's thread, from a model run or from the step's own queue between them: where
  // it throws, the workers' runs stop too (a Ctrl-C seen between two models waited, in the step's
  // unwinding, for a worker's run of seconds to end).
  void told() {
    try {
      tick();
    } catch (...) {
      stopped_.store(true, std::memory_order_relaxed);
      throw;
    }
  }

 private:
  std::thread::id owner_;
  std::atomic<std::uint64_t> events_{0};
  std::atomic<bool> stopped_{false};
};

// Runs a model's queue to its end as EventQueue::run() does (nothing in a model calls stop()),
// counting its events to `progress` (null: run()).
inline void run_counted(EventQueue& queue, ModelProgress* progress) {
  if (progress == nullptr) {
    queue.run();
    return;
  }
  std::uint64_t count = 0;
  while (queue.step())
    if (++count == ModelProgress::kCountEvery) {
      progress->count(count);
      count = 0;
    }
  progress->count(count);
}

}  // namespace hybridsim::sim

// What a GPU runs in one simulated training step: streams of tasks, CUDA-style. A stream runs its
// tasks in order; streams of one GPU overlap. Tasks: a compute kernel of a given duration, recording
// a (CUDA-like) event, waiting for an event recorded anywhere (another stream or GPU), and taking
// part in a collective as one of its ranks (a communication kernel that lasts until that rank is done).
// A kernel may carry a launch delay: the stream first sits idle that long (the GPU waiting for the
// CPU to launch it; not scaled, not reported to observers), then runs the kernel. A kernel says what
// bounds it (SMs or memory bandwidth), which decides how communication on its GPU slows it
// (sim/stream_executor.h), and whether its work grows with the batch's samples.
//   GpuProgram p;  p.streams = {{"compute", {Task::kernel(Time::us(40), 0), Task::record(3)}},
//                               {"communication", {Task::wait(3), Task::collective(0, /*rank=*/2)}}};
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"

namespace hybridsim::sim {

enum class TaskKind : std::uint8_t { Kernel, Record, Wait, Collective };

// What limits a kernel's rate: its SMs (GEMMs, convolutions) or memory bandwidth (element-wise,
// normalization, pooling, copies, the optimizer).
enum class KernelBound : std::uint8_t { Compute, Memory };

struct Task {
  TaskKind kind = TaskKind::Kernel;
  KernelBound bound = KernelBound::Compute;  // Kernel only
  bool per_sample = true;  // Kernel only: its work grows with the batch's samples (GpuProgram::sample_scale)
  std::uint32_t id = 0;    // Kernel: a label for observers; Record/Wait: event; Collective: index
  std::uint32_t rank = 0;  // Collective: this GPU's rank in it
  Time duration;           // Kernel only
  Time launch_delay{};     // Kernel only: idle time on the stream before the kernel starts

  static Task kernel(Time duration, std::uint32_t label, Time launch_delay = Time::zero(),
                     KernelBound bound = KernelBound::Compute) {
    return {TaskKind::Kernel, bound, true, label, 0, duration, launch_delay};
  }
  static Task record(std::uint32_t event) {
    return {TaskKind::Record, KernelBound::Compute, true, event, 0, Time::zero()};
  }
  static Task wait(std::uint32_t event) {
    return {TaskKind::Wait, KernelBound::Compute, true, event, 0, Time::zero()};
  }
  static Task collective(std::uint32_t index, std::uint32_t rank) {
    return {TaskKind::Collective, KernelBound::Compute, true, index, rank, Time::zero()};
  }
  // The same kernel, its work independent of the batch (an optimizer, a gradient copy).
  Task fixed_work() const {
    Task t = *this;
    t.per_sample = false;
    return t;
  }
};

// A stream's tasks: its own, or those of another stream shared with it, each event shifted by
// `event_shift` and each collective index by `collective_shift` (shifted_from). At 16,384 GPUs the
// workers' compute streams are one list and per-GPU shifts instead of a copy each (sim/README.md,
// "Shared programs"). Reading gives tasks by value, shifts applied; changing a shared list copies it.
// A shared list may hold collective tasks that are each reader's own (their index and rank differ
// from GPU to GPU in no way a shift gives: ZeRO's gather of the updated parameters, each GPU's rank
// in its data-parallel group, and with experts the gather of theirs after it): stored as
// own_collective(k), the k-th reads as the list's set_own_collective(.., k). The first is held in
// the list's fields; any more in its vector of tasks, which a shared list holds none in otherwise.
class TaskList {
 public:
  // The stored rank of a collective task that reads as one of the list's own (own_collective(k)),
  // and the stored index of the first (the k-th's: kOwnCollective - k). No collective has as many ranks.
  static constexpr std::uint32_t kOwnCollective = 0xFFFFFFFFu;
  static Task own_collective(std::uint32_t k = 0) {
    return Task::collective(kOwnCollective - k, kOwnCollective);
  }
  static bool is_own_collective(const Task& t) {
    return t.kind == TaskKind::Collective && t.rank == kOwnCollective;
  }

  TaskList() = default;
  TaskList(std::initializer_list<Task> tasks) : own_(tasks) {}
  TaskList(std::vector<Task> tasks) : own_(std::move(tasks)) {}  // NOLINT: implicit, as the vector was
  // `base`'s tasks (`base` is made shared if it was not), events and collectives shifted.
  static TaskList shifted_from(TaskList& base, std::uint32_t event_shift, std::uint32_t collective_shift);

  std::size_t size() const { return shared_ ? shared_->size() : own_.size(); }
  bool empty() const { return size() == 0; }
  Task operator[](std::size_t i) const { return shared_ ? shift((*shared_)[i]) : own_[i]; }
  Task front() const { return (*this)[0]; }
  Task back() const { return (*this)[size() - 1]; }
  // Whether the tasks are another list's (then `same_tasks` says whose).
  bool is_shared() const { return shared_ != nullptr; }
  const void* same_tasks() const { return shared_ ? static_cast<const void*>(shared_.get()) : &own_; }
  std::uint32_t event_shift() const { return event_shift_; }
  std::uint32_t collective_shift() const { return collective_shift_; }
  // What a stored own_collective(k) reads as in this list (no shift applies to it); shifted_from
  // passes the base's on. Only a shared list holds them (mutate() writes them out).
  void set_own_collective(std::uint32_t index, std::uint32_t rank, std::uint32_t k = 0);
  std::uint32_t own_collective_index() const { return own_index_; }
  std::uint32_t own_collective_rank() const { return own_rank_; }
  // Every own collective set, the k-th at k (unset ones read as stored), to set again on a list
  // made anew from an edit of the tasks (set_own_collectives).
  std::vector<Task> own_collectives() const;
  void set_own_collectives(const std::vector<Task>& own);
  // A list of `tasks`, those stored as own_collective(k) reading as `own`'s k-th: a shared list (of
  // one reader) where any is, else a list of its own.
  static TaskList with_own_collectives(std::vector<Task> tasks, const std::vector<Task>& own);
  // How many own collectives a shared list holds in its vector of tasks (all but the first).
  std::size_t own_collectives_beside() const { return shared_ ? own_.size() : 0; }
  // The tasks as stored, shifts not applied (shifted() applies them), for a reader that walks a list
  // task by task on a hot path (the executor, step metrics): operator[] tests which storage holds
  // the list, and copies the task out, at every read.
  std::span<const Task> stored() const { return shared_ ? std::span<const Task>(*shared_) : own_; }
  Task shifted(const Task& stored_task) const { return shift(stored_task); }

  // For builders: the tasks as a vector of its own (a shared list is copied first, shifts applied).
  std::vector<Task>& mutate();
  void push_back(const Task& t) { mutate().push_back(t); }
  void reserve(std::size_t n) { mutate().reserve(n); }

  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Task;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Task;
    const_iterator(const TaskList* list, std::size_t i) : list_(list), i_(i) {}
    Task operator*() const { return (*list_)[i_]; }
    const_iterator& operator++() { ++i_; return *this; }
    const_iterator operator++(int) { const_iterator old = *this; ++i_; return old; }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    const TaskList* list_;
    std::size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  Task shift(Task t) const {
    if (t.kind == TaskKind::Record || t.kind == TaskKind::Wait) t.id += event_shift_;
    if (t.kind == TaskKind::Collective) {
      if (t.rank != kOwnCollective) {
        t.id += collective_shift_;
      } else if (t.id == kOwnCollective) {
        t.id = own_index_;
        t.rank = own_rank_;
      } else if (const std::size_t k = kOwnCollective - t.id; shared_ && k <= own_.size()) {
        t = own_[k - 1];
      }
    }
    return t;
  }
  std::vector<Task> own_;  // a shared list's: its own collectives but the first (own_collective(k))
  std::shared_ptr<const std::vector<Task>> shared_;
  std::uint32_t event_shift_ = 0;
  std::uint32_t collective_shift_ = 0;
  std::uint32_t own_index_ = kOwnCollective;
  std::uint32_t own_rank_ = kOwnCollective;
};

struct StreamProgram {
  std::string name;  // "compute", "communication", "p2p"
  TaskList tasks;
};

// What collectives running on a GPU compete with its kernels for (sim/stream_executor.h). Zero
// SMs: not modelled (kernels never slow down).
struct GpuResources {
  std::uint32_t sms = 0;             // streaming multiprocessors (V100: 80)
  Bandwidth memory_bandwidth;        // peak (V100 HBM2: 900 GB/s)
  Bandwidth memory_kernel_bandwidth; // what a memory-bound kernel reaches alone (V100: 600 GB/s)
  bool operator==(const GpuResources&) const = default;
};

struct GpuProgram {
  std::vector<StreamProgram> streams;
  // Kernel durations are multiplied by this (0.5 = a GPU twice as fast).
  double compute_scale = 1.0;
  // Kernels with per_sample work are multiplied by this too (a batch of longer sequences).
  double sample_scale = 1.0;
  GpuResources resources;
  // What a kernel's duration is multiplied by on this GPU: compute_scale, times sample_scale for a
  // per-sample kernel. The executor (StreamExecutor, both factors kept per GPU) and the step's
  // collective timeline (analysis/step/collective_timeline.cpp) scale kernels by it.
  double kernel_scale(bool per_sample) const {
    return per_sample ? compute_scale * sample_scale : compute_scale;
  }
};

}  // namespace hybridsim::sim

// sim::ExecutionRecord — what sim::StreamExecutor did with every task of every stream, and why:
// when the stream reached the task, when the task ended, which record released a wait, and how much
// longer a kernel ran than it would have alone (communication on its GPU took SMs or memory
// bandwidth). The executor fills it as it runs, so later analysis (the critical path, per-GPU
// metrics) reads the executor's own decisions instead of replaying its rules.
//   const ExecutionRecord& r = executor.record();
//   r.ended(s, i) - r.reached(s, i);  r.released_by(s, i);  r.slowed(s, i)
// Streams are numbered GPU by GPU, in the order of each GpuProgram's streams.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "sim/time.h"

namespace hybridsim::sim {

class ExecutionRecord {
  struct Entry;  // below

 public:
  // The bytes of a task's entry, asserted below: analysis/step/step_footprint.cpp models the
  // record's memory with it.
  static constexpr std::int64_t kEntryBytes = 16;

  struct TaskRef {
    std::uint32_t stream = 0;
    std::uint32_t task = 0;
    bool operator==(const TaskRef&) const = default;
  };

  class Storage;  // below: a record's entries, handed on to the next record of a run

  // One entry per task of each stream; `gpu_of_stream[s]` is the GPU stream s belongs to; every
  // stream reached its first task at `start`. `reuse`: an earlier record's entries (take_storage),
  // cleared and taken where they hold this record's tasks and are not over twice as many, else freed
  // before fresh ones are taken (so a record may lie in up to twice the bytes the step's memory model
  // counts for it; a run's steps have the same tasks, so in practice the block fits exactly).
  ExecutionRecord(const std::vector<std::uint32_t>& tasks_per_stream,
                  std::vector<std::uint32_t> gpu_of_stream, Time start = Time::zero());
  ExecutionRecord(const std::vector<std::uint32_t>& tasks_per_stream,
                  std::vector<std::uint32_t> gpu_of_stream, Time start, Storage reuse);

  std::uint32_t stream_count() const { return static_cast<std::uint32_t>(gpu_of_stream_.size()); }
  std::uint32_t gpu_of(std::uint32_t stream) const { return gpu_of_stream_[stream]; }
  std::uint32_t task_count(std::uint32_t stream) const { return offset_[stream + 1] - offset_[stream]; }

  // Whether the task ran (every task of a finished step did).
  bool has_run(std::uint32_t stream, std::uint32_t task) const { return at(stream, task).ended > 0; }
  // When its stream reached it: a kernel's launch delay starts then; a wait starts waiting then.
  // A task that ran was reached when the one before it on its stream ended (the first one at start).
  Time reached(std::uint32_t stream, std::uint32_t task) const {
    return task == 0 ? start_ : Time::ps(at(stream, task - 1).ended - 1);
  }
  // When it ended: a kernel's or collective rank's end; a record's or wait's passing.
  Time ended(std::uint32_t stream, std::uint32_t task) const { return Time::ps(at(stream, task).ended - 1); }
  // A wait: the record that released it, when that record came after the stream reached the wait
  // (a wait whose event was already recorded, or recorded at the very time the stream got there,
  // was released by nothing but its own stream). Nothing for other tasks.
  std::optional<TaskRef> released_by(std::uint32_t stream, std::uint32_t task) const;
  // A kernel: how much longer it ran than alone on its GPU (zero without contention).
  Time slowed(std::uint32_t stream, std::uint32_t task) const;

  // Stream s's entries, for a reader that walks every task of a stream (step metrics, the critical
  // path's check): one lookup of the stream's place, where each accessor above looks it up again
  // (the compiler cannot keep it across a reader's own stores). Valid while the record lives.
  class Stream {
   public:
    bool has_run(std::uint32_t task) const { return entries_[task].ended > 0; }
    Time reached(std::uint32_t task) const {
      return task == 0 ? start_ : Time::ps(entries_[task - 1].ended - 1);
    }
    Time ended(std::uint32_t task) const { return Time::ps(entries_[task].ended - 1); }
    Time slowed(std::uint32_t task) const { return Time::ps(entries_[task].aux); }

   private:
    friend class ExecutionRecord;
    Stream(const Entry* entries, Time start) : entries_(entries), start_(start) {}
    const Entry* entries_;
    Time start_;
  };
  Stream stream(std::uint32_t s) const { return Stream(entries_.get() + offset_[s], start_); }

  // For the executor, which ends a stream's tasks in order and reaches each task when the one
  // before it ends: a task's reach is not written, it is the previous task's end.
  void set_ended(std::uint32_t stream, std::uint32_t task, Time t) { at(stream, task).ended = t.ps() + 1; }
  void set_released_by(std::uint32_t stream, std::uint32_t task, TaskRef by);
  // A kernel's end and how much longer it ran than alone, with one lookup of its entry.
  void set_kernel_ended(std::uint32_t stream, std::uint32_t task, Time t, Time extra) {
    Entry& e = at(stream, task);
    e.ended = t.ps() + 1;
    e.aux = extra.ps();
  }

  // Its entries, for the next record of the same run; the record is left with no streams.
  Storage take_storage();

 private:
  // 16 bytes a task, zero until written: `ended` holds the time in ps + 1 (0: not yet), so that the
  // entries need no fill. `aux`: a wait's releasing record as (stream + 1) << 32 | task (0: none), or
  // a kernel's slowed time in ps; the task's kind (known from its program) says which. No `reached`:
  // it is the previous task's `ended` (24 bytes a task with it: at 1,024 GPUs the record, 56 MB a
  // step, outgrew the last-level cache by more, and the executor wrote a third more lines that
  // step_metrics read back). Fresh entries come from calloc: a block of a record's size (tens of MB
  // at 1,024 GPUs) arrives zeroed from the system, where a vector's fill wrote every byte again; a
  // block handed on from an earlier step (Storage) is cleared instead.
  struct Entry {
    std::int64_t ended;
    std::int64_t aux;
  };
  static_assert(sizeof(Entry) == kEntryBytes);
  struct Free {
    void operator()(Entry* p) const { std::free(p); }
  };
  Entry& at(std::uint32_t s, std::uint32_t t) { return entries_[offset_[s] + t]; }
  const Entry& at(std::uint32_t s, std::uint32_t t) const { return entries_[offset_[s] + t]; }

  std::vector<std::uint32_t> offset_;  // per stream, then the total
  std::vector<std::uint32_t> gpu_of_stream_;
  std::unique_ptr<Entry[], Free> entries_;
  std::size_t capacity_ = 0;  // entries allocated (the tasks and one)
  Time start_;

 public:
  // A record's entries, kept between the records of one run by whoever runs them (a variability
  // run's steps, analysis/step/step_series.cpp). calloc takes a block of a record's size (37 MB at
  // 1,024 GPUs) fresh from the system, which zeroes it page by page as it is first touched: the
  // largest first touch of the 1,024-GPU jittered step's second step, and where the virtual
  // machine's host has taken the free pages back, tens of times dearer than the zeroing
  // (tests/bench/MEASUREMENTS.md, faults). Cleared and reused instead, the next record writes
  // memory that is already the process's.
  class Storage {
   public:
    Storage() = default;
    // Entries (0: none, a moved-from one included: its count is copied, its block is not).
    std::size_t capacity() const { return entries_ != nullptr ? capacity_ : 0; }

   private:
    friend class ExecutionRecord;
    std::unique_ptr<Entry[], Free> entries_;
    std::size_t capacity_ = 0;
  };
};

}  // namespace hybridsim::sim

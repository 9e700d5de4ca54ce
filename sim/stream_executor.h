// sim::StreamExecutor — runs every GPU's streams (sim/gpu_program.h) on the event queue: kernels
// take their (scaled) duration, after their launch delay if any (idle time: observers see only the
// kernel), events are recorded and waited on like CUDA events, and collective tasks start their
// rank in a sim::Collective and block the stream until that rank is done. Everything it does is
// kept in an ExecutionRecord (sim/execution_record.h).
//
// Communication slows the kernels beside it (contention, on by default): while a collective runs on
// a GPU it holds `CollectiveLoad::sms` of the GPU's SMs (NCCL: one CTA, i.e. one SM, per channel,
// from the moment its rank joins, waiting for the others included), and once every rank has joined
// (data flows) it moves `CollectiveLoad::memory_traffic` through the memory of each GPU whose rank
// is still running. A compute-bound kernel then runs
// at (SMs − held) / SMs of its rate (at least one SM is left to it); a memory-bound kernel, which
// alone reaches K = memory_kernel_bandwidth, shares the peak P = memory_bandwidth with the
// collective's traffic T in proportion to demand: min(1, P / (K + T)) of its rate. Rates change
// whenever a collective starts or ends on the GPU; a running kernel then progresses piecewise:
// work done so far = floor(elapsed × rate) ps of its alone duration, the rest at the new rate,
// its end = ceil(remaining / rate), in exact integer arithmetic. Without contention (no loads,
// option off, or zero SMs in the GPU's resources) every kernel takes exactly its scaled duration.
//   StreamExecutor exec(queue, programs, collectives, /*events=*/n, {}, loads);
//   exec.start();  queue.run();  exec.finish_time();  exec.record();
#pragma once
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/collective.h"
#include "sim/execution_record.h"
#include "sim/gpu_program.h"
#include "sim/work_progress.h"

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
  // Whether running collectives slow the kernels of their GPUs (see above); off for what-ifs.
  bool contention = true;
  bool operator==(const StreamExecutorOptions&) const = default;
};

// What one running collective takes from each GPU it runs on.
struct CollectiveLoad {
  std::uint32_t sms = 0;      // SMs its kernels hold (NCCL: one per channel)
  Bandwidth memory_traffic;   // bytes per second it reads and writes in the GPU's memory
  bool operator==(const CollectiveLoad&) const = default;
};

// Folding the step (sim/README.md, "Folding the step"): GPUs that run alike are simulated once.
// A member GPU's streams are not run; when its representative's stream reaches a collective task,
// the member's task at the same place starts too (its rank in a collective that representatives
// share, e.g. the data-parallel all-reduce), unless that collective is a shadow (none of its
// ranks is on a representative: it is taken to repeat the collective its representatives run at
// the same place, and is never started; its collectives[] entry may be null). The fold holds only
// if every member rank finishes when its representative's rank does; fold_held() says whether it
// did, and fold_signature() tells members apart by what they saw, to refine the classes.
struct StepFold {
  std::vector<std::uint32_t> representative;  // per GPU: the GPU it repeats (itself for representatives)
  std::vector<std::uint8_t> shadow;           // per collective: 1 when never started
  // Per collective: 1 when a member GPU takes part (empty: any may). Where none does, no member's
  // task at the same place can be anything but a shadow, so the members need not be looked at.
  std::vector<std::uint8_t> with_members;
};

class StreamExecutor final : public EventHandler {
 public:
  // `collectives[i]` serves tasks with Task::collective(i, rank); `loads[i]` (if given) is what it
  // takes from its GPUs. The programs and the collectives must outlive the executor.
  // `progress` (null: nobody) is told of the set-up GPU by GPU (sim/work_progress.h): this
  // constructor's check of the programs, set_fold and start() each walk every GPU's streams, seconds
  // in all at 65,536 GPUs before the first event.
  StreamExecutor(EventQueue& queue, const std::vector<GpuProgram>& programs,
                 std::vector<Collective*> collectives, std::uint32_t event_count,
                 StreamExecutorOptions options, std::vector<CollectiveLoad> loads = {},
                 WorkProgress* progress = nullptr);
  StreamExecutor(const StreamExecutor&) = delete;
  StreamExecutor& operator=(const StreamExecutor&) = delete;

  // The bytes of its private entries (a stream's state and info, a folded stream's check, a GPU's
  // state, an event's), each asserted where it is defined: analysis/step/step_footprint.cpp models
  // the executor's memory with these, so a member added fails the assert here rather than leaving
  // that model short.
  static constexpr std::int64_t kStreamStateBytes = 64;
  static constexpr std::int64_t kStreamInfoBytes = 32;
  static constexpr std::int64_t kMemberCheckBytes = 56;
  static constexpr std::int64_t kGpuStateBytes = 64;
  static constexpr std::int64_t kEventStateBytes = 12;

  // Before start(): fold the step (see StepFold). The programs of a member and its representative
  // must have the same shape (same tasks in the same places); analysis/ checks that.
  void set_fold(StepFold fold);
  bool folded() const { return !fold_.representative.empty(); }
  bool fold_held() const;
  // Per GPU: 0 for representatives; for members a hash of their collective finish times relative
  // to their representative's (members alike in what they saw have equal signatures).
  std::vector<std::uint64_t> fold_signature() const;

  void set_observer(StreamObserver* observer) { observer_ = observer; }
  // Starts every stream at the current time.
  void start();

  bool is_done() const { return streams_done_ == streams_.size(); }
  // When the last stream of a GPU finished (its step time).
  Time gpu_finish_time(std::uint32_t gpu) const {
    return gpu_finish_[folded() ? fold_.representative[gpu] : gpu];
  }
  Time finish_time() const;
  // Describes streams that are stuck (waiting forever) after the queue ran dry; empty if none.
  std::string describe_stuck() const;
  // From start() on; a folded step's member streams have no entries (they run no task).
  const ExecutionRecord& record() const { return record_; }
  // Before start(): an earlier record's entries for this one's (ExecutionRecord::Storage); after the
  // record is read: its entries for the next executor of the run (the record is then empty).
  void reuse_record_storage(ExecutionRecord::Storage spare) { spare_record_ = std::move(spare); }
  // The record's entries, or the block handed in if no record took it (start() did not run).
  ExecutionRecord::Storage take_record_storage() {
    return spare_record_.capacity() > 0 ? std::move(spare_record_) : record_.take_storage();
  }

  void on_event(std::uint64_t tag) override;

 private:
  // A kernel's rate as a fraction num/den of its rate alone (num <= den).
  struct Rate {
    std::int64_t num = 1;
    std::int64_t den = 1;
  };
  // A stream's state, split by use: what a kernel's start and end read and write is one cache line
  // (its tasks as stored, where it is, the running kernel), the rest beside it. Before, a kernel
  // read the stream's 88 bytes (two lines), its program's TaskList and the TaskList's shared vector
  // (two more: which storage, then where) and the GpuProgram's scales (another), about 3.9 D1
  // misses a kernel by cachegrind. A running kernel made progress from task_start at `rate` with
  // `alone` ps of work until rerate() first changed its rate (`rerated`): only then are the work
  // left and its time (StreamInfo::remaining, progress_at) kept, so a kernel's start writes this
  // line alone.
  struct alignas(64) StreamState {
    const Task* tasks = nullptr;  // TaskList::stored(): a kernel as it runs; others by task_at()
    std::uint32_t size = 0;
    std::uint32_t next = 0;
    std::uint32_t gpu = 0;
    bool delay_done = false;  // the current kernel's launch delay has passed
    bool running = false;     // a kernel is running (after its delay)
    bool done = false;
    bool rerated = false;     // the running kernel's rate changed since it started
    Time task_start;
    std::int64_t alone = 0;
    Rate rate;
    EventId finish_event;
  };
  static_assert(sizeof(StreamState) == kStreamStateBytes);
  struct StreamInfo {
    const StreamProgram* program = nullptr;
    std::uint32_t local = 0;  // index within its GPU
    std::uint32_t next_waiter = 0;  // blocked on an event: the next stream blocked on it, + 1 (0: none)
    // A rerated kernel: work left in ps at its alone rate, as of `progress_at`, at `rate`.
    std::int64_t remaining = 0;
    Time progress_at;
  };
  static_assert(sizeof(StreamInfo) == kStreamInfoBytes);
  // A GPU's state and what its kernels' durations and rates read of its program (one line): its
  // scales, and its resources (sms 0 where kernels never slow: none given, or contention off).
  struct alignas(64) GpuState {
    std::uint32_t first_stream = 0;
    std::uint32_t streams = 0;
    std::uint32_t held_sms = 0;   // by running collectives
    std::uint32_t sms = 0;
    std::int64_t traffic = 0;     // B/s of running collectives
    double compute_scale = 1.0;
    double sample_scale = 1.0;    // compute_scale × the program's sample_scale (per-sample kernels)
    std::int64_t memory_bandwidth = 0;         // B/s
    std::int64_t memory_kernel_bandwidth = 0;  // B/s
  };
  static_assert(sizeof(GpuState) == kGpuStateBytes);
  // An event's state, all zero until its record or a wait on it: the streams blocked on it are a list
  // through their StreamInfo::next_waiter (a stream waits on one event at a time), first to last in
  // the order they came, each + 1. All zero, so that the states come from calloc untouched: a folded
  // step's members never reach theirs (a vector of a waiters' vector each, 32 bytes filled for every
  // event of every GPU, held 482 MB of GPT-3 pp 16 at 16,384 GPUs, of which its 128 simulated GPUs use
  // 4 MB: tests/bench/MEASUREMENTS.md), and a wait allocates nothing.
  struct EventState {
    std::uint32_t recorded;
    std::uint32_t first_waiter;
    std::uint32_t last_waiter;
  };
  static_assert(sizeof(EventState) == kEventStateBytes);
  static_assert(std::is_trivially_default_constructible_v<EventState>);
  struct FreeEvents {
    void operator()(EventState* p) const { std::free(p); }
  };
  // Stream s's task i as its program lists it (shifts applied).
  Task task_at(std::uint32_t s, std::uint32_t i) const {
    return info_[s].program->tasks.shifted(streams_[s].tasks[i]);
  }
  void advance(std::uint32_t stream);
  inline void kernel_done(std::uint32_t stream);
  void collective_done(std::uint64_t tag);
  inline void start_kernel(std::uint32_t stream, const Task& task);
  static Rate rate_of(const GpuState& gpu, KernelBound bound);
  // A collective's SMs (or its memory traffic) came to (+1) or left (−1) `gpu`.
  void change_load(std::uint32_t gpu, std::uint32_t sms, std::int64_t traffic, int sign);
  // Running kernels on `gpu` take the GPU's current rates.
  void rerate(std::uint32_t gpu);
  void rank_started(std::uint32_t collective, std::uint32_t rank);
  void rank_ended(std::uint32_t collective, std::uint32_t rank);
  // Folding: the members of representative stream s start their task `task` too.
  void start_members(std::uint32_t s, std::uint32_t task);
  void member_done(std::uint32_t stream, Time at);
  void representative_done(std::uint32_t stream, Time at);
  struct MemberCheck;
  void arrive(MemberCheck& m, bool from_representative, Time at);
  void join_member(std::uint32_t stream);

  EventQueue& queue_;
  std::vector<StreamState> streams_;
  std::vector<StreamInfo> info_;  // per stream
  std::vector<GpuState> gpus_;
  const std::vector<GpuProgram>& programs_;
  std::vector<Collective*> collectives_;
  std::vector<CollectiveLoad> loads_;
  std::vector<std::vector<std::uint32_t>> collective_stream_;  // [collective][rank] → stream
  std::vector<std::uint32_t> ranks_joined_;                    // [collective]
  std::vector<std::vector<bool>> rank_running_;                // [collective][rank], with loads only
  std::unique_ptr<EventState[], FreeEvents> events_;           // calloc'd: see EventState
  std::vector<Time> gpu_finish_;
  std::size_t streams_done_ = 0;
  StreamExecutorOptions options_;
  StreamObserver* observer_ = nullptr;
  WorkProgress* progress_ = nullptr;  // told of the set-up (constructor, set_fold, start)
  ExecutionRecord record_;
  ExecutionRecord::Storage spare_record_;  // taken by start()'s record
  // Folding: members per representative GPU; per member stream, its collective finishes against
  // its representative's; whether every comparison so far agreed.
  // The finishes of the side that is ahead, not yet compared, oldest first: a vector and the index
  // of its first, not a std::deque, which allocates 576 bytes as it is made (set_fold made one per
  // stream: 150 MB at 65,536 GPUs, seconds under load before the first event, and as long to free).
  // Most member streams never fall behind, and those that do keep a few.
  struct Pending {
    std::vector<Time> times;
    std::size_t first = 0;
    bool empty() const { return first == times.size(); }
    Time front() const { return times[first]; }
    void pop_front() {
      if (++first == times.size()) {
        times.clear();
        first = 0;
      } else if (first > 64 && first * 2 > times.size()) {  // one side stays ahead: keep it short
        times.erase(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(first));
        first = 0;
      }
    }
    void push_back(Time t) { times.push_back(t); }
  };
  struct MemberCheck {
    Pending ahead;  // finishes of the side that is ahead, not yet compared
    bool representative_ahead = true;
    std::uint32_t compared = 0;
    std::uint64_t signature = 0;  // of its first mismatch (0: none)
    std::uint32_t joining = 0;    // the task it joins next
  };
  static_assert(sizeof(MemberCheck) == kMemberCheckBytes);
  StepFold fold_;
  std::vector<std::vector<std::uint32_t>> members_;
  std::vector<MemberCheck> check_;  // per stream
  bool fold_broken_ = false;
};

}  // namespace hybridsim::sim

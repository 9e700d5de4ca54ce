#include "sim/stream_executor.h"
#include "sim/hash.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <span>
#include <string>
#include <unordered_map>

#include "sim/error.h"
#include "sim/work_progress.h"

namespace hybridsim::sim {

namespace {
// Tags: a kernel finishing on stream s is tag s; a collective rank finishing has the top bit set,
// the collective index in bits 24..62 and the rank in bits 0..23; a kernel's launch delay ending on
// stream s is bit 62 | s (without the top bit).
constexpr std::uint64_t kCollectiveBit = 1ULL << 63;
constexpr std::uint64_t kDelayBit = 1ULL << 62;
// A folded step's member joining a collective on stream s: bit 61 | s (see start_members).
constexpr std::uint64_t kMemberJoinBit = 1ULL << 61;
constexpr std::uint64_t kRankBits = 24;
constexpr std::uint64_t kRankMask = (1ULL << kRankBits) - 1;

// Entries for the tasks that run: a folded step's members (`representative[g] != g`) never run
// theirs, so their streams get none (what is recorded stays proportional to what is simulated).
ExecutionRecord make_record(const std::vector<GpuProgram>& programs,
                            const std::vector<std::uint32_t>& representative, Time start,
                            WorkProgress* progress, ExecutionRecord::Storage spare) {
  std::vector<std::uint32_t> tasks, gpu;
  const auto n = static_cast<std::uint32_t>(programs.size());
  ticked_loop(progress, "recording its GPUs' tasks", n, "GPUs", [&](std::uint32_t g) {
    const bool member = !representative.empty() && representative[g] != g;
    for (const StreamProgram& sp : programs[g].streams) {
      tasks.push_back(member ? 0 : static_cast<std::uint32_t>(sp.tasks.size()));
      gpu.push_back(g);
    }
  });
  return ExecutionRecord(tasks, std::move(gpu), start, std::move(spare));
}

// std::llround(x), inline for the durations it scales (0 <= x < 2^62): the library call was about
// 15 instructions a kernel. The same value: the truncation, plus one from a fraction of one half on
// (x minus its integer part is exact in double).
std::int64_t round_duration(double x) {
  if (!(x >= 0.0 && x < 0x1p62)) return std::llround(x);
  const auto whole = static_cast<std::int64_t>(x);
  return whole + (x - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}

// ceil(work × den / num) and floor(elapsed × num / den), exact. At the full rate (num == den, most
// kernels) without the 128-bit division, a library call of about 30 instructions per kernel; at
// another rate, in 64 bits where the product fits: work < INT64_MAX / den ps (a GPU's 80 SMs: up to
// 32 hours of work; a memory demand in B/s, about 9 us at 1 TB/s and 2.7 us at H100's 3.35 TB/s).
std::int64_t time_for(std::int64_t work, std::int64_t num, std::int64_t den) {
  if (num == den) return work;
  std::int64_t product = 0;
  if (work >= 0 && !__builtin_mul_overflow(work, den, &product) && product <= INT64_MAX - num)
    return (product + num - 1) / num;
  return static_cast<std::int64_t>((static_cast<__int128>(work) * den + num - 1) / num);
}
std::int64_t work_in(std::int64_t elapsed, std::int64_t num, std::int64_t den) {
  if (num == den) return elapsed;
  return static_cast<std::int64_t>(static_cast<__int128>(elapsed) * num / den);
}

// The constructor's check of a stream: every event a record or wait names is one of the step's,
// every collective rank one of its collective's. A shared list (TaskList::same_tasks) is read in
// full by its first reader only, which notes its highest event as stored (unshifted) and where its
// collectives are; a later reader whose shift keeps that event in range checks its collectives alone
// (reading every worker's every task was 9% of a 16,384-GPU GNMT DP step's instructions, callgrind).
// Anything out of range is read again in full, so the error is the one the first bad task gives.
class ProgramCheck {
 public:
  ProgramCheck(std::uint32_t event_count, const std::vector<Collective*>& collectives)
      : event_count_(event_count), collectives_(collectives) {}

  void stream(std::uint32_t g, const StreamProgram& sp) {
    const TaskList& tasks = sp.tasks;
    if (!tasks.is_shared()) return every_task(g, sp);
    const auto [it, fresh] = shared_.try_emplace(tasks.same_tasks());
    Shape& shape = it->second;
    if (fresh) {
      every_task(g, sp);
      for (std::uint32_t i = 0; i < tasks.size(); ++i) {
        const Task t = tasks[i];
        if (t.kind == TaskKind::Record || t.kind == TaskKind::Wait)
          shape.top = std::max<std::uint64_t>(shape.top, t.id - tasks.event_shift());  // mod 2^32: as stored
        else if (t.kind == TaskKind::Collective)
          shape.collectives.push_back(i);
      }
      return;
    }
    if (shape.top + tasks.event_shift() >= event_count_) return every_task(g, sp);
    for (const std::uint32_t i : shape.collectives) collective(g, sp, tasks[i]);
  }

 private:
  struct Shape {
    std::uint64_t top = 0;  // the highest event as stored; 0 if none (its check then holds as well)
    std::vector<std::uint32_t> collectives;
  };
  void every_task(std::uint32_t g, const StreamProgram& sp) const {
    for (const Task& t : sp.tasks) {
      if ((t.kind == TaskKind::Record || t.kind == TaskKind::Wait) && t.id >= event_count_)
        throw InternalError("GPU " + std::to_string(g) + " stream " + sp.name + " uses event " +
                            std::to_string(t.id) + " of " + std::to_string(event_count_));
      if (t.kind == TaskKind::Collective) collective(g, sp, t);
    }
  }
  void collective(std::uint32_t g, const StreamProgram& sp, const Task& t) const {
    if (t.id >= collectives_.size() ||
        (collectives_[t.id] != nullptr && t.rank >= collectives_[t.id]->ranks()))
      throw InternalError("GPU " + std::to_string(g) + " stream " + sp.name +
                          " names a collective rank that does not exist");
  }
  std::uint32_t event_count_;
  const std::vector<Collective*>& collectives_;
  std::unordered_map<const void*, Shape> shared_;
};
}  // namespace

StreamExecutor::StreamExecutor(EventQueue& queue, const std::vector<GpuProgram>& programs,
                               std::vector<Collective*> collectives, std::uint32_t event_count,
                               StreamExecutorOptions options, std::vector<CollectiveLoad> loads,
                               WorkProgress* progress)
    : queue_(queue),
      gpus_(programs.size()),
      programs_(programs),
      collectives_(std::move(collectives)),
      loads_(std::move(loads)),
      gpu_finish_(programs.size()),
      options_(options),
      progress_(progress),
      record_({}, {}) {
  if (!loads_.empty() && loads_.size() != collectives_.size())
    throw InternalError("stream executor: one load per collective expected");
  // Zeroed by the system as each page is first touched (a vector's fill of 13 M events at 65,536 GPUs
  // of dp 32,768 x mp 2 took 0.75 s at load 1.7, most of it page faults): a folded step's members'
  // events are never touched.
  events_.reset(
      static_cast<EventState*>(std::calloc(std::max<std::size_t>(event_count, 1), sizeof(EventState))));
  if (events_ == nullptr) throw std::bad_alloc();
  const auto n = static_cast<std::uint32_t>(programs.size());
  ProgramCheck check(event_count, collectives_);
  ticked_loop(progress_, "checking its GPUs' programs", n, "GPUs", [&](std::uint32_t g) {
    const GpuProgram& program = programs[g];
    GpuState& gpu = gpus_[g];
    gpu.first_stream = static_cast<std::uint32_t>(streams_.size());
    gpu.streams = static_cast<std::uint32_t>(program.streams.size());
    gpu.sms = options_.contention ? program.resources.sms : 0;
    gpu.compute_scale = program.kernel_scale(false);
    gpu.sample_scale = program.kernel_scale(true);
    gpu.memory_bandwidth = program.resources.memory_bandwidth.bytes_per_second();
    gpu.memory_kernel_bandwidth = program.resources.memory_kernel_bandwidth.bytes_per_second();
    for (std::uint32_t s = 0; s < program.streams.size(); ++s) {
      const StreamProgram& sp = program.streams[s];
      check.stream(g, sp);
      const std::span<const Task> stored = sp.tasks.stored();
      StreamState st{};
      st.tasks = stored.data();
      st.size = static_cast<std::uint32_t>(stored.size());
      st.gpu = g;
      streams_.push_back(st);
      info_.push_back({.program = &sp, .local = s, .remaining = 0, .progress_at = Time::zero()});
    }
  });
  // Per collective, in batches, told: 6.3 M of them (dp 32,768 x mp 2's transfers, most of them a
  // folded step's shadows) took 0.7 s in one call at load 1.7.
  const std::size_t count = collectives_.size();
  collective_stream_.reserve(count);
  ranks_joined_.reserve(count);
  rank_running_.reserve(count);
  ticked_batches(progress_, "setting up its collectives' ranks", count, "collectives", kStateBatch,
                 [&](std::size_t begin, std::size_t end) {
                   collective_stream_.resize(end);
                   ranks_joined_.resize(end, 0);
                   rank_running_.resize(end);
                   for (std::size_t c = begin; c < end; ++c) {
                     if (collectives_[c] == nullptr) continue;  // a folded step's shadow (set_fold)
                     if (collectives_[c]->ranks() > kRankMask)
                       throw InternalError("collective has too many ranks");
                     collective_stream_[c].assign(collectives_[c]->ranks(), 0);
                     collectives_[c]->notify_rank_done(
                         *this, kCollectiveBit | (static_cast<std::uint64_t>(c) << kRankBits));
                   }
                 });
}

void StreamExecutor::start() {
  // After set_fold: members record nothing.
  record_ = make_record(programs_, fold_.representative, queue_.now(), progress_, std::move(spare_record_));
  const auto n = static_cast<std::uint32_t>(streams_.size());
  ticked_loop(progress_, "starting its GPUs' streams", n, "streams", [&](std::uint32_t s) {
    if (!streams_[s].done) advance(s);  // a folded step's members are marked done already
  });
}

void StreamExecutor::set_fold(StepFold fold) {
  if (fold.representative.size() != programs_.size() || fold.shadow.size() != collectives_.size() ||
      (!fold.with_members.empty() && fold.with_members.size() != collectives_.size()))
    throw InternalError("a step fold needs a representative per GPU and a shadow flag per collective");
  fold_ = std::move(fold);
  members_.assign(programs_.size(), {});
  check_.assign(streams_.size(), {});
  const auto n = static_cast<std::uint32_t>(programs_.size());
  ticked_loop(progress_, "folding its GPUs' streams", n, "GPUs", [&](std::uint32_t g) {
    const std::uint32_t rep = fold_.representative[g];
    if (rep == g) return;
    if (fold_.representative[rep] != rep || gpus_[rep].streams != gpus_[g].streams)
      throw InternalError("a step fold's member must repeat a representative of the same shape");
    members_[rep].push_back(g);
    for (std::uint32_t s = gpus_[g].first_stream; s < gpus_[g].first_stream + gpus_[g].streams; ++s) {
      streams_[s].done = true;
      ++streams_done_;
    }
  });
  for (std::size_t c = 0; c < collectives_.size(); ++c)
    if (collectives_[c] == nullptr && fold_.shadow[c] == 0)
      throw InternalError("only a folded step's shadow collectives may be missing");
}

void StreamExecutor::start_members(std::uint32_t s, std::uint32_t task) {
  const StreamState& rep = streams_[s];
  if (!fold_.with_members.empty() && fold_.with_members[task_at(s, task).id] == 0) return;
  for (const std::uint32_t g : members_[rep.gpu]) {
    const std::uint32_t ms = gpus_[g].first_stream + info_[s].local;
    const Task t = task_at(ms, task);
    if (t.kind != TaskKind::Collective) throw InternalError("a step fold's member has another shape");
    if (fold_.shadow[t.id] != 0) continue;
    // Through the queue, at this same time: the member's finish of its last collective, due now
    // too, was scheduled earlier and so comes first, as it would on the member's own stream.
    check_[ms].joining = task;
    queue_.post_at(queue_.now(), *this, kMemberJoinBit | ms);
  }
}

void StreamExecutor::join_member(std::uint32_t ms) {
  const Task t = task_at(ms, check_[ms].joining);
  collective_stream_[t.id][t.rank] = ms;
  rank_started(t.id, t.rank);
  collectives_[t.id]->start(t.rank);
}

namespace {
constexpr auto mix = hash_combine;
}  // namespace

// A member stream's k-th collective finish is compared with its representative's k-th (either
// may come first, even at the same time). Only the first mismatch is kept: after it, the
// member's later joins (its representative's) are not its own, so what it sees is not telling.
void StreamExecutor::arrive(MemberCheck& m, bool from_representative, Time at) {
  if (m.ahead.empty() || m.representative_ahead == from_representative) {
    m.representative_ahead = from_representative;
    m.ahead.push_back(at);
    return;
  }
  const Time other = m.ahead.front();
  m.ahead.pop_front();
  const Time late = from_representative ? other - at : at - other;  // member − representative
  if (late != Time::zero()) {
    fold_broken_ = true;
    if (m.signature == 0) m.signature = mix(mix(1, m.compared), static_cast<std::uint64_t>(late.ps()));
  }
  ++m.compared;
}

void StreamExecutor::representative_done(std::uint32_t s, Time at) {
  const StreamState& rep = streams_[s];
  if (!fold_.with_members.empty() && fold_.with_members[task_at(s, rep.next).id] == 0) return;
  for (const std::uint32_t g : members_[rep.gpu]) {
    const std::uint32_t ms = gpus_[g].first_stream + info_[s].local;
    if (fold_.shadow[task_at(ms, rep.next).id] != 0) continue;
    arrive(check_[ms], true, at);
  }
}

void StreamExecutor::member_done(std::uint32_t ms, Time at) { arrive(check_[ms], false, at); }

bool StreamExecutor::fold_held() const {
  if (fold_broken_) return false;
  for (const MemberCheck& m : check_)
    if (!m.ahead.empty()) return false;  // one side never finished a collective the other did
  return true;
}

std::vector<std::uint64_t> StreamExecutor::fold_signature() const {
  std::vector<std::uint64_t> out(programs_.size(), 0);
  if (!folded()) return out;
  for (std::uint32_t s = 0; s < streams_.size(); ++s) {
    const std::uint32_t g = streams_[s].gpu;
    if (fold_.representative[g] == g) continue;
    // Zero for a member that saw what its representative did.
    const MemberCheck& m = check_[s];
    if (m.signature != 0) out[g] = mix(out[g], m.signature);
    else if (!m.ahead.empty()) out[g] = mix(out[g], mix(mix(2, m.compared), m.representative_ahead ? 1 : 0));
  }
  return out;
}

StreamExecutor::Rate StreamExecutor::rate_of(const GpuState& gpu, KernelBound bound) {
  if (gpu.sms == 0) return {};  // contention off, or no resources given
  if (bound == KernelBound::Compute) {
    if (gpu.held_sms == 0) return {};
    const std::uint32_t held = std::min(gpu.held_sms, gpu.sms - 1);  // a kernel keeps one SM at least
    return {static_cast<std::int64_t>(gpu.sms - held), static_cast<std::int64_t>(gpu.sms)};
  }
  const std::int64_t demand = gpu.memory_kernel_bandwidth + gpu.traffic;
  const std::int64_t peak = gpu.memory_bandwidth;
  if (gpu.traffic == 0 || demand <= peak) return {};
  return {peak, demand};
}

// Inlined into its two callers: advance (a kernel after anything else) and kernel_done (a kernel
// after a kernel, most of them).
[[gnu::always_inline]] inline void StreamExecutor::start_kernel(std::uint32_t s, const Task& t) {
  StreamState& st = streams_[s];
  const GpuState& gpu = gpus_[st.gpu];
  const double scale = t.per_sample ? gpu.sample_scale : gpu.compute_scale;
  Time d = t.duration;
  if (scale != 1.0) d = Time::ps(round_duration(static_cast<double>(d.ps()) * scale));
  st.task_start = queue_.now();
  st.running = true;
  st.rerated = false;  // its progress is counted from task_start, on `alone`
  st.alone = d.ps();
  st.rate = rate_of(gpu, t.bound);
  st.finish_event = queue_.schedule_after(Time::ps(time_for(st.alone, st.rate.num, st.rate.den)), *this, s);
}

void StreamExecutor::change_load(std::uint32_t g, std::uint32_t sms, std::int64_t traffic, int sign) {
  GpuState& gpu = gpus_[g];
  gpu.held_sms = static_cast<std::uint32_t>(static_cast<std::int64_t>(gpu.held_sms) +
                                            sign * static_cast<std::int64_t>(sms));
  gpu.traffic += sign * traffic;
  rerate(g);
}

void StreamExecutor::rerate(std::uint32_t g) {
  const GpuState& gpu = gpus_[g];
  if (gpu.sms == 0) return;
  const Time now = queue_.now();
  for (std::uint32_t s = gpu.first_stream; s < gpu.first_stream + gpu.streams; ++s) {
    StreamState& st = streams_[s];
    if (!st.running) continue;
    const Rate rate = rate_of(gpu, st.tasks[st.next].bound);
    if (rate.num == st.rate.num && rate.den == st.rate.den) continue;
    StreamInfo& info = info_[s];
    if (!st.rerated) {  // its first change: progress so far counted from its start
      st.rerated = true;
      info.remaining = st.alone;
      info.progress_at = st.task_start;
    }
    // Bring the kernel's progress up to now at the old rate, then finish the rest at the new one.
    const std::int64_t done = work_in((now - info.progress_at).ps(), st.rate.num, st.rate.den);
    info.remaining = std::max<std::int64_t>(0, info.remaining - done);
    info.progress_at = now;
    st.rate = rate;
    // A running kernel's finish is pending: an id that no longer names it would let it end twice.
    if (!queue_.cancel(st.finish_event))
      throw InternalError("stream executor: a kernel's finish event was lost");
    st.finish_event = queue_.schedule_after(Time::ps(time_for(info.remaining, rate.num, rate.den)), *this, s);
  }
}

// SMs from a rank's start to its end; memory traffic on every running rank's GPU from the moment
// the last rank joins.
void StreamExecutor::rank_started(std::uint32_t c, std::uint32_t rank) {
  if (loads_.empty() || !options_.contention) return;
  const CollectiveLoad& load = loads_[c];
  if (load.sms == 0 && load.memory_traffic.bytes_per_second() == 0) return;
  auto& running = rank_running_[c];
  if (running.empty()) running.assign(collectives_[c]->ranks(), false);
  running[rank] = true;
  change_load(streams_[collective_stream_[c][rank]].gpu, load.sms, 0, +1);
  if (++ranks_joined_[c] < collectives_[c]->ranks()) return;
  for (std::uint32_t r = 0; r < running.size(); ++r)
    if (running[r])
      change_load(streams_[collective_stream_[c][r]].gpu, 0, load.memory_traffic.bytes_per_second(), +1);
}

void StreamExecutor::rank_ended(std::uint32_t c, std::uint32_t rank) {
  if (loads_.empty() || !options_.contention || rank_running_[c].empty() || !rank_running_[c][rank]) return;
  rank_running_[c][rank] = false;
  const CollectiveLoad& load = loads_[c];
  const bool flowing = ranks_joined_[c] == collectives_[c]->ranks();
  change_load(streams_[collective_stream_[c][rank]].gpu, load.sms,
              flowing ? load.memory_traffic.bytes_per_second() : 0, -1);
}

void StreamExecutor::advance(std::uint32_t s) {
  StreamState& st = streams_[s];
  while (st.next < st.size) {
    // The record takes the task's reach from the end of the one before it (now, or start()).
    // A kernel as stored (no shift applies to it); the others as listed (task_at).
    const Task& stored = st.tasks[st.next];
    if (stored.kind == TaskKind::Kernel) {
      if (stored.launch_delay > Time::zero() && !st.delay_done) {
        st.delay_done = true;
        queue_.post_after(stored.launch_delay, *this, kDelayBit | s);
        return;
      }
      st.delay_done = false;
      start_kernel(s, stored);
      return;
    }
    const Task t = task_at(s, st.next);
    switch (t.kind) {
      case TaskKind::Kernel:
        break;  // started above
      case TaskKind::Record: {
        EventState& e = events_[t.id];
        e.recorded = 1;
        record_.set_ended(s, st.next, queue_.now());
        const ExecutionRecord::TaskRef by{s, st.next};
        ++st.next;
        // The list is taken whole first: a woken stream may block on another event, which rewrites
        // its next_waiter.
        std::uint32_t next = e.first_waiter;
        e.first_waiter = e.last_waiter = 0;
        while (next != 0) {
          const std::uint32_t w = next - 1;
          StreamState& ws = streams_[w];
          next = info_[w].next_waiter;
          info_[w].next_waiter = 0;
          // A wait reached at this very time was not held up by the record.
          if (record_.reached(w, ws.next) < queue_.now()) record_.set_released_by(w, ws.next, by);
          record_.set_ended(w, ws.next, queue_.now());
          ++ws.next;  // past its Wait
          advance(w);
        }
        break;
      }
      case TaskKind::Wait:
        if (EventState& e = events_[t.id]; e.recorded == 0) {
          if (e.last_waiter == 0)
            e.first_waiter = s + 1;
          else
            info_[e.last_waiter - 1].next_waiter = s + 1;
          e.last_waiter = s + 1;
          return;
        }
        record_.set_ended(s, st.next, queue_.now());
        ++st.next;
        break;
      case TaskKind::Collective:
        st.task_start = queue_.now();
        collective_stream_[t.id][t.rank] = s;
        rank_started(t.id, t.rank);
        collectives_[t.id]->start(t.rank);
        if (folded()) start_members(s, st.next);
        return;
    }
  }
  if (!st.done) {
    st.done = true;
    ++streams_done_;
    gpu_finish_[st.gpu] = max(gpu_finish_[st.gpu], queue_.now());
  }
}

// A collective rank's end: its loads leave the GPU; a folded step's member only checks it.
void StreamExecutor::collective_done(std::uint64_t tag) {
  const std::uint64_t c = (tag & ~kCollectiveBit) >> kRankBits;
  const std::uint32_t s = collective_stream_[c][tag & kRankMask];
  StreamState& st = streams_[s];
  rank_ended(static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(tag & kRankMask));
  if (folded()) {
    if (fold_.representative[st.gpu] != st.gpu) {  // a member: it only checks its finish
      member_done(s, queue_.now());
      return;
    }
    representative_done(s, queue_.now());
  }
  record_.set_ended(s, st.next, queue_.now());
  if (observer_ != nullptr)
    observer_->on_collective(st.gpu, info_[s].local, st.next, st.task_start, queue_.now());
  ++st.next;
  advance(s);
}

// A kernel's end (most of the executor's events). The next task, where it is a kernel without a
// launch delay (most are), starts here: advance() would save its six registers and a 88-byte frame
// for it, and test the task's kind and delay again (branch exec, tests/bench/MEASUREMENTS.md).
[[gnu::always_inline]] inline void StreamExecutor::kernel_done(std::uint32_t s) {
  StreamState& st = streams_[s];
  st.running = false;
  const Time now = queue_.now();
  record_.set_kernel_ended(s, st.next, now, now - st.task_start - Time::ps(st.alone));
  if (observer_ != nullptr) [[unlikely]]
    observer_->on_kernel(st.gpu, info_[s].local, st.next, st.task_start, now);
  const std::uint32_t next = ++st.next;
  if (next < st.size) {
    // As advance() would: no launch delay to sit out (delay_done is false between kernels).
    const Task& t = st.tasks[next];
    if (t.kind == TaskKind::Kernel && t.launch_delay <= Time::zero()) return start_kernel(s, t);
  }
  advance(s);
}

void StreamExecutor::on_event(std::uint64_t tag) {
  if (tag < kMemberJoinBit) [[likely]]
    return kernel_done(static_cast<std::uint32_t>(tag));
  if (tag & kCollectiveBit) return collective_done(tag);
  if (tag & kMemberJoinBit) return join_member(static_cast<std::uint32_t>(tag & ~kMemberJoinBit));
  advance(static_cast<std::uint32_t>(tag & ~kDelayBit));  // a launch delay ended: its kernel starts now
}

Time StreamExecutor::finish_time() const {
  Time t = Time::zero();
  for (const Time f : gpu_finish_) t = max(t, f);
  return t;
}

std::string StreamExecutor::describe_stuck() const {
  std::string out;
  for (std::uint32_t s = 0; s < streams_.size(); ++s) {
    const StreamState& st = streams_[s];
    if (st.done) continue;
    const Task t = task_at(s, st.next);
    out += "GPU " + std::to_string(st.gpu) + " stream " + info_[s].program->name + " stuck at task " +
           std::to_string(st.next) +
           (t.kind == TaskKind::Wait ? " (waiting for event " + std::to_string(t.id) + ")"
                                     : t.kind == TaskKind::Collective
                                           ? " (in collective " + std::to_string(t.id) + ")"
                                           : "") +
           "\n";
  }
  return out;
}

}  // namespace hybridsim::sim

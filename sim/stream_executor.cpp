#include "sim/stream_executor.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/error.h"

namespace hybridsim::sim {

namespace {
// Tags: a kernel finishing on stream s is tag s; a collective rank finishing has the top bit set,
// the collective index in bits 24..62 and the rank in bits 0..23; a kernel's launch delay ending on
// stream s is bit 62 | s (without the top bit).
constexpr std::uint64_t kCollectiveBit = 1ULL << 63;
constexpr std::uint64_t kDelayBit = 1ULL << 62;
constexpr std::uint64_t kRankBits = 24;
constexpr std::uint64_t kRankMask = (1ULL << kRankBits) - 1;

ExecutionRecord make_record(const std::vector<GpuProgram>& programs) {
  std::vector<std::uint32_t> tasks, gpu;
  for (std::uint32_t g = 0; g < programs.size(); ++g)
    for (const StreamProgram& sp : programs[g].streams) {
      tasks.push_back(static_cast<std::uint32_t>(sp.tasks.size()));
      gpu.push_back(g);
    }
  return ExecutionRecord(tasks, std::move(gpu));
}

// ceil(work × den / num) and floor(elapsed × num / den), exact.
std::int64_t time_for(std::int64_t work, std::int64_t num, std::int64_t den) {
  return static_cast<std::int64_t>((static_cast<__int128>(work) * den + num - 1) / num);
}
std::int64_t work_in(std::int64_t elapsed, std::int64_t num, std::int64_t den) {
  return static_cast<std::int64_t>(static_cast<__int128>(elapsed) * num / den);
}
}  // namespace

StreamExecutor::StreamExecutor(EventQueue& queue, const std::vector<GpuProgram>& programs,
                               std::vector<Collective*> collectives, std::uint32_t event_count,
                               StreamExecutorOptions options, std::vector<CollectiveLoad> loads)
    : queue_(queue), gpus_(programs.size()), programs_(programs), collectives_(std::move(collectives)),
      loads_(std::move(loads)), events_(event_count), gpu_finish_(programs.size()), options_(options),
      record_(make_record(programs)) {
  if (!loads_.empty() && loads_.size() != collectives_.size())
    throw InternalError("stream executor: one load per collective expected");
  for (std::uint32_t g = 0; g < programs.size(); ++g) {
    gpus_[g].first_stream = static_cast<std::uint32_t>(streams_.size());
    gpus_[g].streams = static_cast<std::uint32_t>(programs[g].streams.size());
    for (std::uint32_t s = 0; s < programs[g].streams.size(); ++s) {
      const StreamProgram& sp = programs[g].streams[s];
      for (const Task& t : sp.tasks) {
        if ((t.kind == TaskKind::Record || t.kind == TaskKind::Wait) && t.id >= event_count)
          throw InternalError("GPU " + std::to_string(g) + " stream " + sp.name + " uses event " +
                              std::to_string(t.id) + " of " + std::to_string(event_count));
        if (t.kind == TaskKind::Collective &&
            (t.id >= collectives_.size() || t.rank >= collectives_[t.id]->ranks()))
          throw InternalError("GPU " + std::to_string(g) + " stream " + sp.name +
                              " names a collective rank that does not exist");
      }
      StreamState st{};
      st.program = &sp;
      st.gpu = g;
      st.local = s;
      streams_.push_back(st);
    }
  }
  collective_stream_.resize(collectives_.size());
  ranks_joined_.assign(collectives_.size(), 0);
  rank_running_.resize(collectives_.size());
  for (std::size_t c = 0; c < collectives_.size(); ++c) {
    if (collectives_[c]->ranks() > kRankMask) throw InternalError("collective has too many ranks");
    collective_stream_[c].assign(collectives_[c]->ranks(), 0);
    collectives_[c]->notify_rank_done(*this, kCollectiveBit | (static_cast<std::uint64_t>(c) << kRankBits));
  }
}

void StreamExecutor::start() {
  for (std::uint32_t s = 0; s < streams_.size(); ++s) advance(s);
}

StreamExecutor::Rate StreamExecutor::rate_of(const GpuState& gpu, const GpuResources& res,
                                             KernelBound bound) const {
  if (!options_.contention || res.sms == 0) return {};
  if (bound == KernelBound::Compute) {
    if (gpu.held_sms == 0) return {};
    const std::uint32_t held = std::min(gpu.held_sms, res.sms - 1);  // a kernel keeps one SM at least
    return {static_cast<std::int64_t>(res.sms - held), static_cast<std::int64_t>(res.sms)};
  }
  const std::int64_t demand = res.memory_kernel_bandwidth.bytes_per_second() + gpu.traffic;
  const std::int64_t peak = res.memory_bandwidth.bytes_per_second();
  if (gpu.traffic == 0 || demand <= peak) return {};
  return {peak, demand};
}

void StreamExecutor::start_kernel(std::uint32_t s, const Task& t) {
  StreamState& st = streams_[s];
  const GpuProgram& program = programs_[st.gpu];
  double scale = program.compute_scale;
  if (t.per_sample) scale *= program.sample_scale;
  Time d = t.duration;
  if (scale != 1.0)
    d = Time::ps(static_cast<std::int64_t>(std::llround(static_cast<double>(d.ps()) * scale)));
  st.task_start = queue_.now();
  st.running = true;
  st.alone = st.remaining = d.ps();
  st.progress_at = queue_.now();
  st.rate = rate_of(gpus_[st.gpu], program.resources, t.bound);
  st.finish_event = queue_.schedule_after(Time::ps(time_for(st.remaining, st.rate.num, st.rate.den)), *this, s);
}

void StreamExecutor::change_load(std::uint32_t g, std::uint32_t sms, std::int64_t traffic, int sign) {
  GpuState& gpu = gpus_[g];
  gpu.held_sms = static_cast<std::uint32_t>(static_cast<std::int64_t>(gpu.held_sms) + sign * static_cast<std::int64_t>(sms));
  gpu.traffic += sign * traffic;
  rerate(g);
}

void StreamExecutor::rerate(std::uint32_t g) {
  const GpuState& gpu = gpus_[g];
  const GpuResources& res = programs_[g].resources;
  if (res.sms == 0) return;
  const Time now = queue_.now();
  for (std::uint32_t s = gpu.first_stream; s < gpu.first_stream + gpu.streams; ++s) {
    StreamState& st = streams_[s];
    if (!st.running) continue;
    const Rate rate = rate_of(gpu, res, st.program->tasks[st.next].bound);
    if (rate.num == st.rate.num && rate.den == st.rate.den) continue;
    // Bring the kernel's progress up to now at the old rate, then finish the rest at the new one.
    const std::int64_t done = work_in((now - st.progress_at).ps(), st.rate.num, st.rate.den);
    st.remaining = std::max<std::int64_t>(0, st.remaining - done);
    st.progress_at = now;
    st.rate = rate;
    queue_.cancel(st.finish_event);
    st.finish_event = queue_.schedule_after(Time::ps(time_for(st.remaining, rate.num, rate.den)), *this, s);
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
    if (running[r]) change_load(streams_[collective_stream_[c][r]].gpu, 0, load.memory_traffic.bytes_per_second(), +1);
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
  const auto& tasks = st.program->tasks;
  while (st.next < tasks.size()) {
    const Task& t = tasks[st.next];
    if (!(t.kind == TaskKind::Kernel && st.delay_done)) record_.set_reached(s, st.next, queue_.now());
    switch (t.kind) {
      case TaskKind::Kernel: {
        if (t.launch_delay > Time::zero() && !st.delay_done) {
          st.delay_done = true;
          queue_.schedule_after(t.launch_delay, *this, kDelayBit | s);
          return;
        }
        st.delay_done = false;
        start_kernel(s, t);
        return;
      }
      case TaskKind::Record: {
        EventState& e = events_[t.id];
        e.recorded = true;
        record_.set_ended(s, st.next, queue_.now());
        const ExecutionRecord::TaskRef by{s, st.next};
        ++st.next;
        std::vector<std::uint32_t> waiters;
        waiters.swap(e.waiters);
        for (const std::uint32_t w : waiters) {
          StreamState& ws = streams_[w];
          // A wait reached at this very time was not held up by the record.
          if (record_.reached(w, ws.next) < queue_.now()) record_.set_released_by(w, ws.next, by);
          record_.set_ended(w, ws.next, queue_.now());
          ++ws.next;  // past its Wait
          advance(w);
        }
        break;
      }
      case TaskKind::Wait:
        if (!events_[t.id].recorded) {
          events_[t.id].waiters.push_back(s);
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
        return;
    }
  }
  if (!st.done) {
    st.done = true;
    ++streams_done_;
    gpu_finish_[st.gpu] = max(gpu_finish_[st.gpu], queue_.now());
  }
}

void StreamExecutor::on_event(std::uint64_t tag) {
  std::uint32_t s;
  if (tag & kCollectiveBit) {
    const std::uint64_t c = (tag & ~kCollectiveBit) >> kRankBits;
    s = collective_stream_[c][tag & kRankMask];
    StreamState& st = streams_[s];
    rank_ended(static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(tag & kRankMask));
    record_.set_ended(s, st.next, queue_.now());
    if (observer_ != nullptr) observer_->on_collective(st.gpu, st.local, st.next, st.task_start, queue_.now());
  } else if (tag & kDelayBit) {
    advance(static_cast<std::uint32_t>(tag & ~kDelayBit));  // the kernel itself starts now
    return;
  } else {
    s = static_cast<std::uint32_t>(tag);
    StreamState& st = streams_[s];
    st.running = false;
    record_.set_ended(s, st.next, queue_.now());
    record_.set_slowed(s, st.next, queue_.now() - st.task_start - Time::ps(st.alone));
    if (observer_ != nullptr) observer_->on_kernel(st.gpu, st.local, st.next, st.task_start, queue_.now());
  }
  ++streams_[s].next;
  advance(s);
}

Time StreamExecutor::finish_time() const {
  Time t = Time::zero();
  for (const Time f : gpu_finish_) t = max(t, f);
  return t;
}

std::string StreamExecutor::describe_stuck() const {
  std::string out;
  for (const auto& st : streams_) {
    if (st.done) continue;
    const Task& t = st.program->tasks[st.next];
    out += "GPU " + std::to_string(st.gpu) + " stream " + st.program->name + " stuck at task " +
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

#include "sim/stream_executor.h"

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
}  // namespace

StreamExecutor::StreamExecutor(EventQueue& queue, const std::vector<GpuProgram>& programs,
                               std::vector<Collective*> collectives, std::uint32_t event_count,
                               StreamExecutorOptions options)
    : queue_(queue), collectives_(std::move(collectives)), events_(event_count),
      active_collectives_(programs.size(), 0), gpu_finish_(programs.size()), options_(options) {
  for (std::uint32_t g = 0; g < programs.size(); ++g) {
    compute_scale_.push_back(programs[g].compute_scale);
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
      streams_.push_back(StreamState{&sp, g, s, 0, Time::zero(), false, false});
    }
  }
  collective_stream_.resize(collectives_.size());
  for (std::size_t c = 0; c < collectives_.size(); ++c) {
    if (collectives_[c]->ranks() > kRankMask) throw InternalError("collective has too many ranks");
    collective_stream_[c].assign(collectives_[c]->ranks(), 0);
    collectives_[c]->notify_rank_done(*this, kCollectiveBit | (static_cast<std::uint64_t>(c) << kRankBits));
  }
}

void StreamExecutor::start() {
  for (std::uint32_t s = 0; s < streams_.size(); ++s) advance(s);
}

void StreamExecutor::advance(std::uint32_t s) {
  StreamState& st = streams_[s];
  const auto& tasks = st.program->tasks;
  while (st.next < tasks.size()) {
    const Task& t = tasks[st.next];
    switch (t.kind) {
      case TaskKind::Kernel: {
        if (t.launch_delay > Time::zero() && !st.delay_done) {
          st.delay_done = true;
          queue_.schedule_after(t.launch_delay, *this, kDelayBit | s);
          return;
        }
        st.delay_done = false;
        double scale = compute_scale_[st.gpu];
        if (active_collectives_[st.gpu] > 0) scale *= options_.compute_slowdown_during_communication;
        Time d = t.duration;
        if (scale != 1.0)
          d = Time::ps(static_cast<std::int64_t>(std::llround(static_cast<double>(d.ps()) * scale)));
        st.task_start = queue_.now();
        queue_.schedule_after(d, *this, s);
        return;
      }
      case TaskKind::Record: {
        EventState& e = events_[t.id];
        e.recorded = true;
        ++st.next;
        std::vector<std::uint32_t> waiters;
        waiters.swap(e.waiters);
        for (const std::uint32_t w : waiters) {
          ++streams_[w].next;  // past its Wait
          advance(w);
        }
        break;
      }
      case TaskKind::Wait:
        if (!events_[t.id].recorded) {
          events_[t.id].waiters.push_back(s);
          return;
        }
        ++st.next;
        break;
      case TaskKind::Collective:
        st.task_start = queue_.now();
        collective_stream_[t.id][t.rank] = s;
        ++active_collectives_[st.gpu];
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
    --active_collectives_[streams_[s].gpu];
    if (observer_ != nullptr)
      observer_->on_collective(streams_[s].gpu, streams_[s].local, streams_[s].next,
                               streams_[s].task_start, queue_.now());
  } else if (tag & kDelayBit) {
    advance(static_cast<std::uint32_t>(tag & ~kDelayBit));  // the kernel itself starts now
    return;
  } else {
    s = static_cast<std::uint32_t>(tag);
    if (observer_ != nullptr)
      observer_->on_kernel(streams_[s].gpu, streams_[s].local, streams_[s].next,
                           streams_[s].task_start, queue_.now());
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

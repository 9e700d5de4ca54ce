#include "analysis/step/step_bound.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

using TaskRef = sim::ExecutionRecord::TaskRef;
constexpr std::uint32_t kNotWalked = UINT32_MAX;

// A stream walked in its own order: `next` is the task to take; `late` what the task before it ended
// late by (so what `next` was reached late by).
struct StreamWalk {
  std::uint32_t stream = 0;  // in the record's numbering
  const sim::StreamProgram* tasks = nullptr;
  std::uint32_t next = 0;
  std::int64_t late = 0;
  bool joined = false;  // `next` is a collective rank whose join is counted; its end is not yet
  std::vector<std::pair<std::uint32_t, std::int64_t>> records;   // (task, late) of records passed
  std::vector<std::pair<std::uint32_t, std::uint32_t>> waiters;  // (record task, waiting walk)
};

// A collective some walked stream runs a rank of (a folded step's members run none: a step of
// 65,536 GPUs walks its 8 representatives' collectives, not its millions).
struct CollectiveWalk {
  std::uint32_t unjoined = 0;  // walked ranks that have not joined
  std::int64_t most_late = 0;  // the most a joined rank was late by
  std::int64_t last_join = 0;  // the record's times, for every_join_first
  std::int64_t first_end = INT64_MAX;
  bool every_join_first = true;        // every rank joined before any rank ended
  std::vector<std::uint32_t> blocked;  // walks whose rank end waits for a join
  // Only where a rank ended before another joined: each walked rank's (walk, task) and its join's
  // lateness (kNotJoined until then), for the ranks joined by a given end.
  std::vector<std::pair<TaskRef, std::int64_t>> ranks;
};
constexpr std::int64_t kNotJoined = -1;

// The walk over the step's tasks in the order of their dependencies (not of time: a wait on a record
// passed at the same time, or a collective joined by its last rank as another rank's task ends, is
// taken after what it depends on). Each stream is taken until a task waits on something not taken
// yet; taking that wakes it again.
class BoundWalk {
 public:
  BoundWalk(const workloads::StepProgram& program, const sim::ExecutionRecord& record,
            const std::vector<sim::Time>& own_bound, const std::vector<std::uint32_t>& representative)
      : record_(record), own_bound_(own_bound) {
    std::uint32_t s = 0;
    for (std::uint32_t g = 0; g < program.gpus.size(); ++g)
      for (const sim::StreamProgram& sp : program.gpus[g].streams) {
        const bool member = !representative.empty() && representative[g] != g;
        walk_of_.push_back(member ? kNotWalked : static_cast<std::uint32_t>(walks_.size()));
        if (!member) {
          StreamWalk& walk = walks_.emplace_back();
          walk.stream = s;
          walk.tasks = &sp;
        }
        ++s;
      }
    if (walk_of_.size() != record.stream_count())
      throw InternalError("step bound: the record is of another program");
    for (std::uint32_t w = 0; w < walks_.size(); ++w) {
      add_ranks(w);
      ready_.push_back(w);
    }
    for (auto& [id, c] : collectives_) {
      c.every_join_first = c.last_join <= c.first_end;
      if (c.every_join_first) c.ranks = {};
    }
  }

  sim::Time run() {
    while (!ready_.empty()) {
      const std::uint32_t w = ready_.back();
      ready_.pop_back();
      advance(w);
    }
    std::int64_t most = 0;
    for (const StreamWalk& w : walks_) {
      if (w.next < w.tasks->tasks.size())
        throw InternalError("step bound: a task waits on one that never passes");
      most = std::max(most, w.late);
    }
    return sim::Time::ps(most);
  }

 private:
  // Walk w's collective ranks, counted on their collectives.
  void add_ranks(std::uint32_t w) {
    const StreamWalk& walk = walks_[w];
    const auto n = static_cast<std::uint32_t>(walk.tasks->tasks.size());
    for (std::uint32_t i = 0; i < n; ++i) {
      const sim::Task t = walk.tasks->tasks[i];
      if (t.kind != sim::TaskKind::Collective) continue;
      CollectiveWalk& c = collectives_[t.id];
      ++c.unjoined;
      c.last_join = std::max(c.last_join, record_.reached(walk.stream, i).ps());
      c.first_end = std::min(c.first_end, record_.ended(walk.stream, i).ps());
      c.ranks.push_back({{w, i}, kNotJoined});
    }
  }

  // Takes walk w's tasks until its last or one that waits.
  void advance(std::uint32_t w) {
    StreamWalk& walk = walks_[w];
    const auto n = static_cast<std::uint32_t>(walk.tasks->tasks.size());
    while (walk.next < n) {
      const sim::Task t = walk.tasks->tasks[walk.next];
      if (t.kind == sim::TaskKind::Wait && !take_wait(w)) return;
      if (t.kind == sim::TaskKind::Collective && !take_collective(w, t)) return;
      if (t.kind == sim::TaskKind::Record) pass_record(walk);
      ++walk.next;
    }
  }

  void pass_record(StreamWalk& walk) {
    walk.records.emplace_back(walk.next, walk.late);
    auto waiting = std::stable_partition(walk.waiters.begin(), walk.waiters.end(),
                                         [&](const auto& x) { return x.first > walk.next; });
    for (auto it = waiting; it != walk.waiters.end(); ++it) ready_.push_back(it->second);
    walk.waiters.erase(waiting, walk.waiters.end());
  }

  bool take_wait(std::uint32_t w) {
    StreamWalk& walk = walks_[w];
    const auto by = record_.released_by(walk.stream, walk.next);
    if (!by) return true;  // it passed when its stream reached it: as late as that
    if (walk_of_.at(by->stream) == kNotWalked) throw InternalError("step bound: a wait released by a member");
    StreamWalk& from = walks_[walk_of_[by->stream]];
    if (from.next <= by->task) {
      from.waiters.emplace_back(by->task, w);
      return false;
    }
    const auto it = std::lower_bound(from.records.begin(), from.records.end(),
                                     std::pair<std::uint32_t, std::int64_t>(by->task, INT64_MIN));
    if (it == from.records.end() || it->first != by->task)
      throw InternalError("step bound: a wait released by a task that is not a record");
    const std::int64_t reached = record_.reached(walk.stream, walk.next).ps();
    const std::int64_t passed = record_.ended(by->stream, by->task).ps();
    walk.late = passed - std::max(reached - walk.late, passed - it->second);
    return true;
  }

  bool take_collective(std::uint32_t w, const sim::Task& t) {
    StreamWalk& walk = walks_[w];
    CollectiveWalk& c = collectives_.at(t.id);
    if (!walk.joined) {
      walk.joined = true;
      c.most_late = std::max(c.most_late, walk.late);
      for (auto& [rank, late] : c.ranks)
        if (rank == TaskRef{w, walk.next}) late = walk.late;
      if (--c.unjoined == 0 || !c.every_join_first) {
        ready_.insert(ready_.end(), c.blocked.begin(), c.blocked.end());
        c.blocked.clear();
      }
    }
    std::int64_t late = 0;
    if (!joined_by_end(c, record_.ended(walk.stream, walk.next), late)) {
      c.blocked.push_back(w);
      return false;
    }
    walk.joined = false;
    const sim::Time own = t.id < own_bound_.size() ? own_bound_[t.id] : sim::Time::zero();
    walk.late = late + own.ps();
    return true;
  }

  // Whether every rank joined by `end` has been taken, and the most any of them was late by.
  bool joined_by_end(const CollectiveWalk& c, sim::Time end, std::int64_t& late) const {
    if (c.unjoined == 0) {
      late = c.most_late;
      return true;
    }
    if (c.every_join_first) return false;
    late = 0;
    for (const auto& [rank, joined_late] : c.ranks) {
      if (record_.reached(walks_[rank.stream].stream, rank.task) > end) continue;
      if (joined_late == kNotJoined) return false;
      late = std::max(late, joined_late);
    }
    return true;
  }

  const sim::ExecutionRecord& record_;
  const std::vector<sim::Time>& own_bound_;
  std::vector<std::uint32_t> walk_of_;  // per stream of the record: its walk, kNotWalked for a member's
  std::vector<StreamWalk> walks_;
  std::unordered_map<std::uint32_t, CollectiveWalk> collectives_;  // by collective
  std::vector<std::uint32_t> ready_;
};

}  // namespace

sim::Time step_bound(const workloads::StepProgram& program, const sim::ExecutionRecord& record,
                     const std::vector<sim::Time>& own_bound,
                     const std::vector<std::uint32_t>& representative) {
  if (std::none_of(own_bound.begin(), own_bound.end(), [](sim::Time b) { return b > sim::Time::zero(); }))
    return sim::Time::zero();
  return BoundWalk(program, record, own_bound, representative).run();
}

}  // namespace hybridsim::analysis

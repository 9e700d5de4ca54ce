#include "analysis/step/step_bound.h"

#include <algorithm>
#include <functional>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "sim/error.h"
#include "sim/heap_bytes.h"

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
  std::vector<std::pair<std::uint32_t, std::int64_t>> records;  // (task, late) of records passed
  // The walks waiting on a record of this stream, each linked to the next by its own next_waiter
  // (a walk waits on one record at a time: no allocation, step_bound_bytes counts none); its own
  // wait's record task.
  std::uint32_t first_waiter = kNotWalked, next_waiter = kNotWalked, waits_for = 0;
};

// A walked rank of a collective that is not every_join_first: when it joined (the record's time),
// which it is, and the most it, and every rank that joined no later, were late by (kNotJoined until
// it and all of those are taken; till then `late` is its own join's lateness).
struct RankJoin {
  std::int64_t reached = 0;
  TaskRef rank;
  std::int64_t late = 0;
  auto key() const { return std::tuple(reached, rank.stream, rank.task); }
};
constexpr std::int64_t kNotJoined = -1;

// A collective some walked stream runs a rank of (a folded step's members run none: a step of
// 65,536 GPUs walks its 8 representatives' collectives, not its millions).
struct CollectiveWalk {
  std::uint32_t id = 0;        // the program's
  std::uint32_t walked = 0;    // walked ranks
  std::uint32_t unjoined = 0;  // walked ranks that have not joined
  std::int64_t most_late = 0;  // the most a joined rank was late by
  std::int64_t last_join = 0;  // the record's times, for every_join_first
  std::int64_t first_end = INT64_MAX;
  bool every_join_first = true;  // every rank joined before any rank ended
  // Walks whose rank end waits for joins: (joins it needs, walk), a heap of the fewest first. Joins
  // count every walked rank's where every_join_first, else those of `ranks` in order (joined_prefix).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> blocked;
  // Only where a rank ended before another joined: each walked rank, in the order of its join's time,
  // so that the ranks joined by an end are a prefix, found by a binary search; ranks[0,
  // joined_prefix) have been taken, each's `late` the most of the prefix up to it. An end then costs
  // O(log n), where a scan of every rank made a collective's walk O(n^2) in its ranks.
  std::vector<RankJoin> ranks;
  std::uint32_t joined_prefix = 0;
  std::uint32_t joins() const { return every_join_first ? walked - unjoined : joined_prefix; }
};

// A stream's record tasks: the (task, late) entries its walk keeps (their kinds as stored: a list's
// shifts change ids only).
std::size_t records_in(const sim::TaskList& tasks) {
  const std::span<const sim::Task> stored = tasks.stored();
  return static_cast<std::size_t>(std::count_if(
      stored.begin(), stored.end(), [](const sim::Task& t) { return t.kind == sim::TaskKind::Record; }));
}

// The walk over the step's tasks in the order of their dependencies (not of time: a wait on a record
// passed at the same time, or a collective joined by its last rank as another rank's task ends, is
// taken after what it depends on). Each stream is taken until a task waits on something not taken
// yet; taking that wakes it again.
class BoundWalk {
 public:
  BoundWalk(const workloads::StepProgram& program, const sim::ExecutionRecord& record,
            const OwnBounds& own_bound, const std::vector<std::uint32_t>& representative)
      : record_(record), own_bound_(own_bound), walk_of_(record.stream_count(), kNotWalked) {
    // Each array taken at its size, what step_bound_bytes counts.
    add_walks(program, representative);
    add_collectives(program.collectives.size());
    ready_.reserve(walks_.size());
    for (std::uint32_t w = 0; w < walks_.size(); ++w) ready_.push_back(w);
    for (CollectiveWalk& c : collectives_) {
      c.every_join_first = c.last_join <= c.first_end;
      if (c.every_join_first)
        c.ranks = {};
      else
        std::sort(c.ranks.begin(), c.ranks.end(),
                  [](const RankJoin& a, const RankJoin& b) { return a.key() < b.key(); });
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
      if (w.next < w.tasks->tasks.size()) return every_bound_added();
      most = std::max(most, w.late);
    }
    return sim::Time::ps(most);
  }

 private:
  // The walk stalled: a rank ended at the time another joined, and that join came of the end (a
  // receiver whose data came first), which the record's times cannot tell from a join the end
  // waited on. Any chain of the walked collectives is late by at most their bounds added up.
  sim::Time every_bound_added() const {
    sim::Time sum;
    for (const CollectiveWalk& c : collectives_) sum += own(c.id);
    return sum;
  }

  sim::Time own(std::uint32_t collective) const {
    const auto it = std::lower_bound(own_bound_.begin(), own_bound_.end(),
                                     std::pair<std::uint32_t, sim::Time>(collective, sim::Time::zero()));
    return it != own_bound_.end() && it->first == collective ? it->second : sim::Time::zero();
  }

  // A walk for each stream of a GPU that ran (not a folded step's member), its records' array taken.
  void add_walks(const workloads::StepProgram& program, const std::vector<std::uint32_t>& representative) {
    std::uint32_t s = 0, walked = 0;
    for (std::uint32_t g = 0; g < program.gpus.size(); ++g)
      if (representative.empty() || representative[g] == g)
        walked += static_cast<std::uint32_t>(program.gpus[g].streams.size());
    walks_.reserve(walked);
    for (std::uint32_t g = 0; g < program.gpus.size(); ++g)
      for (const sim::StreamProgram& sp : program.gpus[g].streams) {
        if (s >= walk_of_.size()) throw InternalError("step bound: the record is of another program");
        if (representative.empty() || representative[g] == g) {
          walk_of_[s] = static_cast<std::uint32_t>(walks_.size());
          StreamWalk& walk = walks_.emplace_back();
          walk.stream = s;
          walk.tasks = &sp;
          walk.records.reserve(records_in(sp.tasks));
        }
        ++s;
      }
    if (s != walk_of_.size()) throw InternalError("step bound: the record is of another program");
  }

  // f(task, i) for each collective rank of walk w, the task i of its stream.
  template <class F>
  void for_each_rank(std::uint32_t w, const F& f) const {
    const StreamWalk& walk = walks_[w];
    const auto n = static_cast<std::uint32_t>(walk.tasks->tasks.size());
    for (std::uint32_t i = 0; i < n; ++i)
      if (const sim::Task t = walk.tasks->tasks[i]; t.kind == sim::TaskKind::Collective) f(t, i);
  }

  // The collectives the walks run ranks of, numbered as first met and each counted with its walked
  // ranks, their joins' and ends' times; then each rank in its collective's `ranks`. Each array is
  // taken at its size: numbered first, then counted.
  void add_collectives(std::size_t program_collectives) {
    collective_of_.assign(program_collectives, kNotWalked);
    std::uint32_t walked = 0;
    for (std::uint32_t w = 0; w < walks_.size(); ++w)
      for_each_rank(w, [&](const sim::Task& t, std::uint32_t) {
        if (t.id >= collective_of_.size()) throw InternalError("step bound: a task of no collective");
        if (collective_of_[t.id] == kNotWalked) collective_of_[t.id] = walked++;
      });
    collectives_.resize(walked);
    for (std::uint32_t w = 0; w < walks_.size(); ++w)
      for_each_rank(w, [&](const sim::Task& t, std::uint32_t i) {
        CollectiveWalk& c = collectives_[collective_of_[t.id]];
        c.id = t.id;
        ++c.walked;
        ++c.unjoined;
        c.last_join = std::max(c.last_join, record_.reached(walks_[w].stream, i).ps());
        c.first_end = std::min(c.first_end, record_.ended(walks_[w].stream, i).ps());
      });
    for (CollectiveWalk& c : collectives_) {
      c.ranks.reserve(c.walked);
      c.blocked.reserve(c.walked);
    }
    for (std::uint32_t w = 0; w < walks_.size(); ++w)
      for_each_rank(w, [&](const sim::Task& t, std::uint32_t i) {
        collectives_[collective_of_[t.id]].ranks.push_back(
            {record_.reached(walks_[w].stream, i).ps(), {w, i}, kNotJoined});
      });
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
    for (std::uint32_t* link = &walk.first_waiter; *link != kNotWalked;) {
      StreamWalk& waiter = walks_[*link];
      if (waiter.waits_for > walk.next) {
        link = &waiter.next_waiter;
        continue;
      }
      ready_.push_back(*link);
      *link = waiter.next_waiter;
    }
  }

  bool take_wait(std::uint32_t w) {
    StreamWalk& walk = walks_[w];
    const auto by = record_.released_by(walk.stream, walk.next);
    if (!by) return true;  // it passed when its stream reached it: as late as that
    if (walk_of_.at(by->stream) == kNotWalked) throw InternalError("step bound: a wait released by a member");
    StreamWalk& from = walks_[walk_of_[by->stream]];
    if (from.next <= by->task) {
      walk.waits_for = by->task;
      walk.next_waiter = from.first_waiter;
      from.first_waiter = w;
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
    CollectiveWalk& c = collectives_[collective_of_[t.id]];
    if (!walk.joined) {
      walk.joined = true;
      c.most_late = std::max(c.most_late, walk.late);
      --c.unjoined;
      if (!c.every_join_first)
        join_in_order(c, {record_.reached(walk.stream, walk.next).ps(), {w, walk.next}, walk.late});
      wake_blocked(c);
    }
    std::int64_t late = 0;
    if (const std::uint32_t needed = joins_by_end(c, record_.ended(walk.stream, walk.next), late);
        needed > 0) {
      c.blocked.emplace_back(needed, w);
      std::push_heap(c.blocked.begin(), c.blocked.end(), std::greater<>());
      return false;
    }
    walk.joined = false;
    walk.late = late + own(t.id).ps();
    return true;
  }

  // A rank of a collective that is not every_join_first joined, late by `join.late`: its place in
  // `ranks` found by its key, and the prefix of ranks taken grown over every rank joined since.
  static void join_in_order(CollectiveWalk& c, RankJoin join) {
    const auto it = std::lower_bound(c.ranks.begin(), c.ranks.end(), join,
                                     [](const RankJoin& a, const RankJoin& b) { return a.key() < b.key(); });
    if (it == c.ranks.end() || it->key() != join.key()) throw InternalError("step bound: a rank not counted");
    it->late = join.late;
    for (; c.joined_prefix < c.ranks.size() && c.ranks[c.joined_prefix].late != kNotJoined; ++c.joined_prefix)
      if (c.joined_prefix > 0)
        c.ranks[c.joined_prefix].late =
            std::max(c.ranks[c.joined_prefix].late, c.ranks[c.joined_prefix - 1].late);
  }

  // The walks whose rank ends now have every join they need, made ready.
  void wake_blocked(CollectiveWalk& c) {
    while (!c.blocked.empty() && c.blocked.front().first <= c.joins()) {
      std::pop_heap(c.blocked.begin(), c.blocked.end(), std::greater<>());
      ready_.push_back(c.blocked.back().second);
      c.blocked.pop_back();
    }
  }

  // Zero where every rank joined by `end` has been taken (`late`: the most any of them was late by);
  // else the joins (CollectiveWalk::joins) that the end waits for.
  std::uint32_t joins_by_end(const CollectiveWalk& c, sim::Time end, std::int64_t& late) const {
    if (c.every_join_first) {
      late = c.most_late;
      return c.unjoined == 0 ? 0 : c.walked;
    }
    // The ranks that joined by `end`: those of a join time no later (a prefix, at least the rank
    // itself).
    const auto by = std::upper_bound(c.ranks.begin(), c.ranks.end(), end.ps(),
                                     [](std::int64_t t, const RankJoin& r) { return t < r.reached; });
    const auto needed = static_cast<std::uint32_t>(by - c.ranks.begin());
    if (needed > c.joined_prefix) return needed;
    late = needed == 0 ? 0 : c.ranks[needed - 1].late;
    return 0;
  }

  const sim::ExecutionRecord& record_;
  const OwnBounds& own_bound_;
  std::vector<std::uint32_t> walk_of_;  // per stream of the record: its walk, kNotWalked for a member's
  std::vector<StreamWalk> walks_;
  std::vector<std::uint32_t> collective_of_;  // per collective of the program: its walk, or kNotWalked
  std::vector<CollectiveWalk> collectives_;   // in the order first met
  std::vector<std::uint32_t> ready_;
};

}  // namespace

sim::Time step_bound(const workloads::StepProgram& program, const sim::ExecutionRecord& record,
                     const OwnBounds& own_bound, const std::vector<std::uint32_t>& representative) {
  if (own_bound.empty()) return sim::Time::zero();
  return BoundWalk(program, record, own_bound, representative).run();
}

std::int64_t step_bound_bytes(const workloads::StepProgram& program, const sim::StepFold& fold) {
  using sim::heap_array;
  const bool folded = !fold.representative.empty();
  std::size_t streams = 0, walked = 0;
  std::int64_t bytes = 0;
  // A list several streams read (sim::TaskList::shifted_from) holds the same records for each: its
  // tasks read once (every GPU's of a 2,048-GPU step read per stream cost the estimate 9% of its run).
  std::unordered_map<const void*, std::size_t> records_of_shared;
  for (std::uint32_t g = 0; g < program.gpus.size(); ++g) {
    streams += program.gpus[g].streams.size();
    if (folded && fold.representative[g] != g) continue;
    for (const sim::StreamProgram& sp : program.gpus[g].streams) {
      ++walked;
      std::size_t records = 0;
      if (!sp.tasks.is_shared()) {
        records = records_in(sp.tasks);
      } else if (const auto [it, fresh] = records_of_shared.try_emplace(sp.tasks.same_tasks(), 0); fresh) {
        records = it->second = records_in(sp.tasks);
      } else {
        records = it->second;
      }
      bytes += heap_array<std::pair<std::uint32_t, std::int64_t>>(records);
    }
  }
  // A collective's walked ranks are its members' that ran: at most its members (none of a shadow's).
  std::size_t collectives = 0;
  for (std::size_t c = 0; c < program.collectives.size(); ++c) {
    const std::size_t n = program.collectives[c].members.size();
    if (n == 0 || (folded && fold.shadow[c] != 0)) continue;
    ++collectives;
    bytes += heap_array<RankJoin>(n) + heap_array<std::pair<std::uint32_t, std::uint32_t>>(n);
  }
  return bytes + heap_array<std::uint32_t>(streams) + heap_array<StreamWalk>(walked) +
         heap_array<std::uint32_t>(program.collectives.size()) + heap_array<CollectiveWalk>(collectives) +
         heap_array<std::uint32_t>(walked);
}

}  // namespace hybridsim::analysis

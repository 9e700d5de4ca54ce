#include "workloads/program/tensor_parallel.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/error.h"
#include "workloads/program/shared_task_lists.h"

namespace hybridsim::workloads {
namespace {

bool is_gradient(CollectiveRole role) {
  return role == CollectiveRole::GradientAllReduce || role == CollectiveRole::GradientAllGather;
}

// ZeRO's gathers of parameters run over the group their gradients were reduce-scattered over.
bool is_parameter_gather(CollectiveRole role) {
  return role == CollectiveRole::ParameterAllGather || role == CollectiveRole::UpdatedParameterAllGather;
}

// Whether a list holds no collective task but its own ones (sim::TaskList::own_collective: ZeRO's
// gathers, each list's, which no shift of its tasks moves), the tasks of shared lists read once however
// many GPUs share them (each kept alive meanwhile, so that no other list's tasks take their address).
class CollectiveFree {
 public:
  bool operator()(const sim::TaskList& list) {
    if (!list.is_shared()) return none(list);
    const auto [it, fresh] = free_.try_emplace(list.same_tasks(), list, false);
    if (fresh) it->second.second = none(list);
    return it->second.second;
  }

 private:
  static bool none(const sim::TaskList& list) {
    return std::ranges::none_of(list.stored(), [](const sim::Task& t) {
      return t.kind == sim::TaskKind::Collective && !sim::TaskList::is_own_collective(t);
    });
  }
  // By the tasks read; only looked up, never ordered by.
  std::unordered_map<const void*, std::pair<sim::TaskList, bool>> free_;
};

}  // namespace

std::vector<std::vector<int>> gpu_of_worker_rank(const StepProgram& p, int workers) {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(workers),
                                    std::vector<int>(static_cast<std::size_t>(p.mp), -1));
  for (std::size_t g = 0; g < p.worker_of_gpu.size(); ++g)
    if (p.worker_of_gpu[g] >= 0)
      out[static_cast<std::size_t>(p.worker_of_gpu[g])][static_cast<std::size_t>(p.mp_rank_of_gpu[g])] =
          static_cast<int>(g);
  return out;
}

void split_gradient_collectives(StepProgram& p, int parts,
                                const std::function<bool(const CollectiveSpec&)>& selected,
                                const std::function<int(int)>& part_of) {
  const std::size_t n = p.collectives.size();
  std::vector<std::vector<std::uint32_t>> index(n), new_rank(n);
  for (std::size_t i = 0; i < n; ++i) {
    const CollectiveSpec spec = p.collectives[i];
    if (!(is_gradient(spec.role) || is_parameter_gather(spec.role)) || !selected(spec)) continue;
    std::vector<std::vector<int>> groups(static_cast<std::size_t>(parts));
    for (const int g : spec.members) {
      auto& group = groups[static_cast<std::size_t>(part_of(p.worker_of_gpu[static_cast<std::size_t>(g)]))];
      new_rank[i].push_back(static_cast<std::uint32_t>(group.size()));
      group.push_back(g);
    }
    for (std::size_t r = 0; r < groups.size(); ++r) {
      CollectiveSpec c = spec;
      c.members = groups[r];
      if (r == 0) {
        p.collectives[i] = c;
        index[i].push_back(static_cast<std::uint32_t>(i));
      } else {
        index[i].push_back(static_cast<std::uint32_t>(p.collectives.size()));
        p.collectives.push_back(c);
      }
    }
  }
  const auto split = [&](const sim::Task& t) {
    return t.kind == sim::TaskKind::Collective && t.id < n && !index[t.id].empty();
  };
  const auto split_one = [&](sim::Task& task, int w) {
    const std::uint32_t old = task.id;
    task.rank = new_rank[old][task.rank];
    task.id = index[old][static_cast<std::size_t>(part_of(w))];
  };
  CollectiveFree free;
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    const int w = p.worker_of_gpu[g];
    if (w < 0) continue;
    for (auto& stream : p.gpus[g].streams) {
      // Copy (mutate) only the lists that change: a shared list stays shared, and one without any
      // collective is not read at all (a pipeline's compute streams, at 16,384 GPUs).
      if (!free(stream.tasks)) {
        if (std::none_of(stream.tasks.begin(), stream.tasks.end(), split)) continue;
        for (auto& task : stream.tasks.mutate())
          if (split(task)) split_one(task, w);
        continue;
      }
      // Its only collectives its own (ZeRO's gathers of an expert op): changed where they are kept,
      // the list still shared (copied, ZeRO-1 with experts held a list a GPU).
      std::vector<sim::Task> own = stream.tasks.own_collectives();
      if (std::none_of(own.begin(), own.end(), split)) continue;
      for (sim::Task& task : own)
        if (split(task)) split_one(task, w);
      stream.tasks.set_own_collectives(own);
    }
  }
}

namespace {

using SyncKey = std::tuple<std::uint32_t, bool, std::uint32_t>;  // op, backward, kernel

// (A const GPU's: const.)
template <class Gpu>
auto& compute_stream_of(Gpu& gpu) {
  for (auto& s : gpu.streams)
    if (s.name == "compute") return s;
  throw InternalError("tensor parallel: a GPU without a compute stream");
}

constexpr const char* kTpStream = "tensor-parallel";

// The GPU's TP stream's tasks (null: it has none).
sim::TaskList* tp_stream_of(sim::GpuProgram& gpu) {
  for (auto& s : gpu.streams)
    if (s.name == kTpStream) return &s.tasks;
  return nullptr;
}

// A group's all-reduce of its TpGradients before the optimizer: their bytes summed (zero: none)
// and the last op that holds some.
struct GradientSync {
  sim::Bytes bytes;
  std::uint32_t op = 0;
};

bool is_optimizer(const StepProgram& p, const sim::Task& task) {
  return task.kind == sim::TaskKind::Kernel && task.id < p.labels.size() &&
         p.labels[task.id].phase == Phase::Optimizer;
}

// The syncs issued right after the kernel `label` names, or (`before`) before it, where it is its
// op's first (TpSync::kBeforeFirst).
std::span<const TpSync* const> syncs_at(const std::map<SyncKey, std::vector<const TpSync*>>& at,
                                        const KernelLabel& label, bool before) {
  if (before && label.kernel != 0) return {};
  const auto it =
      at.find({label.op, label.phase == Phase::Backward, before ? TpSync::kBeforeFirst : label.kernel});
  return it == at.end() ? std::span<const TpSync* const>() : std::span<const TpSync* const>(it->second);
}

// A TP rank's events for its overlapped collectives (TpSync::overlap), two each: the j-th id as its
// compute list reads it. Past the `count` planned for it (GroupInserter::plan_events), an id would be
// another list's: refused.
struct RankEvents {
  GroupEvents ids;
  std::uint32_t shift = 0;  // its list's event shift less its shared group's base's
  std::uint64_t count = 0;
  std::uint32_t id(std::size_t j) const {
    if (j >= count) throw InternalError("tensor parallel: more overlapped collectives than events planned");
    return ids.id(j) + shift;
  }
};

// The kernel of a sync's op after which the compute stream waits for it: `overlap` kernels after
// the one it is issued after, or after its op's overlap-th where it is issued before the first.
std::uint32_t waited_after(const TpSync& sync) {
  const std::uint64_t last = sync.after == TpSync::kBeforeFirst ? std::uint64_t{sync.overlap} - 1
                                                                : std::uint64_t{sync.after} + sync.overlap;
  if (sync.overlap == 0 || last >= TpSync::kBeforeFirst)
    throw InternalError("tensor parallel: an overlapped collective waited for past its op's kernels");
  return static_cast<std::uint32_t>(last);
}

// One TP rank's compute stream with its group's collectives inserted, and its TP stream: each
// overlapped collective issued there once the compute stream records that it has reached it, the
// compute stream waiting for its end `overlap` kernels of the op later.
class RankTasks {
 public:
  RankTasks(std::size_t size, const RankEvents* events) : events_(events) { compute_.reserve(size + 1); }
  void kernel_ran(const sim::Task& task, const KernelLabel& label) {
    compute_.push_back(task);
    for (std::size_t i = 0; i < due_.size();) {
      if (due_[i].first != SyncKey{label.op, label.phase == Phase::Backward, label.kernel}) {
        ++i;
        continue;
      }
      compute_.push_back(sim::Task::wait(due_[i].second));
      due_.erase(due_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  void issue(const sim::Task& collective, const TpSync& sync) {
    if (sync.overlap == 0) {
      compute_.push_back(collective);
      return;
    }
    if (events_ == nullptr) throw InternalError("tensor parallel: an overlapped collective without events");
    const std::uint32_t issued = events_->id(next_++), done = events_->id(next_++);
    compute_.push_back(sim::Task::record(issued));
    tp_.insert(tp_.end(), {sim::Task::wait(issued), collective, sim::Task::record(done)});
    due_.push_back({{sync.op, sync.backward, waited_after(sync)}, done});
  }
  std::vector<sim::Task>& compute() { return compute_; }
  std::vector<sim::Task> tp() {
    if (!due_.empty()) throw InternalError("tensor parallel: an overlapped collective never waited for");
    return std::move(tp_);
  }

 private:
  const RankEvents* events_;
  std::vector<sim::Task> compute_, tp_;
  std::vector<std::pair<SyncKey, std::uint32_t>> due_;  // a kernel, and the event to wait for after it
  std::size_t next_ = 0;
};

// The TP collectives of replica q: rank 0's stream creates them in the order it issues them; the
// other ranks, whose compute streams are the same kernels, join the same ones in the same order.
// `gradients` goes before the first optimizer kernel (after the data-parallel gradients' wait and
// copies out: step_program_streams.cpp), at the end where there is none. Overlapped collectives
// go on each rank's "tensor-parallel" stream, with events[r] (null: none).
// Returns the collectives created, in that order.
std::vector<std::uint32_t> insert_replica(StepProgram& p,
                                          const std::map<SyncKey, std::vector<const TpSync*>>& at,
                                          const std::vector<int>& group, CollectiveRole role,
                                          const GradientSync& gradients,
                                          const std::vector<const RankEvents*>& events) {
  std::vector<std::uint32_t> specs;
  for (std::size_t r = 0; r < group.size(); ++r) {
    sim::GpuProgram& gpu = p.gpus[static_cast<std::size_t>(group[r])];
    sim::StreamProgram& stream = compute_stream_of(gpu);
    RankTasks tasks(stream.tasks.size(), events[r]);
    std::size_t k = 0;
    const auto add = [&](CollectiveRole as, sim::CollectiveOp op, sim::Bytes bytes, std::uint32_t of) {
      if (r == 0) {
        specs.push_back(static_cast<std::uint32_t>(p.collectives.size()));
        p.collectives.push_back({as, op, bytes, group, of, -1, 0});
      }
      if (k >= specs.size()) throw InternalError("a group's ranks issue different collectives");
      return sim::Task::collective(specs[k++], static_cast<std::uint32_t>(r));
    };
    bool synced = gradients.bytes == sim::Bytes();
    const auto sync_gradients = [&] {
      tasks.compute().push_back(add(CollectiveRole::NormGradientAllReduce, sim::CollectiveOp::AllReduce,
                                    gradients.bytes, gradients.op));
      synced = true;
    };
    // Its own collectives (sim::TaskList::own_collective) kept as stored, and its own after.
    const std::vector<sim::Task> own = stream.tasks.own_collectives();
    for (const sim::Task& task : tasks_keeping_own(stream.tasks)) {
      if (!synced && is_optimizer(p, task)) sync_gradients();
      if (task.kind != sim::TaskKind::Kernel || task.id >= p.labels.size()) {
        tasks.compute().push_back(task);
        continue;
      }
      const KernelLabel& label = p.labels[task.id];
      if (label.phase != Phase::Forward && label.phase != Phase::Backward) {
        tasks.compute().push_back(task);
        continue;
      }
      for (const TpSync* sync : syncs_at(at, label, true))
        tasks.issue(add(role, sync->kind, sync->bytes, sync->op), *sync);
      tasks.kernel_ran(task, label);
      for (const TpSync* sync : syncs_at(at, label, false))
        tasks.issue(add(role, sync->kind, sync->bytes, sync->op), *sync);
    }
    if (!synced) sync_gradients();
    if (k != specs.size()) throw InternalError("a group's ranks issue different collectives");
    stream.tasks = sim::TaskList::with_own_collectives(std::move(tasks.compute()), own);
    std::vector<sim::Task> tp = tasks.tp();
    if (tp.empty()) continue;
    // One a GPU: a second would be a second TP group's, and a group's shared result finds its own by name.
    if (tp_stream_of(gpu) != nullptr) throw InternalError("tensor parallel: a GPU in two TP groups");
    gpu.streams.push_back({kTpStream, std::move(tp)});  // `stream` moves
  }
  return specs;
}

// Per MP rank (a pipeline's stage): the TpGradients of the ops whose backward kernels its first
// worker's compute stream runs (every replica's stage runs the same), summed.
std::vector<GradientSync> gradient_syncs(const StepProgram& p, std::span<const TpGradient> gradients,
                                         const std::vector<std::vector<int>>& gpu_of_worker) {
  std::vector<GradientSync> out(static_cast<std::size_t>(p.mp));
  if (gradients.empty()) return out;
  std::uint32_t ops = 0;
  for (const TpGradient& t : gradients) ops = std::max(ops, t.op + 1);
  std::vector<bool> runs(ops, false);  // by op
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::fill(runs.begin(), runs.end(), false);
    const sim::GpuProgram& gpu = p.gpus[static_cast<std::size_t>(gpu_of_worker[0][k])];
    for (const sim::Task& task : compute_stream_of(gpu).tasks.stored())
      if (task.kind == sim::TaskKind::Kernel && task.id < p.labels.size() &&
          p.labels[task.id].phase == Phase::Backward && p.labels[task.id].op < runs.size())
        runs[p.labels[task.id].op] = true;
    for (const TpGradient& t : gradients)
      if (runs[t.op]) out[k] = {out[k].bytes + t.bytes, t.op};
  }
  return out;
}

// TP groups whose ranks' compute streams read the same tasks as an earlier group's, rank by rank,
// each shifted (sim::TaskList) and none with a collective before: such a group's streams after
// insertion are the earlier group's, their events shifted as before and their new collectives by
// where its own begin (created alike, only over its own GPUs). At 16,384 GPUs of a pipeline, 128
// groups are built and 16,256 share theirs, where each GPU's stream was copied and rebuilt before.
class GroupInserter {
 public:
  GroupInserter(StepProgram& p, std::span<const TpSync> syncs, CollectiveRole role) : p_(p), role_(role) {
    for (const TpSync& s : syncs) {
      at_[{s.op, s.backward, s.after}].push_back(&s);
      overlapped_ = overlapped_ || s.overlap > 0;
    }
  }
  // Before any insert: the events of the overlapped collectives (TpSync::overlap) of every compute
  // list in `lists`, laid out alike for lists that read one (events_alike), so that a group whose
  // ranks read an earlier group's lists reads its result shifted; else each list's own.
  void plan_events(const std::vector<sim::TaskList*>& lists) {
    if (!overlapped_) return;
    for (const SharedGroup& g : shared_groups(lists)) {
      const std::uint64_t n = 2 * overlapped_in(*g.lists[0]);
      const std::optional<GroupEvents> e = events_alike(g, p_.event_count, n);
      if (e && p_.event_count + e->added <= UINT32_MAX) {
        p_.event_count = static_cast<std::uint32_t>(p_.event_count + e->added);
        for (std::size_t k = 0; k < g.lists.size(); ++k) events_[g.lists[k]] = {*e, g.event_shift[k], n};
        continue;
      }
      for (sim::TaskList* list : g.lists) {
        if (p_.event_count + n > UINT32_MAX)
          throw InputError("tensor parallel: more events than an index holds");
        events_[list] = {
            {p_.event_count, std::max<std::uint64_t>(n, 1), std::max<std::uint64_t>(n, 1), n}, 0, n};
        apart_.insert(list);
        p_.event_count = static_cast<std::uint32_t>(p_.event_count + n);
      }
    }
  }
  void insert(const std::vector<int>& group, const GradientSync& gradients = {}) {
    std::vector<sim::TaskList*> lists;
    std::vector<const void*> key;
    std::vector<const RankEvents*> events;
    bool shared = true;
    for (const int g : group) {
      lists.push_back(&compute_stream_of(p_.gpus[static_cast<std::size_t>(g)]).tasks);
      key.push_back(lists.back()->same_tasks());
      shared = shared && lists.back()->is_shared() && free_(*lists.back()) && !apart_.contains(lists.back());
      const auto e = events_.find(lists.back());
      events.push_back(e == events_.end() ? nullptr : &e->second);
    }
    const auto it = shared ? done_.find(key) : done_.end();
    if (it == done_.end() || !shifts_up(it->second, lists)) {
      Done d{{}, {}, {}, {}, {}};
      for (const sim::TaskList* list : lists) {
        d.event_shift.push_back(list->event_shift());
        if (shared) d.kept.push_back(*list);
      }
      d.specs = insert_replica(p_, at_, group, role_, gradients, events);
      for (const int g : group) {
        sim::GpuProgram& gpu = p_.gpus[static_cast<std::size_t>(g)];
        d.result.push_back(&compute_stream_of(gpu).tasks);
        d.tp.push_back(tp_stream_of(gpu));  // none where its ops overlap nothing
      }
      if (shared) done_.try_emplace(std::move(key), std::move(d));
      return;
    }
    const Done& d = it->second;
    const auto first = static_cast<std::uint32_t>(p_.collectives.size());
    for (const std::uint32_t c : d.specs) {  // the earlier group's, over this group's GPUs
      CollectiveSpec spec = p_.collectives[c];
      spec.members = group;
      p_.collectives.push_back(std::move(spec));
    }
    const std::uint32_t shift = d.specs.empty() ? 0 : first - d.specs.front();
    for (std::size_t r = 0; r < lists.size(); ++r) {
      const std::vector<sim::Task> own = lists[r]->own_collectives();  // not the earlier group's
      const std::uint32_t event_shift = lists[r]->event_shift() - d.event_shift[r];
      *lists[r] = sim::TaskList::shifted_from(*d.result[r], event_shift, shift);
      lists[r]->set_own_collectives(own);
      if (d.tp[r] != nullptr)  // `lists[r]` moves
        p_.gpus[static_cast<std::size_t>(group[r])].streams.push_back(
            {kTpStream, sim::TaskList::shifted_from(*d.tp[r], event_shift, shift)});
    }
  }

 private:
  struct Done {
    std::vector<std::uint32_t> specs;            // consecutive
    std::vector<std::uint32_t> event_shift;      // [rank]: its list's before insertion
    std::vector<sim::TaskList*> result;          // [rank]: its list after
    std::vector<sim::TaskList> kept;             // [rank]: its list before, kept (see CollectiveFree)
    std::vector<sim::TaskList*> tp;              // [rank]: its TP stream (null: none)
  };
  // How many overlapped collectives a compute list issues (its kernels are read unshifted).
  std::uint64_t overlapped_in(const sim::TaskList& list) const {
    std::uint64_t n = 0;
    for (const sim::Task& t : list.stored()) {
      if (t.kind != sim::TaskKind::Kernel || t.id >= p_.labels.size()) continue;
      const KernelLabel& label = p_.labels[t.id];
      if (label.phase != Phase::Forward && label.phase != Phase::Backward) continue;
      for (const bool before : {true, false})
        for (const TpSync* sync : syncs_at(at_, label, before)) n += sync->overlap > 0 ? 1 : 0;
    }
    return n;
  }
  static bool shifts_up(const Done& d, const std::vector<sim::TaskList*>& lists) {
    for (std::size_t r = 0; r < lists.size(); ++r)
      if (lists[r]->event_shift() < d.event_shift[r]) return false;
    return true;
  }
  StepProgram& p_;
  CollectiveRole role_;
  std::map<SyncKey, std::vector<const TpSync*>> at_;
  CollectiveFree free_;
  std::map<std::vector<const void*>, Done> done_;  // by the tasks each rank read; only looked up
  bool overlapped_ = false;                        // any TpSync::overlap
  std::map<const sim::TaskList*, RankEvents> events_;  // by compute list (plan_events); only looked up
  std::set<const sim::TaskList*> apart_;               // lists whose events are their own
};

// One replica: each TP rank's gradient "collective" has itself alone; the flat-buffer copies around
// it are not made (nothing is exchanged).
void drop_gradient_copies(StepProgram& p) {
  for (auto& gpu : p.gpus)
    for (auto& stream : gpu.streams)
      std::erase_if(stream.tasks.mutate(), [&](const sim::Task& t) { return p.is_gradient_copy(t); });
}

}  // namespace

void insert_group_collectives(StepProgram& p, std::span<const TpSync> syncs,
                              const std::vector<std::vector<int>>& groups, CollectiveRole role) {
  GroupInserter inserter(p, syncs, role);
  for (const std::vector<int>& group : groups) inserter.insert(group);
}

void apply_tensor_parallel(StepProgram& p, std::span<const TpSync> syncs, int tp,
                           std::span<const TpGradient> gradients, ProgramBuildProgress* progress) {
  if (tp < 1 || p.dp % tp != 0)
    throw InputError("tensor parallelism needs dp x tp workers; got " + std::to_string(p.dp) +
                     " workers, tp " + std::to_string(tp));
  if (tp == 1) return;
  // mp > 1: a pipeline's stages, each stage a TP group of its own.
  const std::vector<std::vector<int>> gpu_of_worker = gpu_of_worker_rank(p, p.dp);
  // Each gradient collective over all dp × tp workers becomes tp collectives over one TP rank's
  // replicas (each rank holds a different shard).
  split_gradient_collectives(
      p, tp, [](const CollectiveSpec&) { return true; }, [tp](int w) { return w % tp; });
  const std::vector<GradientSync> per_stage = gradient_syncs(p, gradients, gpu_of_worker);
  GroupInserter inserter(p, syncs, CollectiveRole::TensorParallel);
  std::vector<sim::TaskList*> lists;  // every compute stream of a TP group, in place for good
  for (sim::GpuProgram& gpu : p.gpus) {
    if (gpu.streams.empty()) continue;
    gpu.streams.reserve(gpu.streams.size() + 1);  // a TP stream beside it
    lists.push_back(&compute_stream_of(gpu).tasks);
  }
  inserter.plan_events(lists);
  for (int q = 0; q < p.dp / tp; ++q) {
    build_tick(progress, "the TP groups' collectives", static_cast<std::uint64_t>(q),
               static_cast<std::uint64_t>(p.dp / tp), "replicas");
    for (std::size_t k = 0; k < static_cast<std::size_t>(p.mp); ++k) {
      std::vector<int> group;
      for (int r = 0; r < tp; ++r) group.push_back(gpu_of_worker[static_cast<std::size_t>(q * tp + r)][k]);
      inserter.insert(group, per_stage[k]);
    }
  }
  if (p.dp == tp) drop_gradient_copies(p);
  // Every replica's tp GPUs process the same samples: count them once (global_batch counted the
  // replicas already: step_global_batch, step_program.h).
  p.dp /= tp;
  p.tp = tp;
}

}  // namespace hybridsim::workloads

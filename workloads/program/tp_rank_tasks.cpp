// One group member's compute stream rebuilt with its group's collectives (tp_rank_tasks.h):
// RankTasks places each sync, on the compute stream or, overlapped, on the rank's TP stream with the
// events around it; insert_replica runs it over every rank of one group.
#include "workloads/program/tp_rank_tasks.h"

#include <utility>

namespace hybridsim::workloads::tp_parts {
namespace {

bool is_optimizer(const StepProgram& p, const sim::Task& task) {
  return task.kind == sim::TaskKind::Kernel && task.id < p.labels.size() &&
         p.labels[task.id].phase == Phase::Optimizer;
}

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

}  // namespace

// The GPU's TP stream's tasks (null: it has none).
sim::TaskList* tp_stream_of(sim::GpuProgram& gpu) {
  for (auto& s : gpu.streams)
    if (s.name == kTpStream) return &s.tasks;
  return nullptr;
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

}  // namespace hybridsim::workloads::tp_parts

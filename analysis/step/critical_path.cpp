#include "analysis/step/critical_path.h"

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

using TaskRef = sim::ExecutionRecord::TaskRef;

// Marks a rank run by no stream that ran (a folded step's member).
constexpr std::uint32_t kNotRun = UINT32_MAX;

// Each collective's ranks, as (stream, task) in the record's numbering; a folded step's members
// (`representative[g] != g`) ran nothing, so their ranks stay kNotRun and their tasks are not read.
std::vector<std::vector<TaskRef>> collective_ranks(const workloads::StepProgram& program,
                                                   const std::vector<std::uint32_t>& representative) {
  std::vector<std::vector<TaskRef>> ranks(program.collectives.size());
  std::uint32_t s = 0;
  for (std::uint32_t g = 0; g < program.gpus.size(); ++g)
    for (const sim::StreamProgram& sp : program.gpus[g].streams) {
      const bool member = !representative.empty() && representative[g] != g;
      // Read as stored, only collectives shifted: through operator[] every task of every stream
      // was copied out with its shifts.
      const std::span<const sim::Task> stored = member ? std::span<const sim::Task>() : sp.tasks.stored();
      for (std::uint32_t i = 0; i < stored.size(); ++i) {
        if (stored[i].kind != sim::TaskKind::Collective) continue;
        const sim::Task t = sp.tasks.shifted(stored[i]);
        auto& r = ranks.at(t.id);
        if (r.size() <= t.rank) r.resize(t.rank + 1, {kNotRun, 0});
        r[t.rank] = {s, i};
      }
      ++s;
    }
  return ranks;
}

std::vector<const sim::StreamProgram*> streams_of(const workloads::StepProgram& program) {
  std::vector<const sim::StreamProgram*> out;
  for (const sim::GpuProgram& gpu : program.gpus)
    for (const sim::StreamProgram& sp : gpu.streams) out.push_back(&sp);
  return out;
}

// The stream that finished last (the first such, for a deterministic path), after checking that
// every task of the streams simulated ran; none for an empty step. A stream runs its tasks in order
// and the executor ends a task only after the one before it, so a stream whose last task ran ran
// them all: one entry a stream is read, where reading every task's was a second pass over the whole
// record after step_metrics' (a 1,024-GPU step's record is larger than the last-level cache, and
// that pass was a quarter of the run's last-level misses).
template <typename Member>
std::optional<std::uint32_t> last_stream(const std::vector<const sim::StreamProgram*>& streams,
                                         const sim::ExecutionRecord& record, sim::Time step_time,
                                         const Member& member) {
  if (streams.size() != record.stream_count())
    throw InternalError("critical path: the record is of another program");
  for (std::uint32_t k = 0; k < streams.size(); ++k) {
    if (member(k)) continue;
    const auto n = static_cast<std::uint32_t>(streams[k]->tasks.size());
    if (record.task_count(k) != n) throw InternalError("critical path: the record is of another program");
    if (n > 0 && !record.has_run(k, n - 1))
      throw InternalError("critical path: a task of the step never ran");
  }
  for (std::uint32_t k = 0; k < streams.size(); ++k) {
    const auto n = static_cast<std::uint32_t>(streams[k]->tasks.size());
    if (n > 0 && !member(k) && record.ended(k, n - 1) == step_time) return k;
  }
  return std::nullopt;
}

// The path's parts as it is walked, in picoseconds.
struct PathSums {
  std::int64_t compute = 0, slowed = 0, copies = 0, gradients = 0, transfers = 0, gaps = 0;
  std::int64_t tensor = 0, expert = 0, optimizer = 0;

  void write_to(CriticalPath& path) const {
    path.compute = sim::Time::ps(compute);
    path.compute_slowed = sim::Time::ps(slowed);
    path.gradient_copies = sim::Time::ps(copies);
    path.optimizer = sim::Time::ps(optimizer);
    path.gradient_communication = sim::Time::ps(gradients);
    path.model_parallel_transfers = sim::Time::ps(transfers);
    path.tensor_parallel_communication = sim::Time::ps(tensor);
    path.expert_parallel_communication = sim::Time::ps(expert);
    path.launch_gaps = sim::Time::ps(gaps);
  }
};

// Which part a collective's wait on the path counts in: data-parallel gradients and (ZeRO's)
// parameters, tensor-parallel, expert-parallel, or the model-parallel transfers of everything else.
std::int64_t& communication_part(workloads::CollectiveRole role, PathSums& sum) {
  switch (role) {
    case workloads::CollectiveRole::GradientAllReduce:
    case workloads::CollectiveRole::GradientAllGather:
    case workloads::CollectiveRole::ParameterAllGather:
    case workloads::CollectiveRole::UpdatedParameterAllGather:
      return sum.gradients;
    case workloads::CollectiveRole::TensorParallel:
    case workloads::CollectiveRole::NormGradientAllReduce:  // on the TP group, before the optimizer
      return sum.tensor;
    case workloads::CollectiveRole::ExpertParallel:
      return sum.expert;
    default:
      return sum.transfers;
  }
}

}  // namespace

CriticalPath critical_path(const workloads::StepProgram& program, const sim::ExecutionRecord& record,
                           sim::Time step_time, const std::vector<std::uint32_t>& representative) {
  const std::vector<const sim::StreamProgram*> streams = streams_of(program);
  // A folded step's members ran with their representatives: only those are looked at.
  const auto member = [&](std::uint32_t stream) {
    const std::uint32_t g = record.gpu_of(stream);
    return !representative.empty() && representative[g] != g;
  };
  CriticalPath path;
  const std::optional<std::uint32_t> last = last_stream(streams, record, step_time, member);
  if (!last) return path;
  std::uint32_t s = *last;

  // Backward: from the last task, through whatever released each task, to the step's start.
  const std::vector<std::vector<TaskRef>> ranks = collective_ranks(program, representative);
  std::set<std::uint32_t> gpus{record.gpu_of(s)};
  PathSums sum;
  auto move_to = [&](TaskRef to) {
    if (record.gpu_of(to.stream) != record.gpu_of(s)) ++path.gpu_changes;
    s = to.stream;
    gpus.insert(record.gpu_of(s));
    return static_cast<std::int64_t>(to.task);
  };
  for (std::int64_t i = static_cast<std::int64_t>(streams[s]->tasks.size()) - 1; i >= 0; --i) {
    const auto task = static_cast<std::uint32_t>(i);
    const sim::Task& t = streams[s]->tasks[task];
    switch (t.kind) {
      case sim::TaskKind::Kernel: {
        const std::int64_t ran = (record.ended(s, task) - record.reached(s, task)).ps() - t.launch_delay.ps();
        const std::int64_t extra = record.slowed(s, task).ps();
        sum.compute += ran;
        sum.slowed += extra;
        if (program.is_gradient_copy(t)) sum.copies += ran - extra;
        if (t.id < program.labels.size() && program.labels[t.id].phase == workloads::Phase::Optimizer)
          sum.optimizer += ran - extra;
        sum.gaps += t.launch_delay.ps();
        break;
      }
      case sim::TaskKind::Record:
        break;
      case sim::TaskKind::Wait:
        if (const auto by = record.released_by(s, task)) i = move_to(*by);  // then past the record
        break;
      case sim::TaskKind::Collective: {
        // The rank that joined last (this one on a tie) held everyone up until then.
        TaskRef last{s, task};
        // (A folded step's members joined with their representatives: only those are looked at.)
        for (const TaskRef& r : ranks[t.id])
          if (r.stream != kNotRun && !member(r.stream) &&
              record.reached(r.stream, r.task) > record.reached(last.stream, last.task))
            last = r;
        const std::int64_t span = (record.ended(s, task) - record.reached(last.stream, last.task)).ps();
        communication_part(program.collectives[t.id].role, sum) += span;
        if (last.stream != s) i = move_to(last);
        break;
      }
    }
  }
  sum.write_to(path);
  path.gpus_visited = static_cast<int>(gpus.size());
  return path;
}

}  // namespace hybridsim::analysis

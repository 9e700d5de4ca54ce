#include "workloads/program/sharded_data_parallel.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/error.h"
#include "workloads/gpu/cost_model.h"

namespace hybridsim::workloads {
namespace {

using sim::Task;

sim::StreamProgram* stream_named(sim::GpuProgram& gpu, std::string_view name) {
  for (auto& s : gpu.streams)
    if (s.name == name) return &s;
  return nullptr;
}

sim::Time sharded(sim::Time t, int dp) { return sim::Time::ps((t.ps() + dp - 1) / dp); }

// Every dense gradient collective becomes a reduce-scatter of the same bucket: each rank ends with
// the reduced 1/dp it updates, after (n−1)/n of the bucket's bytes, half an all-reduce's.
void scatter_gradients(StepProgram& p) {
  for (CollectiveSpec& c : p.collectives) {
    if (c.role == CollectiveRole::GradientAllGather)
      throw InputError("sharded data parallelism (zero) needs dense gradients; this profile all-gathers "
                       "sparse ones");
    if (c.role == CollectiveRole::GradientAllReduce) c.op = sim::CollectiveOp::ReduceScatter;
  }
}

// The optimizer updates its 1/dp of the parameters; each copy out of a bucket brings back 1/dp of it.
void shard_kernels(StepProgram& p, int dp) {
  for (auto& gpu : p.gpus)
    if (sim::StreamProgram* compute = stream_named(gpu, "compute"))
      for (Task& t : compute->tasks.mutate()) {  // a shared list is copied: sharding edits every GPU's
        if (t.kind != sim::TaskKind::Kernel || t.id >= p.labels.size()) continue;
        if (p.labels[t.id].phase == Phase::Optimizer) t.duration = sharded(t.duration, dp);
        if (p.labels[t.id].phase == Phase::GradientCopyOut)
          t.duration = max(kernel_launch_floor(), sharded(t.duration, dp));
      }
}

// Stage 1: each round's reduce-scatters start once all of its gradients are ready (the end of the
// backward), not bucket by bucket as they fill.
void reduce_after_backward(sim::StreamProgram& comm) {
  std::vector<Task> out, waits, rest;
  const auto flush = [&] {
    out.insert(out.end(), waits.begin(), waits.end());
    out.insert(out.end(), rest.begin(), rest.end());
    waits.clear();
    rest.clear();
  };
  for (const Task& t : comm.tasks) {
    if (t.kind == sim::TaskKind::Wait) {
      waits.push_back(t);
    } else if (t.kind == sim::TaskKind::Record) {
      flush();
      out.push_back(t);
    } else {
      rest.push_back(t);
    }
  }
  flush();
  comm.tasks = std::move(out);
}

// A GPU's data-parallel group and its rank in it: those of its first gradient collective.
struct Group {
  std::vector<int> members;
  std::uint32_t rank = 0;
};
std::optional<Group> group_of(const StepProgram& p, sim::GpuProgram& gpu) {
  const sim::StreamProgram* comm = stream_named(gpu, "communication");
  if (comm == nullptr) return std::nullopt;
  for (const Task& t : comm->tasks)
    if (t.kind == sim::TaskKind::Collective) return Group{p.collectives[t.id].members, t.rank};
  return std::nullopt;
}

// Stages 1 and 2: the updated parameters (this rank's whole profile, in its precision) all-gathered
// over the group right after the optimizer, on the compute stream (the next step needs them).
void gather_updated(StepProgram& p, const Profile& profile) {
  std::map<std::vector<int>, std::uint32_t> spec_of;
  for (auto& gpu : p.gpus) {
    const std::optional<Group> group = group_of(p, gpu);
    if (!group) continue;
    const auto [it, fresh] =
        spec_of.try_emplace(group->members, static_cast<std::uint32_t>(p.collectives.size()));
    if (fresh)
      p.collectives.push_back({CollectiveRole::UpdatedParameterAllGather, sim::CollectiveOp::AllGather,
                               profile.parameter_bytes(), group->members, 0, -1, 0});
    sim::StreamProgram* compute = stream_named(gpu, "compute");
    if (compute == nullptr) throw InternalError("sharded data parallel: a GPU without a compute stream");
    std::vector<Task>& tasks = compute->tasks.mutate();
    auto at = tasks.end();
    for (auto t = tasks.begin(); t != tasks.end(); ++t)
      if (t->kind == sim::TaskKind::Kernel && t->id < p.labels.size() &&
          p.labels[t->id].phase == Phase::Optimizer)
        at = t + 1;
    tasks.insert(at, Task::collective(it->second, group->rank));
  }
}

// Stage 3: where the compute stream first runs an op with parameters, forward or backward (with
// accumulation, once per micro-batch): the index of that kernel's task and the op.
std::vector<std::pair<std::size_t, std::uint32_t>> gather_points(const StepProgram& p, const Profile& profile,
                                                                 const sim::StreamProgram& compute) {
  std::vector<std::pair<std::size_t, std::uint32_t>> out;
  for (std::size_t i = 0; i < compute.tasks.size(); ++i) {
    const Task& t = compute.tasks[i];
    if (t.kind != sim::TaskKind::Kernel || t.id >= p.labels.size()) continue;
    const KernelLabel& label = p.labels[t.id];
    if ((label.phase == Phase::Forward || label.phase == Phase::Backward) && label.kernel == 0 &&
        profile.ops[label.op].exchange == GradientExchange::DenseAllReduce)
      out.push_back({i, label.op});
  }
  return out;
}

// Stage 3 on one GPU: its compute stream waits for each op's gathered parameters and records when
// it starts the op; a "parameters" stream gathers op j + 1 once the compute stream starts op j.
void gather_before_use(StepProgram& p, sim::GpuProgram& gpu, const Group& group,
                       const std::vector<std::uint32_t>& specs,
                       const std::vector<std::pair<std::size_t, std::uint32_t>>& points) {
  sim::StreamProgram* compute = stream_named(gpu, "compute");
  sim::StreamProgram gather{"parameters", {}};
  std::vector<Task> tasks;
  tasks.reserve(compute->tasks.size() + 2 * points.size());
  std::size_t j = 0;
  std::uint32_t started = 0;
  for (std::size_t i = 0; i < compute->tasks.size(); ++i) {
    if (j < points.size() && points[j].first == i) {
      const std::uint32_t gathered = p.event_count++;
      if (j > 0) gather.tasks.push_back(Task::wait(started));
      gather.tasks.push_back(Task::collective(specs[j], group.rank));
      gather.tasks.push_back(Task::record(gathered));
      started = p.event_count++;
      tasks.push_back(Task::wait(gathered));
      tasks.push_back(Task::record(started));
      ++j;
    }
    tasks.push_back(compute->tasks[i]);
  }
  compute->tasks = std::move(tasks);
  gpu.streams.push_back(std::move(gather));
}

void gather_per_op(StepProgram& p, const Profile& profile) {
  std::map<std::vector<int>, std::vector<std::uint32_t>> specs_of;
  for (auto& gpu : p.gpus) {
    const std::optional<Group> group = group_of(p, gpu);
    if (!group) continue;
    const sim::StreamProgram* compute = stream_named(gpu, "compute");
    if (compute == nullptr) throw InternalError("sharded data parallel: a GPU without a compute stream");
    const auto points = gather_points(p, profile, *compute);
    const auto [it, fresh] = specs_of.try_emplace(group->members);
    if (fresh)
      for (const auto& [task, op] : points) {
        it->second.push_back(static_cast<std::uint32_t>(p.collectives.size()));
        p.collectives.push_back({CollectiveRole::ParameterAllGather, sim::CollectiveOp::AllGather,
                                 profile.ops[op].gradient_bytes, group->members, op, -1, 0});
      }
    if (it->second.size() != points.size())
      throw InternalError("sharded data parallel: a group's GPUs use different ops");
    gather_before_use(p, gpu, *group, it->second, points);
  }
}

}  // namespace

StepOptions sharded_layout_options(StepOptions options) {
  if (options.zero == 1) options.exchange_every_micro_batch = false;
  if (options.zero >= 2) options.exchange_every_micro_batch = true;
  if (options.zero == 3) options.bucket_size = sim::Bytes::of(1);
  return options;
}

void apply_sharded_data_parallel(StepProgram& p, const Profile& profile, int stage) {
  if (stage < 0 || stage > 3)
    throw InputError("zero stage " + std::to_string(stage) + ": expected 0, 1, 2 or 3 (fsdp)");
  if (stage == 0 || p.dp == 1) return;
  if (p.mp != 1)
    throw InputError("sharded data parallelism (zero) needs mp = 1; got mp " + std::to_string(p.mp));
  scatter_gradients(p);
  shard_kernels(p, p.dp);
  if (stage == 3) {
    gather_per_op(p, profile);
    return;
  }
  if (stage == 1)
    for (auto& gpu : p.gpus)
      if (sim::StreamProgram* comm = stream_named(gpu, "communication")) reduce_after_backward(*comm);
  gather_updated(p, profile);
}

}  // namespace hybridsim::workloads

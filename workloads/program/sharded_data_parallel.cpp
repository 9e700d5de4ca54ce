#include "workloads/program/sharded_data_parallel.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/error.h"
#include "workloads/generators/transformer_model.h"
#include "workloads/gpu/cost_model.h"
#include "workloads/program/sharded_data_parallel_parts.h"
#include "workloads/program/shared_task_lists.h"

namespace hybridsim::workloads {
namespace sharded_parts {

using sim::Task;

sim::StreamProgram* stream_named(sim::GpuProgram& gpu, std::string_view name) {
  for (auto& s : gpu.streams)
    if (s.name == name) return &s;
  return nullptr;
}

sim::Bytes scattered_bytes(const StepProgram& p, const sim::GpuProgram& gpu,
                           const std::vector<std::uint32_t>* experts) {
  sim::Bytes total;
  std::set<int> buckets;
  for (const sim::StreamProgram& stream : gpu.streams)
    if (stream.name == "communication")
      for (const Task& t : stream.tasks) {
        if (t.kind != sim::TaskKind::Collective) continue;
        const CollectiveSpec& c = p.collectives[t.id];
        if (experts != nullptr && std::ranges::count(*experts, c.op_index) == 0) continue;
        if (c.role == CollectiveRole::GradientAllReduce && buckets.insert(c.bucket).second) total += c.size;
      }
  return total;
}

}  // namespace sharded_parts

namespace {

using namespace sharded_parts;

using sim::Task;

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

// Every GPU's compute stream, for edits made alike (shared_task_lists.h).
std::vector<sim::TaskList*> compute_lists(StepProgram& p) {
  std::vector<sim::TaskList*> out;
  for (auto& gpu : p.gpus)
    if (sim::StreamProgram* compute = stream_named(gpu, "compute")) out.push_back(&compute->tasks);
  return out;
}

// The optimizer updates its 1/dp of the parameters (shard_experts then widens the experts' share);
// each copy out of a bucket brings back 1/dp of it, an expert bucket 1/(dp / ep), the replicas it is
// reduce-scattered over. Edited once per shared list: the GPUs that read one keep reading one.
void shard_kernels(StepProgram& p, int dp, const ExpertParallelOptions& ep) {
  const auto copied_by = [&](std::uint32_t collective) {
    const bool expert =
        collective < p.collectives.size() && is_expert_op(ep, p.collectives[collective].op_index);
    return expert ? expert_replicas(dp, ep.ep) : dp;
  };
  for (const SharedGroup& group : shared_groups(compute_lists(p)))
    edit_alike(group, [&](std::vector<Task>& tasks) {
      for (Task& t : tasks) {
        if (t.kind != sim::TaskKind::Kernel || t.id >= p.labels.size()) continue;
        const KernelLabel& label = p.labels[t.id];
        if (label.phase == Phase::Optimizer) t.duration = sharded(t.duration, dp);
        if (label.phase == Phase::GradientCopyOut)
          t.duration = max(kernel_launch_floor(), sharded(t.duration, copied_by(label.kernel)));
      }
    });
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

// Where the gather goes in a compute stream: after its last optimizer kernel (its end if none).
std::size_t after_optimizer(const StepProgram& p, const sim::TaskList& list) {
  std::size_t at = list.size();
  const std::span<const Task> stored = list.stored();  // kernels: no shift applies to them
  for (std::size_t i = 0; i < stored.size(); ++i)
    if (stored[i].kind == sim::TaskKind::Kernel && stored[i].id < p.labels.size() &&
        p.labels[stored[i].id].phase == Phase::Optimizer)
      at = i + 1;
  return at;
}

// `list`'s tasks with `gather` inserted at `at`, in a vector of the final size (mutate() and an
// insert held about twice the list a GPU, 425 KB at 16,384 GPUs of a GPT-3 pipeline;
// tests/bench/MEASUREMENTS.md, Lead of 2026-12-06).
std::vector<Task> with_gather(const sim::TaskList& list, std::size_t at, const Task& gather) {
  std::vector<Task> tasks;
  tasks.reserve(list.size() + 1);
  for (std::size_t i = 0; i < at; ++i) tasks.push_back(list[i]);
  tasks.push_back(gather);
  for (std::size_t i = at; i < list.size(); ++i) tasks.push_back(list[i]);
  return tasks;
}

// Stages 1 and 2: the updated parameters (scattered_bytes) all-gathered over the group right after
// the optimizer, on the compute stream (the next step needs them). The gather's index and rank are
// each GPU's own, so GPUs that share a compute list keep sharing it, with the gather as the list's
// own collective (sim::TaskList::own_collective): a copy a GPU held N x the list (16,384 GPUs of a
// ZeRO-1 step: tests/bench/MEASUREMENTS.md, mem of 2026-12-06).
void gather_updated(StepProgram& p) {
  std::map<std::vector<int>, std::uint32_t> spec_of;
  std::map<const sim::TaskList*, Task> gather_of;  // by compute list: its GPU's gather
  std::vector<sim::TaskList*> lists;
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    sim::GpuProgram& gpu = p.gpus[g];
    const std::optional<Group> group = group_of(p, gpu);
    if (!group) continue;
    const auto [it, fresh] =
        spec_of.try_emplace(group->members, static_cast<std::uint32_t>(p.collectives.size()));
    if (fresh)
      p.collectives.push_back({CollectiveRole::UpdatedParameterAllGather, sim::CollectiveOp::AllGather,
                               scattered_bytes(p, gpu), group->members, 0, -1, p.mp_rank_of_gpu[g]});
    sim::StreamProgram* compute = stream_named(gpu, "compute");
    if (compute == nullptr) throw InternalError("sharded data parallel: a GPU without a compute stream");
    lists.push_back(&compute->tasks);
    gather_of[&compute->tasks] = Task::collective(it->second, group->rank);
  }
  for (const SharedGroup& group : shared_groups(lists)) {
    const std::size_t at = after_optimizer(p, *group.lists[0]);
    if (group.lists.size() == 1 && !group.lists[0]->is_shared()) {
      *group.lists[0] = with_gather(*group.lists[0], at, gather_of.at(group.lists[0]));
      continue;
    }
    edit_alike(group, [&](std::vector<Task>& tasks) {
      tasks.insert(tasks.begin() + static_cast<std::ptrdiff_t>(at), sim::TaskList::own_collective());
    });
    for (sim::TaskList* list : group.lists) {
      const Task gather = gather_of.at(list);
      list->set_own_collective(gather.id, gather.rank);
    }
  }
}

// Stage 3: where the compute stream first runs an op with parameters, forward or backward (with
// accumulation, once per micro-batch): the index of that kernel's task and the op. Not an expert op
// at dp = ep: each replica holds its experts whole (nothing of them is sharded, so nothing is
// gathered), and the next op's gather is prefetched past them, as transformer_memory's
// zero3_gathered_bytes counts the pair in flight. There each had a one-member gather, which took no
// time but held the next op's prefetch back until the experts started.
using Points = std::vector<std::pair<std::size_t, std::uint32_t>>;
Points gather_points(const StepProgram& p, const Profile& profile, const sim::TaskList& compute,
                     const ExpertParallelOptions& ep) {
  const bool experts_whole = expert_replicas(p.dp, ep.ep) <= 1;
  Points out;
  for (std::size_t i = 0; i < compute.size(); ++i) {
    const Task t = compute[i];
    if (t.kind != sim::TaskKind::Kernel || t.id >= p.labels.size()) continue;
    const KernelLabel& label = p.labels[t.id];
    if ((label.phase == Phase::Forward || label.phase == Phase::Backward) && label.kernel == 0 &&
        profile.ops[label.op].exchange == GradientExchange::DenseAllReduce &&
        !(experts_whole && is_expert_op(ep, label.op)))
      out.push_back({i, label.op});
  }
  return out;
}

// The 2n events stage 3 adds to GPUs sharing a compute stream (a gather's end and the op's start
// per point), laid out by events_alike (shared_task_lists.h). None when sharing would not save memory
// (the ids spread over more events, 32 bytes each in the executor, than the copies of the shared
// tasks it spares) or two GPUs' shifts are alike.
std::optional<GroupEvents> group_events(StepProgram& p, const SharedGroup& g, std::size_t points) {
  const std::uint64_t n = 2 * points;
  const std::optional<GroupEvents> e = events_alike(g, p.event_count, n);
  if (!e) return std::nullopt;
  const std::uint64_t copies = g.lists.size(), spared = (copies - 1) * g.lists[0]->size();
  if (p.event_count + e->added > UINT32_MAX || (copies > 1 && e->added - n * copies > spared))
    return std::nullopt;
  p.event_count = static_cast<std::uint32_t>(p.event_count + e->added);
  return e;
}

// What each GPU's "parameters" stream needs: its GPU, its rank in its group's gathers, and those.
struct GpuGather {
  sim::GpuProgram* gpu = nullptr;
  std::uint32_t rank = 0;
  const std::vector<std::uint32_t>* specs = nullptr;
};

// Stage 3 on GPUs sharing a compute stream: the stream waits for each op's gathered parameters and
// records when it starts the op (one edit for them all); each GPU's "parameters" stream (its own:
// its rank differs) gathers op j + 1 once its compute stream starts op j.
void gather_before_use(const SharedGroup& g, const GroupEvents& e, const Points& points,
                       const std::map<const sim::TaskList*, GpuGather>& gather) {
  edit_alike(g, [&](std::vector<Task>& tasks) {
    std::vector<Task> out;
    out.reserve(tasks.size() + 2 * points.size());
    for (std::size_t i = 0, j = 0; i < tasks.size(); ++i) {
      if (j < points.size() && points[j].first == i) {
        out.push_back(Task::wait(e.id(2 * j)));
        out.push_back(Task::record(e.id(2 * j + 1)));
        ++j;
      }
      out.push_back(tasks[i]);
    }
    tasks = std::move(out);
  });
  for (std::size_t k = 0; k < g.lists.size(); ++k) {
    const GpuGather& to = gather.at(g.lists[k]);
    std::vector<Task> tasks;
    tasks.reserve(3 * points.size());
    for (std::size_t j = 0; j < points.size(); ++j) {
      if (j > 0) tasks.push_back(Task::wait(e.id(2 * j - 1) + g.event_shift[k]));
      tasks.push_back(Task::collective((*to.specs)[j], to.rank));
      tasks.push_back(Task::record(e.id(2 * j) + g.event_shift[k]));
    }
    to.gpu->streams.push_back({"parameters", std::move(tasks)});
  }
}

// Each group's gathers (made when its first GPU comes, one per point), then each set of GPUs
// sharing a compute stream edited once (or, where sharing would not pay, each GPU's own copy).
void gather_per_op(StepProgram& p, const Profile& profile, const ExpertParallelOptions& ep) {
  std::map<std::vector<int>, std::vector<std::uint32_t>> specs_of;
  std::map<const void*, Points> points_of;  // by the tasks a compute stream reads
  std::map<const sim::TaskList*, GpuGather> gather;
  std::vector<sim::TaskList*> lists;
  for (auto& gpu : p.gpus) {
    const std::optional<Group> group = group_of(p, gpu);
    if (!group) continue;
    gpu.streams.reserve(gpu.streams.size() + 1);  // the compute stream stays where it is
    sim::StreamProgram* compute = stream_named(gpu, "compute");
    if (compute == nullptr) throw InternalError("sharded data parallel: a GPU without a compute stream");
    const auto [pt, new_points] = points_of.try_emplace(compute->tasks.same_tasks());
    if (new_points) pt->second = gather_points(p, profile, compute->tasks, ep);
    const auto [it, fresh] = specs_of.try_emplace(group->members);
    if (fresh)
      for (const auto& [task, op] : pt->second) {
        it->second.push_back(static_cast<std::uint32_t>(p.collectives.size()));
        p.collectives.push_back({CollectiveRole::ParameterAllGather, sim::CollectiveOp::AllGather,
                                 profile.ops[op].gradient_bytes, group->members, op, -1, 0});
      }
    if (it->second.size() != pt->second.size())
      throw InternalError("sharded data parallel: a group's GPUs use different ops");
    lists.push_back(&compute->tasks);
    gather[&compute->tasks] = {&gpu, group->rank, &it->second};
  }
  const std::vector<SharedGroup> groups = shared_groups(lists);
  std::vector<Points> points;  // read before any edit frees the tasks they are keyed by
  for (const SharedGroup& g : groups) points.push_back(points_of.at(g.lists[0]->same_tasks()));
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (const auto e = group_events(p, groups[i], points[i].size())) {
      gather_before_use(groups[i], *e, points[i], gather);
      continue;
    }
    for (sim::TaskList* list : groups[i].lists) {
      list->mutate();
      const SharedGroup alone{{list}, {0}, {0}};
      const auto e = group_events(p, alone, points[i].size());
      if (!e) throw InternalError("sharded data parallel: more events than an index holds");
      gather_before_use(alone, *e, points[i], gather);
    }
  }
}

}  // namespace

bool is_expert_op(const ExpertParallelOptions& ep, std::uint32_t op) {
  return ep.ep > 1 && std::ranges::count(ep.expert_ops, op) > 0;
}

StepOptions sharded_layout_options(StepOptions options) {
  if (options.zero == 1) options.exchange_every_micro_batch = false;
  if (options.zero >= 2) options.exchange_every_micro_batch = true;
  if (options.zero == 3) options.bucket_size = sim::Bytes::of(1);
  return options;
}

void apply_sharded_data_parallel(StepProgram& p, const Profile& profile, int stage,
                                 const ExpertParallelOptions& ep) {
  if (stage < 0 || stage > 3)
    throw InputError("zero stage " + std::to_string(stage) + ": expected 0, 1, 2 or 3 (fsdp)");
  if (stage == 0 || p.dp == 1) return;
  // An MP rank (a pipeline's stage) shards its optimizer over its own data-parallel group at stage 1
  // only (zero_runs_with_pipeline).
  if (!zero_runs_with_pipeline(stage, p.mp))
    throw InputError("sharded data parallelism (zero) " + std::to_string(stage) + " needs mp = 1; got mp " +
                     std::to_string(p.mp) + " (zero 1 shards each MP rank's optimizer)");
  scatter_gradients(p);
  shard_kernels(p, p.dp, ep);
  if (stage == 3) {
    gather_per_op(p, profile, ep);
    return;
  }
  if (stage == 1)
    for (auto& gpu : p.gpus)
      if (sim::StreamProgram* comm = stream_named(gpu, "communication")) reduce_after_backward(*comm);
  gather_updated(p);
}

}  // namespace hybridsim::workloads

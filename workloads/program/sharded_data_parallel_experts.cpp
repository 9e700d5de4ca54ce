// A mixture's experts under ZeRO (sharded_data_parallel.h, shard_experts): their share of the optimizer
// widened to the dp / ep replicas that hold them, and their updated parameters gathered apart. A file
// of its own: it runs after expert parallelism's split (apply_expert_parallel calls it), apart from
// the stages of apply_sharded_data_parallel (sharded_data_parallel.cpp).
#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "sim/error.h"
#include "workloads/generators/transformer_model.h"
#include "workloads/program/sharded_data_parallel.h"
#include "workloads/program/sharded_data_parallel_parts.h"
#include "workloads/program/shared_task_lists.h"

namespace hybridsim::workloads {
namespace {

using namespace sharded_parts;
using sim::Task;

// The bytes a GPU reduce-scatters (scattered_bytes) and the experts' share of them.
struct ScatteredBytes {
  std::int64_t all = 0, experts = 0;
};
ScatteredBytes scattered_expert_bytes(const StepProgram& p, const sim::GpuProgram& gpu,
                                      const std::vector<std::uint32_t>& expert_ops) {
  return {scattered_bytes(p, gpu).count(), scattered_bytes(p, gpu, &expert_ops).count()};
}

// The optimizer kernel of GPUs reading one list ran 1/dp of the step's update; the experts' share
// of it (`experts` of `all` bytes) runs on 1/(dp / ep): ep times as long.
void widen_expert_update(const SharedGroup& group, const StepProgram& p, ScatteredBytes bytes, int ep) {
  if (bytes.experts == 0 || bytes.all == 0) return;
  edit_alike(group, [&](std::vector<Task>& tasks) {
    for (Task& t : tasks)
      if (t.kind == sim::TaskKind::Kernel && t.id < p.labels.size() &&
          p.labels[t.id].phase == Phase::Optimizer) {
        const __int128 extra = static_cast<__int128>(t.duration.ps()) * bytes.experts * (ep - 1) / bytes.all;
        t.duration = t.duration + sim::Time::ps(static_cast<std::int64_t>(extra));
      }
  });
}

// Stages 1 and 2: the experts' bytes of a GPU's updated-parameter gather moved to a gather of their
// own over the same members (split over the replicas that hold them afterwards), its spec made as
// its GPU comes (in the GPUs' order, as the step's collectives are numbered). Where each replica
// holds its experts whole (`gathered` false: dp = ep), they leave the gather and have none: one of
// one member moved nothing.
void split_expert_gather(StepProgram& p, const sim::TaskList& compute, std::int64_t expert_bytes,
                         std::uint32_t expert_op, bool gathered,
                         std::map<std::uint32_t, std::uint32_t>& expert_spec_of) {
  for (const Task& t : compute) {
    if (t.kind != sim::TaskKind::Collective ||
        p.collectives[t.id].role != CollectiveRole::UpdatedParameterAllGather)
      continue;
    const auto [it, fresh] =
        expert_spec_of.try_emplace(t.id, static_cast<std::uint32_t>(p.collectives.size()));
    if (!fresh) continue;
    CollectiveSpec experts = p.collectives[t.id];
    experts.size = sim::Bytes::of(expert_bytes);
    experts.op_index = expert_op;
    p.collectives[t.id].size = p.collectives[t.id].size - experts.size;
    if (gathered) p.collectives.push_back(experts);
  }
}

// The experts' gather (split_expert_gather) runs right after the rest, at the same rank. GPUs that
// share a compute list keep sharing it: their gather is the list's own collective, and the experts'
// is its second (sim::TaskList::own_collective(1)), where a copy each held N x the list (Mixtral
// 8x7B ZeRO-1 at 8,192 GPUs: tests/bench/MEASUREMENTS.md, skipfold2).
void gather_experts_after(const StepProgram& p, const SharedGroup& group,
                          const std::map<std::uint32_t, std::uint32_t>& expert_spec_of) {
  edit_alike(group, [&](std::vector<Task>& tasks) {
    std::vector<Task> out;
    out.reserve(tasks.size() + 1);
    for (const Task& t : tasks) {
      out.push_back(t);
      if (t.kind != sim::TaskKind::Collective) continue;
      if (sim::TaskList::is_own_collective(t) && t.id == sim::TaskList::kOwnCollective)
        out.push_back(sim::TaskList::own_collective(1));
      else if (!sim::TaskList::is_own_collective(t) &&
               p.collectives[t.id].role == CollectiveRole::UpdatedParameterAllGather)
        out.push_back(Task::collective(expert_spec_of.at(t.id), t.rank));
    }
    tasks = std::move(out);
  });
  for (sim::TaskList* list : group.lists)
    if (list->is_shared() && list->own_collective_index() != sim::TaskList::kOwnCollective)
      list->set_own_collective(expert_spec_of.at(list->own_collective_index()), list->own_collective_rank(),
                               1);
}

}  // namespace

void shard_experts(StepProgram& p, const ExpertParallelOptions& ep) {
  if (ep.ep <= 1 || ep.expert_ops.empty() || p.dp <= 1) return;
  const bool sharded = std::ranges::any_of(p.collectives, [](const CollectiveSpec& c) {
    return c.role == CollectiveRole::GradientAllReduce && c.op == sim::CollectiveOp::ReduceScatter;
  });
  if (!sharded) return;
  // A gather made of experts alone keeps its one collective, which the split takes whole.
  const auto split = [](const ScatteredBytes& b) { return b.experts > 0 && b.experts < b.all; };
  const bool gathered = expert_replicas(p.dp, ep.ep) > 1;
  std::map<const sim::TaskList*, ScatteredBytes> bytes_of;  // by compute list
  std::map<std::uint32_t, std::uint32_t> expert_spec_of;
  std::vector<sim::TaskList*> lists;
  for (auto& gpu : p.gpus) {
    sim::StreamProgram* compute = stream_named(gpu, "compute");
    if (compute == nullptr) continue;
    const ScatteredBytes bytes = scattered_expert_bytes(p, gpu, ep.expert_ops);
    if (split(bytes))
      split_expert_gather(p, compute->tasks, bytes.experts, ep.expert_ops.front(), gathered, expert_spec_of);
    else if (bytes.experts > 0)
      for (const Task& t : compute->tasks)
        if (t.kind == sim::TaskKind::Collective &&
            p.collectives[t.id].role == CollectiveRole::UpdatedParameterAllGather)
          p.collectives[t.id].op_index = ep.expert_ops.front();
    bytes_of[&compute->tasks] = bytes;
    lists.push_back(&compute->tasks);
  }
  for (const SharedGroup& group : shared_groups(lists)) {
    // GPUs reading one compute list are replicas of one MP rank: their buckets, and bytes, alike.
    const ScatteredBytes bytes = bytes_of.at(group.lists[0]);
    for (const sim::TaskList* list : group.lists)
      if (bytes_of.at(list).all != bytes.all || bytes_of.at(list).experts != bytes.experts)
        throw InternalError("sharded data parallel: GPUs sharing a compute list scatter other bytes");
    if (split(bytes) && gathered) gather_experts_after(p, group, expert_spec_of);
    widen_expert_update(group, p, bytes, ep.ep);
  }
}

}  // namespace hybridsim::workloads

#include "workloads/program/pipeline_program.h"

#include <algorithm>
#include <string>

#include "sim/error.h"
#include "workloads/gpu/gpu.h"
#include "workloads/program/pipeline_layout.h"
#include "workloads/program/step_program.h"
#include "workloads/program/step_program_parts.h"

namespace hybridsim::workloads {

using sim::Task;
using step_parts::GradientCollective;
using step_parts::GradientCopy;
using namespace pipeline_parts;

namespace {

Task kernel_task(const Kernel& k, std::uint32_t label) {
  return Task::kernel(k.duration, label, k.idle_before, k.bound);
}

Task copy_task(sim::Time duration, std::uint32_t label) {
  return Task::kernel(duration, label, sim::Time::zero(), sim::KernelBound::Memory).fixed_work();
}

// Stage s's backward of chunk g for micro-batch j; after the chunk's last one, its gradients go
// to the data-parallel collectives (each after its copy into the flat buffer).
void add_chunk_backward(const Profile& profile, const Layout& l, int s, int g, int j, bool last,
                        std::uint32_t base, sim::StreamProgram& compute) {
  const auto su = static_cast<std::size_t>(s);
  const auto& ops = l.ops_of_chunk[static_cast<std::size_t>(g)];
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    const Op& op = profile.ops[*it];
    const auto first = l.labels.first_of_op[*it] + static_cast<std::uint32_t>(op.forward.size());
    for (std::uint32_t i = 0; i < op.backward.size(); ++i)
      compute.tasks.push_back(kernel_task(op.backward[i], l.label(j, first + i)));
    if (!last) continue;
    for (const std::size_t i : l.gradients_after[su][*it]) {
      if (!l.copies.empty()) compute.tasks.push_back(copy_task(l.copies[su][i].in, l.copies[su][i].in_label));
      compute.tasks.push_back(
          Task::record(base + l.first_gradient_event[su] + static_cast<std::uint32_t>(i)));
    }
  }
}

// Stage s's compute stream for the worker whose events start at `base`.
sim::StreamProgram stage_compute(const Profile& profile, const Layout& l, int s, std::uint32_t base) {
  const auto su = static_cast<std::size_t>(s);
  sim::StreamProgram compute{"compute", {}};
  for (std::size_t i = 0; i < l.schedule[su].size(); ++i) {
    const PipelineTask& t = l.schedule[su][i];
    const int g = t.chunk * l.x.p + s, j = t.micro_batch;
    if (!t.backward) {
      if (g > 0) compute.tasks.push_back(Task::wait(base + l.event(g - 1, j, ActivationReceived)));
      for (const std::uint32_t v : l.ops_of_chunk[static_cast<std::size_t>(g)]) {
        const Op& op = profile.ops[v];
        for (std::uint32_t k = 0; k < op.forward.size(); ++k)
          compute.tasks.push_back(kernel_task(op.forward[k], l.label(j, l.labels.first_of_op[v] + k)));
      }
      if (g + 1 < l.chunks) compute.tasks.push_back(Task::record(base + l.event(g, j, ForwardDone)));
      continue;
    }
    if (g + 1 < l.chunks) compute.tasks.push_back(Task::wait(base + l.event(g, j, GradientReceived)));
    add_chunk_backward(profile, l, s, g, j, i == l.last_backward[su][static_cast<std::size_t>(t.chunk)], base,
                       compute);
    if (g > 0) compute.tasks.push_back(Task::record(base + l.event(g - 1, j, GradientReady)));
  }
  const std::uint32_t done =
      base + l.first_gradient_event[su] + static_cast<std::uint32_t>(l.gradients[su].size());
  if (!l.gradients[su].empty()) compute.tasks.push_back(Task::wait(done));
  if (!l.copies.empty())
    for (const GradientCopy& c : l.copies[su]) compute.tasks.push_back(copy_task(c.out, c.out_label));
  const sim::Time idle = profile.optimizer.idle_before;
  if (l.optimizer[su] > sim::Time::zero() || idle > sim::Time::zero())
    compute.tasks.push_back(
        Task::kernel(l.optimizer[su], l.labels.optimizer, idle, sim::KernelBound::Memory).fixed_work());
  return compute;
}

// A transfer stage s starts: to `peer`, across boundary b, of micro-batch j; an activation or its
// gradient. In the order s's compute stream makes them ready.
struct Send {
  int peer = 0, b = 0, j = 0;
  bool gradient = false;
};
std::vector<Send> sends_of(const Layout& l, int s) {
  std::vector<Send> out;
  for (const PipelineTask& t : l.schedule[static_cast<std::size_t>(s)]) {
    const int g = t.chunk * l.x.p + s;
    if (!t.backward && g + 1 < l.chunks) out.push_back({(g + 1) % l.x.p, g, t.micro_batch, false});
    if (t.backward && g > 0) out.push_back({(g - 1) % l.x.p, g - 1, t.micro_batch, true});
  }
  return out;
}

// The event stage s's send stream to `peer` records after its last transfer.
std::uint32_t sends_done(const Layout& l, int s, int peer) {
  return l.sends_done_event[static_cast<std::size_t>(s)] + (peer == (s + 1) % l.x.p ? 0 : 1);
}

// Stage s's send stream to `peer` (or, receiving, its receive stream from `peer`: the peer's
// sends to s in the same order), for the worker whose events start at `base` and whose transfers
// start at collective `first`.
sim::StreamProgram transfer_stream(const Layout& l, int s, int peer, bool sending, std::uint32_t base,
                                   std::uint32_t first, int peer_gpu) {
  sim::StreamProgram stream{(sending ? "send→GPU" : "recv←GPU") + std::to_string(peer_gpu), {}};
  for (const Send& x : sends_of(l, sending ? s : peer)) {
    if (x.peer != (sending ? peer : s)) continue;
    const std::uint32_t c = first + l.transfer(x.b, x.j, x.gradient);
    if (sending) {
      stream.tasks.push_back(Task::wait(base + l.event(x.b, x.j, x.gradient ? GradientReady : ForwardDone)));
      stream.tasks.push_back(Task::collective(c, 0));
    } else {
      stream.tasks.push_back(Task::collective(c, 1));
      stream.tasks.push_back(Task::record(base + l.event(x.b, x.j, x.gradient ? GradientReceived
                                                                                : ActivationReceived)));
    }
  }
  if (sending && l.after_flush && !stream.tasks.empty() && !l.gradients[static_cast<std::size_t>(s)].empty())
    stream.tasks.push_back(Task::record(base + sends_done(l, s, peer)));
  return stream;
}

}  // namespace

namespace {

// The data-parallel collectives of every stage (over that stage of every worker), appended to
// out.collectives; their global indices [stage][i].
std::vector<std::vector<std::uint32_t>> add_stage_gradients(const Layout& l, const WorkerMapping& mapping,
                                                            StepProgram& out) {
  std::vector<std::vector<std::uint32_t>> index(l.gradients.size());
  for (std::size_t s = 0; s < l.gradients.size(); ++s)
    for (const GradientCollective& c : l.gradients[s]) {
      index[s].push_back(static_cast<std::uint32_t>(out.collectives.size()));
      const bool gather = c.role == CollectiveRole::GradientAllGather;
      out.collectives.push_back({c.role, gather ? sim::CollectiveOp::AllGather : sim::CollectiveOp::AllReduce,
                                 gather ? sim::Bytes::of(c.size.count() * mapping.dp) : c.size,
                                 mapping.dp_group(static_cast<int>(s)), c.trigger, c.bucket,
                                 static_cast<int>(s)});
    }
  return index;
}

// Worker w's point-to-point transfers, boundary by boundary and micro-batch by micro-batch (the
// order Layout::transfer numbers them): the chunk's last op's activation forward, its gradient back.
void add_worker_transfers(const Profile& profile, const Layout& l, const std::vector<int>& gpus,
                          StepProgram& out) {
  for (int b = 0; b + 1 < l.chunks; ++b) {
    const std::uint32_t op = l.ops_of_chunk[static_cast<std::size_t>(b)].back();
    const sim::Bytes bytes = profile.ops[op].activation_bytes;
    const int from = gpus[static_cast<std::size_t>(b % l.x.p)],
              to = gpus[static_cast<std::size_t>((b + 1) % l.x.p)];
    for (int j = 0; j < l.x.m; ++j) {
      out.collectives.push_back(
          {CollectiveRole::Activation, sim::CollectiveOp::Broadcast, bytes, {from, to}, op, -1, b % l.x.p});
      out.collectives.push_back({CollectiveRole::ActivationGradient, sim::CollectiveOp::Broadcast, bytes,
                                 {to, from}, op, -1, (b + 1) % l.x.p});
    }
  }
}

// Stage s's communication stream: each gradient collective once its gradients are ready, then
// the event that all are done.
sim::StreamProgram stage_communication(const Layout& l, int s, std::uint32_t base, std::uint32_t worker,
                                       const std::vector<std::uint32_t>& collective) {
  const auto su = static_cast<std::size_t>(s);
  const std::vector<Send> sends = sends_of(l, s);
  sim::StreamProgram comm{"communication", {}};
  // The gradients are reduced after the pipeline's flush, as Megatron-LM reduces them (Narayanan et
  // al. 2021): once the stage's last backward has made the last of them ready (every transfer to
  // the stage has arrived) and its last transfer has left. A stage's ring and its transfers never
  // share its NICs at once, so the ring folds over the replicas (sim/README.md, "Folding the step").
  for (int peer = 0; peer < l.x.p && l.after_flush; ++peer)
    if (peer != s && std::any_of(sends.begin(), sends.end(), [&](const Send& x) { return x.peer == peer; }))
      comm.tasks.push_back(Task::wait(base + sends_done(l, s, peer)));
  if (l.after_flush && !l.gradients[su].empty())
    comm.tasks.push_back(Task::wait(base + l.first_gradient_event[su] +
                                    static_cast<std::uint32_t>(l.gradients[su].size() - 1)));
  for (std::size_t i = 0; i < l.gradients[su].size(); ++i) {
    comm.tasks.push_back(Task::wait(base + l.first_gradient_event[su] + static_cast<std::uint32_t>(i)));
    comm.tasks.push_back(Task::collective(collective[i], worker));
  }
  comm.tasks.push_back(
      Task::record(base + l.first_gradient_event[su] + static_cast<std::uint32_t>(l.gradients[su].size())));
  return comm;
}

// Stage s's streams of the first worker (events from 0, transfers from its first), which every
// later worker's read shifted (sim::TaskList): each stream uses only its worker's own events and
// transfers, numbered alike from the worker's base and first transfer (Layout::event, transfer),
// so worker w's are the first's shifted by w's base and first. At 16,384 GPUs this spares a build
// and a copy of each GPU's tasks (most of the step's set-up before).
struct FirstStage {
  sim::StreamProgram compute;
  std::vector<sim::StreamProgram> transfers;  // sends, then receives, each by peer; empty: none
  std::vector<int> peer;                      // [transfer stream]: the peer stage
};

FirstStage first_stage(const Profile& profile, const Layout& l, int s, std::uint32_t first) {
  FirstStage out{stage_compute(profile, l, s, 0), {}, {}};
  for (const bool sending : {true, false})
    for (int peer = 0; peer < l.x.p; ++peer) {
      if (peer == s) continue;
      sim::StreamProgram stream = transfer_stream(l, s, peer, sending, 0, first, 0);
      if (stream.tasks.empty()) continue;
      out.transfers.push_back(std::move(stream));
      out.peer.push_back(peer);
    }
  return out;
}

// Stage s of a worker whose events start at `base` and whose transfers start `transfers` after
// the first worker's, on GPUs `gpus`: its streams, the first worker's shifted (communication aside).
void add_stage_streams(FirstStage& first, std::uint32_t base, std::uint32_t transfers,
                       const std::vector<int>& gpus, sim::StreamProgram communication,
                       sim::GpuProgram& prog) {
  prog.streams.push_back({first.compute.name, sim::TaskList::shifted_from(first.compute.tasks, base, 0)});
  if (!communication.tasks.empty()) prog.streams.push_back(std::move(communication));
  for (std::size_t i = 0; i < first.transfers.size(); ++i) {
    const std::string& name = first.transfers[i].name;
    prog.streams.push_back({name.substr(0, name.rfind("GPU") + 3) +
                                std::to_string(gpus[static_cast<std::size_t>(first.peer[i])]),
                            sim::TaskList::shifted_from(first.transfers[i].tasks, base, transfers)});
  }
}

}  // namespace

StepProgram build_pipeline_program(const Profile& profile, const WorkerMapping& mapping, int gpu_count,
                                   const StepOptions& options, ProgramBuildProgress* progress) {
  if (mapping.mp != options.pipeline.pp) throw InternalError("pipeline: the mapping's mp is not pp");
  const Layout l = lay_out(profile, options, mapping.dp);
  StepProgram out;
  out.dp = mapping.dp;
  out.mp = l.x.p;
  out.accumulation = l.x.m;
  out.global_batch = step_global_batch(profile, mapping, options);
  out.gpus.resize(static_cast<std::size_t>(gpu_count));
  out.worker_of_gpu.assign(static_cast<std::size_t>(gpu_count), -1);
  out.mp_rank_of_gpu.assign(static_cast<std::size_t>(gpu_count), -1);
  out.labels = l.labels.labels;
  const std::vector<std::vector<std::uint32_t>> gradient_index = add_stage_gradients(l, mapping, out);
  const Gpu* gpu = find_gpu(profile.meta.gpu);
  const auto first_transfer = static_cast<std::uint32_t>(out.collectives.size());
  std::vector<FirstStage> first;  // [stage]
  for (int s = 0; s < l.x.p; ++s) first.push_back(first_stage(profile, l, s, first_transfer));
  for (int w = 0; w < mapping.dp; ++w) {
    build_tick(progress, "the workers' streams", static_cast<std::uint64_t>(w),
               static_cast<std::uint64_t>(mapping.dp), "workers");
    const std::vector<int>& gpus = mapping.gpu_rank[static_cast<std::size_t>(w)];
    const auto base = static_cast<std::uint32_t>(w) * l.events_per_worker;
    const auto transfers = static_cast<std::uint32_t>(out.collectives.size()) - first_transfer;
    add_worker_transfers(profile, l, gpus, out);
    for (int s = 0; s < l.x.p; ++s) {
      const auto su = static_cast<std::size_t>(s);
      const auto g = static_cast<std::size_t>(gpus[su]);
      sim::GpuProgram& prog = out.gpus[g];
      out.worker_of_gpu[g] = w;
      out.mp_rank_of_gpu[g] = s;
      prog.compute_scale = gpu_compute_scale(options, g);
      if (gpu != nullptr) prog.resources = gpu_resources(*gpu);
      sim::StreamProgram communication;
      if (!l.gradients[su].empty())
        communication = stage_communication(l, s, base, static_cast<std::uint32_t>(w), gradient_index[su]);
      add_stage_streams(first[su], base, transfers, gpus, std::move(communication), prog);
    }
  }
  out.event_count = static_cast<std::uint32_t>(mapping.dp) * l.events_per_worker;
  apply_parallel_dimensions(out, profile, options, progress);
  return out;
}

}  // namespace hybridsim::workloads

#include "workloads/program/step_program.h"

#include <algorithm>

#include "sim/error.h"
#include "workloads/gpu/gpu.h"
#include "workloads/program/expert_parallel.h"
#include "workloads/program/step_program_parts.h"
#include "workloads/program/sharded_data_parallel.h"
#include "workloads/program/tensor_parallel.h"

namespace hybridsim::workloads {

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::Forward: return "forward";
    case Phase::Backward: return "backward";
    case Phase::Optimizer: return "optimizer";
    case Phase::GradientCopyIn: return "gradient-copy-in";
    case Phase::GradientCopyOut: return "gradient-copy-out";
  }
  return "?";
}

std::string_view ddp_name(Ddp ddp) { return ddp == Ddp::Apex ? "apex" : "torch"; }

Ddp ddp_by_name(std::string_view name) {
  if (name == "torch") return Ddp::Torch;
  if (name == "apex") return Ddp::Apex;
  throw InternalError("unknown DDP \"" + std::string(name) + "\"");
}

sim::Bytes apex_bucket_size(std::int64_t value_bytes) { return sim::Bytes::of(10'000'000 * value_bytes); }

int ddp_copy_passes(Ddp ddp) { return ddp == Ddp::Apex ? 3 : 2; }

bool is_gradient_copy(Phase phase) {
  return phase == Phase::GradientCopyIn || phase == Phase::GradientCopyOut;
}

namespace {

using namespace step_parts;

// The shared data-parallel collectives (one per gradient collective of each MP rank, over its DP
// group), appended to out.collectives; returns their global indices [mp rank][i].
std::vector<std::vector<std::uint32_t>> add_gradient_collectives(const StepLayout& layout,
                                                                 const WorkerMapping& mapping,
                                                                 StepProgram& out) {
  std::vector<std::vector<std::uint32_t>> index(static_cast<std::size_t>(layout.mp));
  for (int k = 0; k < layout.mp; ++k)
    for (const GradientCollective& c : layout.gradients[static_cast<std::size_t>(k)]) {
      index[static_cast<std::size_t>(k)].push_back(static_cast<std::uint32_t>(out.collectives.size()));
      CollectiveSpec spec;
      spec.role = c.role;
      spec.members = mapping.dp_group(k);
      spec.op_index = c.trigger;
      spec.bucket = c.bucket;
      spec.mp_rank = k;
      if (c.role == CollectiveRole::GradientAllReduce) {
        spec.op = sim::CollectiveOp::AllReduce;
        spec.size = c.size;
      } else {
        spec.op = sim::CollectiveOp::AllGather;  // every worker's rows end up on every worker
        spec.size = sim::Bytes::of(c.size.count() * layout.dp);
      }
      out.collectives.push_back(std::move(spec));
    }
  return index;
}

// One worker's point-to-point transfers (an activation and its gradient per edge), appended to
// out.collectives; their global indices go to `activation` and `gradient`, by edge.
void add_transfers(const Profile& profile, const StepLayout& layout, const std::vector<int>& gpus,
                   StepProgram& out, std::vector<std::uint32_t>& activation,
                   std::vector<std::uint32_t>& gradient) {
  activation.resize(layout.edges.edges.size());
  gradient.resize(layout.edges.edges.size());
  for (std::size_t p = 0; p < layout.edges.edges.size(); ++p) {
    const MpEdge& e = layout.edges.edges[p];
    const sim::Bytes bytes = profile.ops[e.op].activation_bytes;
    const int from = gpus[static_cast<std::size_t>(e.from)], to = gpus[static_cast<std::size_t>(e.to)];
    activation[p] = static_cast<std::uint32_t>(out.collectives.size());
    out.collectives.push_back(
        {CollectiveRole::Activation, sim::CollectiveOp::Broadcast, bytes, {from, to}, e.op, -1, e.from});
    gradient[p] = static_cast<std::uint32_t>(out.collectives.size());
    out.collectives.push_back({CollectiveRole::ActivationGradient,
                               sim::CollectiveOp::Broadcast,
                               bytes,
                               {to, from},
                               e.op,
                               -1,
                               e.to});
  }
}

// MP rank k's compute stream for a worker whose events start at `base`, from the one built for
// the first worker (whose events start at 0): the same tasks, its events shifted, sharing the first
// worker's list (sim::TaskList). Exact, since compute_stream uses only the worker's own events,
// which allocate_worker_events numbers alike from the worker's base; and at 16,384 GPUs it spares
// both the build and a copy of the tasks per GPU (most of the step's memory before).
sim::StreamProgram shifted_compute_stream(sim::StreamProgram& first, std::uint32_t base) {
  return {first.name, sim::TaskList::shifted_from(first.tasks, base, 0)};
}

// A send or receive stream of a later worker, from the first worker's: the same tasks, its events
// shifted by `base` and its transfers by `transfers` (each worker appends as many, in the same
// order: add_transfers), named after its own peer GPU. Exact for the same reason as the compute
// streams', and it spares 16,384 GPUs the edge lookups.
sim::StreamProgram shifted_transfer_stream(sim::StreamProgram& first, std::uint32_t base,
                                           std::uint32_t transfers, int peer_gpu) {
  return {first.name.substr(0, first.name.rfind("GPU") + 3) + std::to_string(peer_gpu),
          sim::TaskList::shifted_from(first.tasks, base, transfers)};
}

// The first worker's send and receive streams of one MP rank, and the MP rank of each one's peer.
struct FirstTransfers {
  std::vector<sim::StreamProgram> streams;
  std::vector<int> peer;
};

FirstTransfers first_transfers(std::vector<sim::StreamProgram> streams, const StepProgram& out,
                               const std::vector<int>& gpus, int k) {
  FirstTransfers f;
  for (const sim::StreamProgram& stream : streams) {
    const auto c = std::find_if(stream.tasks.begin(), stream.tasks.end(),
                                [](const sim::Task& t) { return t.kind == sim::TaskKind::Collective; });
    if (c == stream.tasks.end()) throw InternalError("a transfer stream without a transfer");
    const std::vector<int>& members = out.collectives[(*c).id].members;
    const int peer_gpu = members[0] == gpus[static_cast<std::size_t>(k)] ? members[1] : members[0];
    f.peer.push_back(static_cast<int>(std::find(gpus.begin(), gpus.end(), peer_gpu) - gpus.begin()));
  }
  f.streams = std::move(streams);
  return f;
}

}  // namespace

double gpu_compute_scale(const StepOptions& options, std::size_t gpu) {
  return options.compute_scale *
         (gpu < options.gpu_compute_scale.size() ? options.gpu_compute_scale[gpu] : 1.0);
}

std::int64_t step_global_batch(const Profile& profile, const WorkerMapping& mapping,
                               const StepOptions& options) {
  return profile.meta.batch_per_gpu * (mapping.dp / std::max(options.tp, 1)) * options.accumulation;
}

StepProgram build_step_program(const Profile& profile, const MpPlacement& placement,
                               const WorkerMapping& mapping, int gpu_count,
                               const StepOptions& options, ProgramBuildProgress* progress) {
  if (placement.mp != mapping.mp || placement.gpu_of_op.size() != profile.ops.size())
    throw InternalError("placement does not match the mapping's mp or the profile's ops");
  const StepLayout layout = lay_out_step(profile, placement, mapping.dp, sharded_layout_options(options));

  StepProgram out;
  out.dp = mapping.dp;
  out.mp = mapping.mp;
  out.accumulation = layout.micro_batches;
  out.global_batch = step_global_batch(profile, mapping, options);
  out.gpus.resize(static_cast<std::size_t>(gpu_count));
  out.worker_of_gpu.assign(static_cast<std::size_t>(gpu_count), -1);
  out.mp_rank_of_gpu.assign(static_cast<std::size_t>(gpu_count), -1);
  out.labels = layout.labels.labels;
  const std::vector<std::vector<std::uint32_t>> gradient_index =
      add_gradient_collectives(layout, mapping, out);

  const Gpu* gpu = find_gpu(profile.meta.gpu);
  std::uint32_t next_event = 0;
  std::vector<std::uint32_t> activation, gradient;
  std::vector<sim::StreamProgram> first_compute;  // [mp rank]: the first worker's
  std::vector<FirstTransfers> first_send, first_receive;  // the same
  std::uint32_t first_transfer = 0;
  for (int w = 0; w < mapping.dp; ++w) {
    build_tick(progress, "the workers' streams", static_cast<std::uint64_t>(w),
               static_cast<std::uint64_t>(mapping.dp), "workers");
    const std::vector<int>& gpus = mapping.gpu_rank[static_cast<std::size_t>(w)];
    const std::uint32_t base = next_event;
    const WorkerEvents events = allocate_worker_events(layout, next_event);
    if (w == 0) first_transfer = static_cast<std::uint32_t>(out.collectives.size());
    const auto transfers = static_cast<std::uint32_t>(out.collectives.size()) - first_transfer;
    add_transfers(profile, layout, gpus, out, activation, gradient);
    for (int k = 0; k < mapping.mp; ++k) {
      const auto g = static_cast<std::size_t>(gpus[static_cast<std::size_t>(k)]);
      sim::GpuProgram& prog = out.gpus[g];
      out.worker_of_gpu[g] = w;
      out.mp_rank_of_gpu[g] = k;
      prog.compute_scale = gpu_compute_scale(options, g);
      if (gpu != nullptr) prog.resources = gpu_resources(*gpu);
      if (w == 0) {
        first_compute.push_back(compute_stream(profile, layout, events, k));
        prog.streams.push_back(shifted_compute_stream(first_compute.back(), 0));
      } else {
        prog.streams.push_back(shifted_compute_stream(first_compute[static_cast<std::size_t>(k)], base));
      }
      if (auto comm = communication_stream(layout, events, k, static_cast<std::uint32_t>(w),
                                           gradient_index[static_cast<std::size_t>(k)]))
        prog.streams.push_back(std::move(*comm));
      if (w == 0) {
        first_send.push_back(
            first_transfers(send_streams(layout, events, k, activation, gradient, gpus), out, gpus, k));
        first_receive.push_back(
            first_transfers(receive_streams(layout, events, k, activation, gradient, gpus), out, gpus, k));
      }
      for (FirstTransfers* f :
           {&first_send[static_cast<std::size_t>(k)], &first_receive[static_cast<std::size_t>(k)]})
        for (std::size_t i = 0; i < f->streams.size(); ++i)
          prog.streams.push_back(shifted_transfer_stream(f->streams[i], base, transfers,
                                                         gpus[static_cast<std::size_t>(f->peer[i])]));
    }
  }
  out.event_count = next_event;
  apply_parallel_dimensions(out, profile, options, progress);
  return out;
}

void apply_parallel_dimensions(StepProgram& program, const Profile& profile, const StepOptions& options,
                               ProgramBuildProgress* progress) {
  if (options.tp > 1)
    apply_tensor_parallel(program, options.tp_syncs, options.tp, options.tp_gradients, progress);
  if (options.zero > 0) apply_sharded_data_parallel(program, profile, options.zero, options.ep);
  if (options.ep.ep > 1) apply_expert_parallel(program, options.ep);
}

}  // namespace hybridsim::workloads

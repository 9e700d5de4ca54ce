#include "scenarios/loader/resolve.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "scenarios/loader/ignored_keys.h"
#include "scenarios/loader/resolve_pipeline.h"
#include "scenarios/loader/resolve_transformer.h"
#include "scenarios/loader/transformer_layout_text.h"

#include "sim/error.h"
#include "topology/preset_registry.h"
#include "topology/yaml_loader.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/gpu/gpu.h"
#include "workloads/memory/memory_model.h"
#include "workloads/profile/profile_io.h"
#include "workloads/program/sharded_data_parallel.h"
#include "workloads/program/step_program.h"

namespace hybridsim::scenarios {
namespace {

// Runs `step`; an InputError from it is rethrown prefixed with the scenario location of `path`.
template <class F>
auto located(const Scenario& s, std::string_view path, F&& step) -> decltype(step()) {
  try {
    return step();
  } catch (const InputError& e) {
    throw InputError(location_of(s, path) + ": " + std::string(path) + ": " + e.what());
  }
}


sim::Time scale_time(sim::Time t, std::int64_t num, std::int64_t den) {
  const __int128 v = (static_cast<__int128>(t.ps()) * num + den / 2) / den;
  if (v > std::numeric_limits<std::int64_t>::max())
    throw InputError("a kernel of " + sim::format_time(t) + " scaled by " + std::to_string(num) + "/" +
                     std::to_string(den) + " overflows");
  return sim::Time::ps(static_cast<std::int64_t>(v));
}

// A TP group on GPUs of more than one machine (tp 16 on DGX A100s, tp 8 on 4-GPU servers): its
// collectives cross the network every layer, which the layout line did not say (tp's help promised
// "one machine's NVLink"); "" where every group is on one machine, as the default mapping puts it.
std::string tp_groups_spanning_machines(const topology::Topology& topology, const ParallelismSettings& p,
                                        const workloads::WorkerMapping& mapping) {
  const auto machine = [&](int gpu) { return topology.device(topology.gpu(gpu)).node.value_or(0); };
  int spanning = 0, machines = 1;
  for (std::size_t first = 0; first < mapping.gpu_rank.size(); first += static_cast<std::size_t>(p.tp))
    for (std::size_t stage = 0; stage < mapping.gpu_rank[first].size(); ++stage) {
      std::set<int> on;
      for (std::size_t r = first; r < first + static_cast<std::size_t>(p.tp); ++r)
        on.insert(machine(mapping.gpu_rank[r][stage]));
      spanning += on.size() > 1;
      machines = std::max(machines, static_cast<int>(on.size()));
    }
  if (spanning == 0) return "";
  int per_machine = 0;
  for (std::size_t g = 0; g < topology.gpus().size() && machine(static_cast<int>(g)) == machine(0); ++g)
    ++per_machine;
  return "; " + std::to_string(spanning) + (spanning == 1 ? " TP group spans" : " TP groups span") +
         " up to " + std::to_string(machines) + " machines (tp " + std::to_string(p.tp) +
         (p.tp > per_machine ? " is more than" : " does not divide") + " a machine's " +
         std::to_string(per_machine) + " GPUs): " + (spanning == 1 ? "its" : "their") +
         " collectives cross the network";
}

}  // namespace

workloads::Profile scale_profile_batch(const workloads::Profile& profile, std::int64_t batch) {
  const std::int64_t old = profile.meta.batch_per_gpu;
  if (batch < 1) throw InputError("batch per worker must be at least 1, got " + std::to_string(batch));
  if (old < 1) throw InputError("profile " + profile.meta.network + " has no batch to scale from");
  if (batch == old) return profile;
  workloads::Profile p = profile;
  for (auto& op : p.ops) {
    for (auto& k : op.forward) k.duration = scale_time(k.duration, batch, old);
    for (auto& k : op.backward) k.duration = scale_time(k.duration, batch, old);
    const __int128 bytes = (static_cast<__int128>(op.activation_bytes.count()) * batch + old / 2) / old;
    if (bytes > std::numeric_limits<std::int64_t>::max())
      throw InputError("op " + op.name + ": activation size overflows at batch " + std::to_string(batch));
    op.activation_bytes = sim::Bytes::of(static_cast<std::int64_t>(bytes));
  }
  const __int128 units = (static_cast<__int128>(p.meta.units_per_step) * batch + old / 2) / old;
  p.meta.units_per_step = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::min<__int128>(units, std::numeric_limits<std::int64_t>::max())));
  p.meta.batch_per_gpu = batch;
  p.meta.notes += (p.meta.notes.empty() ? "" : " ") + std::string("Scaled by hybridsim from batch ") +
                  std::to_string(old) + " to " + std::to_string(batch) +
                  " (kernel times and activations linear in the batch).";
  return p;
}

topology::Topology build_topology(const Scenario& s, sim::WorkProgress* progress,
                                  std::vector<std::string>* notes) {
  const ClusterSettings& c = s.cluster;
  if (!c.topology.empty())
    return located(s, "cluster.topology",
                   [&] { return topology::load_topology_yaml(input_path(s, c.topology).string(), notes); });
  return located(s, "cluster", [&] { return topology::build_cluster(c, progress); });
}

workloads::Profile load_workload_profile(const Scenario& s) {
  const WorkloadSettings& w = s.workload;
  const workloads::GpuChoice& choice = w.gpu_choice;
  workloads::Profile p;
  if (is_transformer(s)) {
    if (w.batch_per_worker)
      throw InputError(location_of(s, "workload.batch_per_worker") +
                       ": workload.batch_per_worker: a transformer's batch is training.micro_batch");
    return resolve_transformer(s).step.profile;
  }
  refuse_transformer_keys(s);
  if (s.training.micro_batch != 1)
    throw InputError(location_of(s, "training.micro_batch") +
                     ": training.micro_batch: transformers only; a 2017 network's batch is "
                     "workload.batch_per_worker");
  if (w.profile.empty()) {
    // gpu auto: the preset's GPU (a custom topology file names none).
    const std::string cluster_gpu = s.cluster.topology.empty()
                                        ? std::string(topology::preset_by_name(s.cluster.preset).gpu)
                                        : std::string();
    const auto options =
        located(s, "workload.precision", [&] { return workloads::builtin_options(choice, cluster_gpu); });
    p = located(s, "workload.network", [&] { return workloads::builtin_profile(w.network, options); });
  } else {
    p = located(s, "workload.profile",
                [&] { return workloads::load_profile(input_path(s, w.profile).string()); });
    if (choice.gpu)
      if (const auto problem = workloads::gpu_mismatch(p, *choice.gpu))
        throw InputError(location_of(s, "workload.gpu") + ": workload.gpu: " + problem->problem +
                         "; expected " + problem->expected);
    if (choice.precision)
      if (const auto problem = workloads::precision_mismatch(p, *choice.precision))
        throw InputError(location_of(s, "workload.precision") + ": workload.precision: " + problem->problem +
                         "; expected " + problem->expected);
  }
  if (w.batch_per_worker)
    p = located(s, "workload.batch_per_worker", [&] { return scale_profile_batch(p, *w.batch_per_worker); });
  return p;
}

// A partitioner's placement (parallelism.placement auto, layers, stacks or branches).
workloads::MpPlacement partitioned(const Scenario& s, const workloads::Profile& profile) {
  const int mp = s.parallelism.mp;
  const PlacementSettings& pl = s.parallelism.placement;
  switch (pl.kind) {
    case PlacementSettings::Kind::Auto:
      return located(s, "parallelism.placement", [&] {
        return mp == 1 ? workloads::place_all_on_first(profile, 1)
                       : workloads::partition(profile, mp, workloads::default_partitioner(profile));
      });
    case PlacementSettings::Kind::Layers:
      return located(s, "parallelism.placement",
                     [&] { return workloads::partition(profile, mp, workloads::Partitioner::Layers); });
    case PlacementSettings::Kind::Stacks:
      return located(s, "parallelism.placement",
                     [&] { return workloads::partition(profile, mp, workloads::Partitioner::Stacks); });
    case PlacementSettings::Kind::Branches:
      return located(s, "parallelism.placement",
                     [&] { return workloads::partition(profile, mp, workloads::Partitioner::Branches); });
    case PlacementSettings::Kind::Rules: break;
  }
  throw InternalError("partitioned: placement rules are not a partitioner");
}

// A partitioner that gives a GPU of the worker no op (an mp larger than the profile's layers or
// stacks) would leave it idle without a word: refused at mp. (Placement rules may do it on purpose.)
workloads::MpPlacement every_gpu_used(const Scenario& s, workloads::MpPlacement placement,
                                      const workloads::Profile& profile) {
  if (placement.uses_every_gpu()) return placement;
  throw InputError(location_of(s, "parallelism") + ": parallelism.mp: " + std::to_string(placement.mp) +
                   " GPUs per worker, but the placement of " + profile.meta.network + " (" +
                   std::to_string(profile.ops.size()) + " ops) " + placement.idle_gpus_text() +
                   "; expected mp <= " + std::to_string(placement.gpus_with_ops()) +
                   ", or placement rules that say where each op goes");
}

workloads::MpPlacement build_placement(const Scenario& s, const workloads::Profile& profile) {
  const int mp = s.parallelism.mp;
  const PlacementSettings& pl = s.parallelism.placement;
  if (pl.kind != PlacementSettings::Kind::Rules) return every_gpu_used(s, partitioned(s, profile), profile);
  std::vector<workloads::PlacementRule> rules;
  for (std::size_t i = 0; i < pl.rules.size(); ++i) {
    const std::string path = "parallelism.placement[" + std::to_string(i) + "]";
    rules.push_back({pl.rules[i].match, pl.rules[i].gpu, location_of(s, path) + ": " + path + ": "});
  }
  try {
    return workloads::place_by_rules(profile, mp, rules);
  } catch (const InputError& e) {
    const std::string message = e.what();
    for (const auto& r : rules)
      if (message.starts_with(r.where)) throw;  // already located at its rule
    throw InputError(location_of(s, "parallelism.placement") + ": parallelism.placement: " + message);
  }
}

// A transformer's model is split by tp and pp, which its memory model divides by; mp's op placement
// (the 2017 networks' model parallelism) ran a transformer's ops over mp GPUs while each GPU's memory
// was counted whole (Llama 3 8B at dp 4 x mp 2: 28.2 GiB a GPU, dp 8's figure), with exit 0.
void refuse_transformer_mp(const Scenario& s) {
  if (s.parallelism.mp == 1 || !is_transformer(s)) return;
  throw InputError(location_of(s, "parallelism.mp") + ": parallelism.mp: mp " +
                   std::to_string(s.parallelism.mp) +
                   " places a 2017 network's ops over a worker's GPUs, but " + s.workload.network +
                   " is a transformer, whose model parallelism is parallelism.tp and pp (its memory "
                   "is counted by them); expected mp 1, with tp or pp");
}

workloads::WorkerMapping build_mapping(const Scenario& s, const topology::Topology& topology) {
  // Tensor parallelism: dp × tp workers, each TP group tp consecutive ones (tensor_parallel.h).
  const int dp = s.parallelism.dp * s.parallelism.tp, mp = s.parallelism.mp;
  const auto gpus = static_cast<long long>(topology.gpus().size());
  if (s.parallelism.tp > 1 && static_cast<long long>(dp) > gpus)
    throw InputError(location_of(s, "parallelism.tp") + ": parallelism: dp × tp = " +
                     std::to_string(s.parallelism.dp) + " × " + std::to_string(s.parallelism.tp) + " = " +
                     std::to_string(dp) + " GPUs, but the cluster " + topology.name() + " has " +
                     std::to_string(gpus) + "; expected dp × tp <= " + std::to_string(gpus));
  // Located at mp when mp alone is too large, else at dp.
  const char* culprit = mp > gpus ? "parallelism.mp" : "parallelism.dp";
  if (static_cast<long long>(dp) * mp > gpus)
    throw InputError(location_of(s, culprit) + ": parallelism: dp × mp = " + std::to_string(dp) + " × " +
                     std::to_string(mp) + " = " + std::to_string(static_cast<long long>(dp) * mp) +
                     " GPUs, but the cluster " + topology.name() + " has " + std::to_string(gpus) +
                     "; expected dp × mp <= " + std::to_string(gpus));
  if (s.parallelism.mapping) {
    // A GPU outside the cluster is reported at the element that names it.
    const auto& rows = *s.parallelism.mapping;
    for (std::size_t w = 0; w < rows.size(); ++w)
      for (std::size_t k = 0; k < rows[w].size(); ++k)
        if (rows[w][k] >= gpus) {
          const std::string path =
              "parallelism.mapping[" + std::to_string(w) + "][" + std::to_string(k) + "]";
          throw InputError(location_of(s, path) + ": " + path + ": GPU " + std::to_string(rows[w][k]) +
                           " is outside the cluster " + topology.name() + "; expected a GPU rank from 0 to " +
                           std::to_string(gpus - 1));
        }
    // A transformer's row is a TP group: worker q x tp + r (TP rank r of replica q) gets its column r.
    std::vector<std::vector<int>> workers;
    for (const auto& row : rows)
      for (std::size_t r = 0; r < row.size(); r += static_cast<std::size_t>(mp))
        workers.emplace_back(row.begin() + static_cast<std::ptrdiff_t>(r),
                             row.begin() + static_cast<std::ptrdiff_t>(r) + mp);
    return located(s, "parallelism.mapping",
                   [&] { return workloads::custom_mapping(topology, dp, mp, std::move(workers)); });
  }
  return located(s, "parallelism", [&] { return workloads::default_mapping(topology, dp, mp); });
}

std::optional<workloads::MemoryCapacity> gpu_memory_capacity(const Scenario& s,
                                                             const workloads::Profile& profile) {
  if (s.cluster.gpu_memory)
    return workloads::MemoryCapacity{*s.cluster.gpu_memory, "cluster.gpu_memory",
                                     workloads::MemoryCapacity::Origin::Scenario};
  if (auto named = workloads::workload_gpu_capacity(s.cluster.preset, s.workload.gpu_choice.gpu
                                                                          ? std::string_view(profile.meta.gpu)
                                                                          : std::string_view()))
    return named;
  return workloads::gpu_capacity(profile.meta.gpu, "the profile");
}

// What data parallelism runs around the all-reduce: micro-batches per step from
// training.global_batch, the DDP's copy passes and default bucket, when gradients are exchanged.
void apply_training_loop(const Scenario& s, const workloads::Profile& profile, int dp,
                         workloads::StepOptions& step) {
  const CommunicationSettings& c = s.communication;
  // gradient_copies: off is PyTorch DDP's gradient_as_bucket_view; apex DDP has no such view and
  // always flattens into its buckets and copies back. Off under apex ran with no copies at all
  // (GNMT dp 8: 302 ms against apex's 308 ms), a DDP neither framework is: refused, naming both.
  if (c.ddp == workloads::Ddp::Apex && !c.gradient_copies)
    throw InputError(location_of(s, "communication.gradient_copies") +
                     ": communication.gradient_copies: off makes the gradients the buckets (PyTorch DDP's "
                     "gradient_as_bucket_view), but communication.ddp is apex, whose DDP always flattens the "
                     "gradients into its buckets and copies them back (3 passes); expected on, or "
                     "communication.ddp: torch");
  step.copy_passes = workloads::ddp_copy_passes(c.ddp);
  if (c.ddp == workloads::Ddp::Apex && !s.provenance.where.contains("communication.bucket_size"))
    // 10 M elements of the gradients' type, by the rule the memory model counts them with: "fp16" and
    // "bf16" (what `import kineto` writes for a half-precision trace) got 4-byte elements here, and
    // half as many buckets as the same file marked "amp".
    step.bucket_size = workloads::apex_bucket_size(workloads::parameter_rule(profile).bytes_per_parameter);
  step.exchange_every_micro_batch = c.exchange_every_micro_batch;
  if (!s.training.global_batch) return;
  const std::int64_t per_step = profile.meta.batch_per_gpu * dp;
  const std::int64_t global = *s.training.global_batch;
  if (global % per_step != 0)
    throw InputError(location_of(s, "training.global_batch") + ": training.global_batch: " +
                     std::to_string(global) + " is not a multiple of batch per worker x dp = " +
                     std::to_string(profile.meta.batch_per_gpu) + " x " + std::to_string(dp) +
                     "; expected a multiple of " + std::to_string(per_step));
  step.accumulation = static_cast<int>(global / per_step);
  if (step.accumulation > 1 && s.parallelism.mp > 1)
    throw InputError(location_of(s, "training.global_batch") +
                     ": training.global_batch: gradient accumulation is modelled only with mp = 1");
}

// parallelism.tp, sequence_parallel and ep: only for transformers (whose mp is 1); the TP and EP
// collectives of the generated step (a mixture of experts' expert ops: their own buckets).
void apply_tensor_parallel_settings(const Scenario& s, workloads::StepOptions& step) {
  const bool transformer = is_transformer(s);
  if (!transformer && s.parallelism.tp > 1)
    throw InputError(location_of(s, "parallelism.tp") + ": parallelism.tp: tensor parallelism needs a "
                     "transformer network (workload.network: llama3-8b, ..., or transformer)");
  // Sequence parallelism splits the norms' and dropouts' sequence over the TP group: with tp 1 there
  // is no group, so it would change nothing; refused, naming both keys, as the planner leaves it out
  // (analysis/plan llm_layout_problem) rather than ignored.
  if (s.parallelism.sequence_parallel && (!transformer || s.parallelism.tp == 1))
    throw InputError(location_of(s, "parallelism.sequence_parallel") +
                     ": parallelism.sequence_parallel: true splits the sequence over the tensor-parallel "
                     "group, but " +
                     (transformer ? "parallelism.tp is 1: there is none; expected it left out (false), "
                                    "or parallelism.tp > 1"
                                  : "tensor parallelism needs a transformer network (workload.network: "
                                    "llama3-8b, ..., or transformer); expected it left out (false)"));
  if (!transformer && s.parallelism.ep > 1)
    throw InputError(location_of(s, "parallelism.ep") +
                     ": parallelism.ep: expert parallelism needs a "
                     "mixture-of-experts transformer (workload.network: mixtral-8x7b, or model.experts)");
  if (!transformer || (s.parallelism.tp == 1 && s.parallelism.ep == 1)) return;
  const TransformerResolution t = resolve_transformer(s);
  step.tp = s.parallelism.tp;
  step.tp_syncs = t.step.syncs;
  step.tp_gradients = t.step.tp_gradients;
  step.ep = {.ep = s.parallelism.ep, .syncs = t.step.ep_syncs, .expert_ops = t.step.expert_ops};
}

// parallelism.zero: transformers only, over dp > 1 replicas. With dp 1 there is nothing to shard
// over; it is refused rather than ignored, since the stage would promise memory it does not save.
void apply_sharding_settings(const Scenario& s, workloads::StepOptions& step) {
  const int stage = zero_stage(s);
  if (stage == 0) return;
  const std::string where = location_of(s, "parallelism.zero") + ": parallelism.zero: ";
  if (!is_transformer(s))
    throw InputError(where + "ZeRO is modelled for transformers only; expected a transformer network "
                     "(workload.network: llama2-7b, ..., or transformer) or zero 0");
  if (s.parallelism.dp == 1)
    throw InputError(where + "zero " + s.parallelism.zero + " shards over data-parallel replicas, but dp is "
                     "1: nothing to shard; expected dp > 1 or zero 0");
  // ZeRO-2 and -3 with a pipeline: the rule is workloads::zero_runs_with_pipeline's; ZeRO-1 the
  // pipeline's step simulates per stage (workloads/program/pipeline_program.h).
  if (!workloads::zero_runs_with_pipeline(stage, s.parallelism.pp))
    throw InputError(
        where + "zero " + s.parallelism.zero + " with parallelism.pp " + std::to_string(s.parallelism.pp) +
        " (" + location_of(s, "parallelism.pp") +
        "): a pipeline holds each stage's gradients whole until its flush, so ZeRO-2 and "
        "ZeRO-3 would promise memory no pipeline saves (DeepSpeed's pipeline engine refuses "
        "them; Megatron-LM's pipelines shard the optimizer only); expected zero 0 or 1, or pp 1");
  // apex's DistributedDataParallel all-reduces whole gradients; a ZeRO stage runs DeepSpeed's, FSDP's or
  // Megatron-LM's own engine, which no apex DDP wraps. The pair ran apex's 3 copy passes around the
  // shards' reduce-scatters with exit 0.
  if (s.communication.ddp == workloads::Ddp::Apex && s.provenance.where.contains("communication.ddp"))
    throw InputError(location_of(s, "communication.ddp") +
                     ": communication.ddp: apex is apex's DistributedDataParallel, which all-reduces whole "
                     "gradients, but parallelism.zero " +
                     s.parallelism.zero + " (" + location_of(s, "parallelism.zero") +
                     ") shards them in DeepSpeed's, FSDP's or Megatron-LM's own engine, which no apex DDP "
                     "wraps; expected it left out (torch), or zero 0");
  // ZeRO-3 reduce-scatters each op's gradients on their own after its backward (FSDP's per-module
  // flat parameters; sharded_layout_options), so a written bucket size sized nothing: 25 MB, 1 GB and
  // 4 GB ran one step (610 ms, 48 collectives) with exit 0.
  if (stage == 3 && s.provenance.where.contains("communication.bucket_size"))
    throw InputError(location_of(s, "communication.bucket_size") +
                     ": communication.bucket_size: packs gradients into buckets, but parallelism.zero " +
                     s.parallelism.zero + " (" + location_of(s, "parallelism.zero") +
                     ") reduce-scatters each op's gradients on their own, after its backward (FSDP's "
                     "per-module flat parameters); expected it left out, or zero 0, 1 or 2");
  if (stage >= 2 && !s.communication.exchange_every_micro_batch &&
      s.provenance.where.contains("communication.exchange"))
    throw InputError(
        location_of(s, "communication.exchange") + ": communication.exchange: zero " + s.parallelism.zero +
        " reduce-scatters every micro-batch's gradients into the shards "
        "(DeepSpeed refuses no_sync from stage 2 on); expected every-micro-batch, or zero 0 or 1");
  step.zero = stage;
}

workloads::StepConfig resolve_step_config(const Scenario& s, const topology::Topology& topology,
                                          const workloads::Profile& profile) {
  const bool pipeline = s.parallelism.pp > 1;
  refuse_transformer_mp(s);
  workloads::WorkerMapping mapping = pipeline ? pipeline_mapping(s, topology) : build_mapping(s, topology);
  workloads::MpPlacement placement = build_placement(s, profile);
  const CommunicationSettings& c = s.communication;
  workloads::StepOptions step;
  step.bucket_size = c.bucket_size;
  // A profile's recorded all-reduce buckets (imported traces) replay as recorded unless the
  // scenario (or --set, or a sweep) writes communication.bucket_size.
  step.recorded_buckets = !s.provenance.where.contains("communication.bucket_size");
  step.compute_scale = 1.0 / s.workload.compute_speed;
  step.gradient_copies = c.gradient_copies;
  // A replica's tp GPUs (and a pipeline's stages) share its micro-batches: accumulation counts
  // replicas, training.global_batch / (dp × micro_batch).
  apply_training_loop(s, profile, mapping.dp / s.parallelism.tp, step);
  refuse_exchange_without_accumulation(s, step.accumulation);
  refuse_exchange_every_micro_batch_where_once(s, step.accumulation);
  check_variability(s, profile);
  apply_tensor_parallel_settings(s, step);
  apply_sharding_settings(s, step);
  apply_pipeline_settings(s, profile, step, placement);
  if (is_transformer(s) && !s.parallelism.mapping) {  // a mapping written says itself
    TransformerLayoutText text =
        transformer_layout_text(s.parallelism.dp, s.parallelism.tp, s.parallelism.pp);
    placement.description = std::move(text.placement);
    mapping.description =
        std::move(text.mapping) + tp_groups_spanning_machines(topology, s.parallelism, mapping);
  }
  const auto gpus = static_cast<int>(topology.gpus().size());
  for (std::size_t i = 0; i < s.workload.gpu_speeds.size(); ++i) {
    const GpuSpeedSetting& g = s.workload.gpu_speeds[i];
    const std::string path = "workload.gpu_speeds[" + std::to_string(i) + "].gpu";
    if (g.gpu >= gpus)
      throw InputError(location_of(s, path) + ": " + path + ": GPU " + std::to_string(g.gpu) +
                       " is outside the cluster's GPUs 0.." + std::to_string(gpus - 1) +
                       "; expected a global GPU rank below " + std::to_string(gpus));
    refuse_idle_gpu_speed(s, mapping, g.gpu, path);
    step.gpu_compute_scale.resize(static_cast<std::size_t>(gpus), 1.0);
    step.gpu_compute_scale[static_cast<std::size_t>(g.gpu)] = 1.0 / g.speed;
  }
  return workloads::StepConfig{
      .placement = std::move(placement),
      .mapping = std::move(mapping),
      .step = step,
      .comm = {.algorithm = c.algorithm,
               .protocol = c.protocol,
               .channels = c.channels,
               .pcie_only = c.pcie_only},
      .collective = {.message_size = c.message_size,
                     .reduction_bandwidth = c.reduction_bandwidth.value_or(
                         workloads::reduction_bandwidth(workloads::find_gpu(profile.meta.gpu))),
                     .fast_path = c.fast_path},
      .switching = c.switching,
      .executor = {.contention = c.compute_contention},
      .variability = s.variability,
      .limits = s.simulation,
  };
}

// communication.protocol: ll128 where NCCL disables LL128 ran Simple under the ll128 label: refused at
// the key for the data-parallel groups of a 2017 network's workers (mp groups of dp GPUs); the step
// refuses any other collective as it sets it up (analysis/step, CommPlanner::ll128_refusal).
void refuse_ll128_where_off(const Scenario& s, const ResolvedScenario& r) {
  if (s.communication.protocol != sim::Protocol::LL128 || is_transformer(s) || r.mapping.dp < 2) return;
  workloads::CommPlanner planner(r.topology, r.comm);
  for (int k = 0; k < r.mapping.mp; ++k)
    if (const std::string why = planner.ll128_refusal(r.mapping.dp_group(k), sim::CollectiveOp::AllReduce);
        !why.empty())
      throw InputError(location_of(s, "communication.protocol") + ": communication.protocol: ll128: " + why);
}

ResolvedScenario resolve(const Scenario& s, sim::WorkProgress* progress, MemoryFit fit) {
  std::vector<std::string> notes;  // the topology file's, from its one load
  topology::Topology topology = build_topology(s, progress, &notes);
  workloads::Profile profile = load_workload_profile(s);
  workloads::StepConfig config = resolve_step_config(s, topology, profile);
  std::optional<workloads::MemoryCapacity> capacity = gpu_memory_capacity(s, profile);
  ResolvedScenario r{
      std::move(config), s, std::move(topology), std::move(profile), std::move(capacity), {}, {},
      std::move(notes)};
  if (is_transformer(s)) {
    const TransformerResolution t = resolve_transformer(s);
    try {
      if (s.parallelism.pp > 1) check_pipeline_memory(s, t, r.gpu_capacity, r.step.accumulation);
      else
        check_transformer_memory(
            s, t, r.gpu_capacity, static_cast<int>(r.topology.gpus().size()),
            static_cast<int>(r.topology.gpus().size()) / std::max(r.topology.node_count(), 1));
    } catch (const InputError& e) {
      if (fit == MemoryFit::Refuse) throw;
      r.does_not_fit = e.what();
      std::replace(r.does_not_fit.begin(), r.does_not_fit.end(), '\n', ' ');
    }
    const workloads::TransformerMemoryInput memory = transformer_memory_input(s, t);
    workloads::StepMemory step_memory = workloads::transformer_step_memory(memory);
    workloads::StepMemory by_stage = step_memory;
    std::string rule = workloads::transformer_memory_rule(memory);
    if (s.parallelism.pp > 1) {  // the stage that holds the most, as run's peak line shows one GPU
      const auto stages = pipeline_stage_memory(s, t, r.step.accumulation);
      const int largest = workloads::largest_stage(stages);
      step_memory =
          workloads::transformer_step_memory(memory, stages[static_cast<std::size_t>(largest)].memory);
      rule += "; pipeline stage " + std::to_string(largest) + " of " + std::to_string(stages.size()) +
              " (the largest; its layers and micro-batches in flight)";
      by_stage.ranks.clear();
      for (std::size_t k = 0; k < stages.size(); ++k) {
        by_stage.ranks.push_back(workloads::transformer_step_memory(memory, stages[k].memory).ranks.front());
        by_stage.ranks.back().mp_rank = static_cast<int>(k);
      }
    }
    // The peak of the GPUs simulated: workload.compute_speed 4 (or gpu_speeds of 4 on every GPU) runs
    // every kernel 4 times as fast, GPUs of 4 times the peak; against the preset's own peak the MFU
    // read 106.8% (hunt4). The mean over the step's GPUs (a straggler's lower peak counted with it),
    // so that the MFU is the model FLOPs over the sum of the GPUs' peaks.
    double speed = 0;
    for (const auto& worker : r.mapping.gpu_rank)
      for (const int g : worker)
        speed += 1 / workloads::gpu_compute_scale(r.step, static_cast<std::size_t>(g));
    speed /= std::max(r.mapping.gpu_count(), 1);
    r.transformer = TransformerFacts{t.model_flop_per_micro_batch,
                                     t.mfu_flop_per_micro_batch,
                                     t.cost.peak_flop_per_second,
                                     s.parallelism.tp,
                                     !t.cost.calibrated,
                                     std::move(step_memory),
                                     std::move(rule),
                                     s.parallelism.pp,
                                     std::move(by_stage),
                                     model_slice(s, t, r.step.accumulation),
                                     speed,
                                     workloads::dropped_token_share(t.step.config.model)};
  }
  refuse_ll128_where_off(s, r);
  return r;
}

std::filesystem::path input_path(const Scenario& s, const std::filesystem::path& p) {
  return p.is_absolute() ? p : s.base_dir / p;
}

std::vector<std::filesystem::path> input_files(const Scenario& s) {
  std::vector<std::filesystem::path> files;
  if (!s.cluster.topology.empty()) files.push_back(input_path(s, s.cluster.topology));
  if (!s.workload.profile.empty()) files.push_back(input_path(s, s.workload.profile));
  return files;
}

}  // namespace hybridsim::scenarios

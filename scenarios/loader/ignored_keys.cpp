// Keys whose value would change nothing in the scenario as written, refused at the key (naming the
// key that makes them moot) rather than silently ignored: a transformer's keys for a 2017 network,
// variability settings without anything drawn, a speed for a GPU no worker uses. (training.micro_batch
// and the parallelism keys tp, ep, pp and zero say so where they are applied.)
#include "scenarios/loader/ignored_keys.h"

#include <algorithm>

#include "scenarios/loader/resolve_transformer.h"
#include "sim/error.h"
#include "topology/preset_registry.h"

namespace hybridsim::scenarios {

// Drawn lengths need an encoder-decoder profile; how batches are formed from them, or a seed with
// nothing drawn, mean nothing, so another value than the default is refused, naming both keys,
// rather than ignored.
void check_variability(const Scenario& s, const workloads::Profile& profile) {
  const workloads::Variability& v = s.variability;
  const workloads::Variability defaults{};
  // A key written with its default value changes nothing (scenario_to_yaml writes them all).
  const auto moved = [&](const char* key, bool differs) {
    return differs && s.provenance.where.contains(key);
  };
  if (s.trace_step > v.steps)
    throw InputError(location_of(s, "variability.trace_step") + ": variability.trace_step: got step " +
                     std::to_string(s.trace_step) + " of a run of " + std::to_string(v.steps) +
                     " (variability.steps); expected first, slowest or a step number from 1 to " +
                     std::to_string(v.steps));
  if (v.lengths != workloads::LengthDistribution::Fixed) {
    if (profile.meta.target_length <= 0)
      throw InputError(location_of(s, "variability.sequence_lengths") +
                       ": variability.sequence_lengths: the profile " + profile.meta.network +
                       " is not an encoder-decoder (no target_length); expected fixed");
    if (v.batching == workloads::Batching::Random &&
        moved("variability.length_buckets", v.length_buckets != defaults.length_buckets))
      throw InputError(location_of(s, "variability.length_buckets") +
                       ": variability.length_buckets needs variability.batching: bucketed (random batching "
                       "has no bins); expected it left out, or bucketed batching");
    return;
  }
  if (v.kernel_jitter == 0 && moved("variability.seed", v.seed != defaults.seed))
    throw InputError(location_of(s, "variability.seed") +
                     ": variability.seed needs something drawn (variability.kernel_jitter > 0 or "
                     "sequence_lengths: wmt16-en-de): with neither, every step is the same; expected it "
                     "left out, or a draw");
  if (moved("variability.batching", v.batching != defaults.batching) ||
      moved("variability.length_buckets", v.length_buckets != defaults.length_buckets)) {
    const char* key = v.batching != defaults.batching ? "variability.batching" : "variability.length_buckets";
    throw InputError(location_of(s, key) + ": " + key +
                     " needs variability.sequence_lengths: wmt16-en-de (with fixed lengths every batch is "
                     "the profile's); expected it left out, or drawn lengths");
  }
}

// The step a trace shows means nothing without a trace: said as --trace-step without --trace is
// ("--trace-step needs --trace FILE"), not ignored (a run of 2 steps with trace_step: 2 wrote no
// trace and said nothing).
void refuse_trace_step_without_trace(const Scenario& s, bool trace_requested,
                                     const std::string& trace_option) {
  if (trace_requested || s.outputs.trace || s.trace_step == Scenario{}.trace_step ||
      !s.provenance.where.contains("variability.trace_step"))
    return;
  const std::string step = s.trace_step == kSlowestTraceStep ? "slowest" : std::to_string(s.trace_step);
  throw InputError(location_of(s, "variability.trace_step") + ": variability.trace_step: " + step +
                   " chooses the step a trace shows, but no trace is written (no outputs.trace block" +
                   (trace_option.empty() ? std::string() : ", no " + trace_option) +
                   "); expected it left out, or a trace");
}

// A speed for a GPU that runs no worker (dp × mp below the cluster's GPUs) would change nothing.
void refuse_idle_gpu_speed(const Scenario& s, const workloads::WorkerMapping& mapping, int gpu,
                           const std::string& path) {
  for (const auto& worker : mapping.gpu_rank)
    if (std::find(worker.begin(), worker.end(), gpu) != worker.end()) return;
  throw InputError(location_of(s, path) + ": " + path + ": GPU " + std::to_string(gpu) +
                   " runs no worker (the step uses " + std::to_string(mapping.gpu_count()) +
                   " of the cluster's " + "GPUs: " + mapping.description +
                   "), so its speed would change nothing; expected a GPU "
                   "the step uses");
}

// A 2017 network's ops come from its profile: a transformer's architecture or recomputation would
// change nothing.
void refuse_transformer_keys(const Scenario& s) {
  if (is_transformer(s)) return;
  const std::string network =
      s.workload.network.empty() ? "the profile " + s.workload.profile.string() : s.workload.network;
  const auto& where = s.provenance.where;
  for (auto it = where.lower_bound("workload.model"); it != where.end(); ++it) {
    if (it->first != "workload.model" && !it->first.starts_with("workload.model.")) break;
    throw InputError(it->second + ": " + it->first + ": a transformer's architecture, but " + network +
                     " is not a transformer (its ops come from its profile); expected it left out, or "
                     "workload.network: a transformer (llama3-8b, ..., or transformer)");
  }
  if (s.training.recompute != "none" && where.contains("training.recompute"))
    throw InputError(location_of(s, "training.recompute") + ": training.recompute: " + s.training.recompute +
                     " recomputation is modelled for transformers only, and " + network +
                     " is not one; expected it left out (none)");
}

// The key is documented as a setting of gradient accumulation ("With gradient accumulation
// (training.global_batch): ..."): without it there is one exchange either way, so it is refused as
// pipeline.schedule is with one stage.
void refuse_exchange_without_accumulation(const Scenario& s, int accumulation) {
  if (accumulation > 1 || s.communication.exchange_every_micro_batch ||
      !s.provenance.where.contains("communication.exchange"))
    return;
  const std::string batch =
      s.training.global_batch
          ? "training.global_batch " + std::to_string(*s.training.global_batch) + " is batch per worker × dp"
          : "training.global_batch is not written";
  throw InputError(location_of(s, "communication.exchange") +
                   ": communication.exchange: last-micro-batch needs gradient accumulation, but the step has "
                   "one micro-batch (" +
                   batch +
                   "): it is the last, so every-micro-batch exchanges alike; "
                   "expected it left out, or training.global_batch a multiple of batch per worker × dp above "
                   "it");
}

// A pipeline all-reduces each stage's gradients once, after its flush (pipeline_program.h), and
// ZeRO-1 reduce-scatters the accumulated gradients once (sharded_layout_options): both ran the step
// of last-micro-batch under a written every-micro-batch, with exit 0 (Llama 3 8B's 2-layer slice at
// dp 4 x pp 2, 4 micro-batches: 465 ms either way; at dp 8 under ZeRO-1: 579 ms either way).
void refuse_exchange_every_micro_batch_where_once(const Scenario& s, int accumulation) {
  if (accumulation <= 1 || !s.communication.exchange_every_micro_batch ||
      !s.provenance.where.contains("communication.exchange"))
    return;
  std::string why;
  if (s.parallelism.pp > 1)
    why = "parallelism.pp " + std::to_string(s.parallelism.pp) + " (" + location_of(s, "parallelism.pp") +
          ") runs a pipeline, which exchanges each stage's gradients once, after its flush (Megatron-LM, "
          "DeepSpeed); expected it left out or last-micro-batch, or pp 1";
  else if (zero_stage(s) == 1)
    why = "parallelism.zero 1 (" + location_of(s, "parallelism.zero") +
          ") reduce-scatters the accumulated gradients once, after the last micro-batch (DeepSpeed's stage "
          "1, Megatron-LM's distributed optimizer); expected it left out or last-micro-batch, or zero 0";
  if (why.empty()) return;
  throw InputError(location_of(s, "communication.exchange") +
                   ": communication.exchange: every-micro-batch exchanges after each of the step's " +
                   std::to_string(accumulation) + " micro-batches, but " + why);
}

std::optional<std::string> identical_steps_note(const Scenario& s) {
  const workloads::Variability& v = s.variability;
  if (v.steps <= 1 || v.varies()) return std::nullopt;
  return location_of(s, "variability.steps") + ": variability.steps: " + std::to_string(v.steps) +
         " steps with nothing drawn (kernel_jitter 0, sequence_lengths fixed) are alike: step 1 is "
         "simulated once and stands for each, so the mean, p95, min and max are step 1's (events and "
         "messages its " +
         std::to_string(v.steps) + " times)";
}

namespace {

// A key written (with another value than its default) that changes nothing in this scenario: the
// note naming it where it was written, why, and what it applies with; none where it was not written.
std::optional<std::string> not_used_note(const Scenario& s, const std::string& key, bool changes_nothing,
                                         const std::string& why) {
  if (!changes_nothing || !s.provenance.where.contains(key)) return std::nullopt;
  return key + " (" + location_of(s, key) + "): not used: " + why;
}

}  // namespace

std::optional<std::string> unused_model_threads_note(const Scenario& s) {
  const auto algorithm = s.communication.algorithm;
  std::string why;
  if (s.communication.fast_path == sim::FastPath::Off)
    why = "communication.fast_path: off folds nothing";
  else if (algorithm == workloads::AllReduceAlgorithm::Ring ||
           algorithm == workloads::AllReduceAlgorithm::Hierarchical)
    why = "communication.algorithm: " + std::string(workloads::algorithm_name(algorithm)) + " runs no tree";
  return not_used_note(s, "simulation.model_threads", !why.empty(),
                       why +
                           ", and the threads run a folded step's tree models; it applies with "
                           "communication.algorithm tree or auto");
}

std::optional<std::string> unused_placement_note(const Scenario& s) {
  const ParallelismSettings& p = s.parallelism;
  return not_used_note(
      s, "parallelism.placement", p.mp == 1 && p.pp == 1 && p.placement != PlacementSettings{},
      "parallelism.mp is 1, so each worker runs every op on its one GPU; it applies with mp > 1");
}

std::optional<std::string> unused_bucket_size_note(const Scenario& s) {
  // Written at its default it changes nothing anywhere (scenario_to_yaml writes every key).
  return not_used_note(
      s, "communication.bucket_size",
      s.parallelism.dp == 1 && s.communication.bucket_size != CommunicationSettings{}.bucket_size,
      "parallelism.dp is 1, so no gradients are exchanged between data-parallel replicas (no "
      "bucket is formed); it applies with dp > 1");
}

std::optional<std::string> unused_recompute_note(const Scenario& s) {
  return not_used_note(
      s, "training.recompute",
      is_transformer(s) && s.training.recompute == "selective" && s.workload.model.attention == "flash",
      "selective recomputation drops the attention's stored softmax and dropout outputs to recompute "
      "them in backward, but workload.model.attention: flash never stores them, so the step and its "
      "memory are recompute none's; it applies with workload.model.attention: unfused");
}

namespace {

// cluster.spines and oversubscription written where every NIC plugs into one leaf switch (2 DGX H100
// machines' 16 NICs at leaf_radix 16): no traffic crosses a spine, so they change nothing; the note
// naming them, or none. (They ran without a word: oversubscription 4 gave the step of 1.)
std::optional<std::string> unused_spine_note(const Scenario& s) {
  const ClusterSettings& c = s.cluster;
  if (topology::fabric_leaves(c) != 1) return std::nullopt;
  const topology::ClusterSpec defaults{};
  std::string named;
  for (const auto& [key, differs] :
       {std::pair{"cluster.oversubscription", c.oversubscription != defaults.oversubscription},
        std::pair{"cluster.spines", c.spines != defaults.spines}})
    if (differs) named += (named.empty() ? "" : ", ") + std::string(key) + " (" + location_of(s, key) + ")";
  if (named.empty()) return std::nullopt;
  return named + ": not used: every NIC of the " + std::to_string(c.nodes) + " " + c.preset +
         " machines plugs into one leaf switch (cluster.leaf_radix " + std::to_string(c.leaf_radix) +
         "), so no step crosses a spine; they apply with more than one leaf (more machines, or a smaller "
         "cluster.leaf_radix)";
}

}  // namespace

std::optional<std::string> unused_fabric_note(const Scenario& s) {
  const ClusterSettings& c = s.cluster;
  if (!c.topology.empty()) return std::nullopt;
  if (c.nodes != 1) return unused_spine_note(s);
  const topology::ClusterSpec defaults{};
  const topology::LinkOverride& ib = c.links[sim::LinkKind::InfiniBand];
  const std::pair<const char*, bool> keys[] = {
      {"cluster.fabric", c.fabric != defaults.fabric},
      {"cluster.oversubscription", c.oversubscription != defaults.oversubscription},
      {"cluster.leaf_radix", c.leaf_radix != defaults.leaf_radix},
      {"cluster.spines", c.spines != defaults.spines},
      {"cluster.links.infiniband", ib != topology::LinkOverride{}},
  };
  std::string named;
  // A key at its default changes nothing here either (scenario_to_yaml writes every key).
  for (const auto& [key, differs] : keys)
    if (differs) named += (named.empty() ? "" : ", ") + std::string(key) + " (" + location_of(s, key) + ")";
  if (named.empty()) return std::nullopt;
  return named + ": not used: the cluster is one " + c.preset +
         " machine (cluster.nodes 1), so no step crosses InfiniBand; they apply with cluster.nodes > 1";
}

}  // namespace hybridsim::scenarios

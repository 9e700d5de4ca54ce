// Keys whose value would change nothing in the scenario as written are refused at the key, naming
// the key that makes them moot (ignored_keys.cpp); resolve_step_config and load_workload_profile
// call these.
//   refuse_transformer_keys(s);  // training.recompute: full on gnmt → "...: transformers only, ..."
#pragma once
#include <optional>
#include <string>

#include "scenarios/loader/scenario.h"
#include "workloads/profile/profile.h"
#include "workloads/program/mapping.h"

namespace hybridsim::scenarios {

// variability.trace_step past the steps; drawn lengths without an encoder-decoder; batching,
// length_buckets or seed with nothing drawn.
void check_variability(const Scenario& s, const workloads::Profile& profile);
// variability.trace_step written (other than first) where no trace is written: no outputs.trace block
// and no trace asked of the run (`trace_requested`: hybridsim run --trace, Python's trace=, named by
// `trace_option` in the refusal; a sweep has none: false, ""), as --trace-step is refused without --trace.
void refuse_trace_step_without_trace(const Scenario& s, bool trace_requested,
                                     const std::string& trace_option);
// workload.gpu_speeds[i] (at `path`) for a GPU that runs no worker of `mapping`.
void refuse_idle_gpu_speed(const Scenario& s, const workloads::WorkerMapping& mapping, int gpu,
                           const std::string& path);
// workload.model.* and training.recompute written for a 2017 network: only a transformer reads them.
void refuse_transformer_keys(const Scenario& s);
// communication.exchange: last-micro-batch written for a step of one micro-batch (no gradient
// accumulation: `accumulation` 1), where the only micro-batch is the last and every-micro-batch the same.
void refuse_exchange_without_accumulation(const Scenario& s, int accumulation);
// communication.exchange: every-micro-batch written where the step exchanges once after its last
// micro-batch whatever it says: a pipeline (parallelism.pp > 1: each stage's gradients after the
// flush) or ZeRO-1 (the accumulated gradients reduce-scattered once), with accumulation > 1.
void refuse_exchange_every_micro_batch_where_once(const Scenario& s, int accumulation);
// The fabric keys (cluster.fabric, oversubscription, leaf_radix, spines, links.infiniband) written with
// another value than their default for a preset cluster of one machine, where no step crosses
// InfiniBand: a note naming each with where it was written, or none. A note, not a refusal: the same
// file runs with --set cluster.nodes=1, and a sweep over cluster.nodes may include 1. On several
// machines whose NICs all plug into one leaf (topology::fabric_leaves 1), the same note for
// cluster.oversubscription and spines: no step crosses a spine.
std::optional<std::string> unused_fabric_note(const Scenario& s);
// variability.steps above 1 with nothing drawn (no kernel_jitter, fixed lengths): every step is the
// first again, so step 1 is simulated once and stands for all (analysis/step/step_series.h), and the
// mean, p95, min and max are step 1's. A note, not a refusal: a sweep's baseline
// point (scenarios/what-if/variability.yaml's {steps: 20}) is such a run on purpose.
std::optional<std::string> identical_steps_note(const Scenario& s);
// simulation.model_threads (--model-threads) written where no tree is folded: communication.algorithm
// ring or hierarchical (rings only), or communication.fast_path: off (nothing folded). The threads
// run a folded step's tree models, so they change nothing there: a note, as a sweep over the
// algorithm may include ring.
std::optional<std::string> unused_model_threads_note(const Scenario& s);
// parallelism.placement written (a partitioner or rules) for workers of one GPU (mp 1, no pipeline):
// every op runs on the worker's one GPU, so it changes nothing. A note, as the fabric's: a sweep over
// parallelism ({dp: 8, mp: 1}, {dp: 4, mp: 2}) places its mp 2 points by it.
std::optional<std::string> unused_placement_note(const Scenario& s);
// communication.bucket_size written for dp 1: no gradient is exchanged between data-parallel replicas,
// so no bucket is formed and it changes nothing. A note, as a sweep over dp may include 1.
std::optional<std::string> unused_bucket_size_note(const Scenario& s);
// training.recompute: selective under flash attention (workload.model.attention: flash, the default):
// selective recomputation drops the attention's softmax and dropout outputs (Korthikanti et al.'s
// 5·a·s/h term) to recompute them in backward, and flash attention never stores them, so nothing is
// dropped or recomputed. A note, not a refusal: Megatron-LM takes the two flags together (its legacy
// ParallelAttention checkpoints the core attention on its unfused path only, so selective changes
// nothing under --use-flash-attn), its Llama recipes pass both, and so do the shipped Llama files.
std::optional<std::string> unused_recompute_note(const Scenario& s);

}  // namespace hybridsim::scenarios

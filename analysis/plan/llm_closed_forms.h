// Closed forms of a transformer training configuration (dp × tp × pp × ep, micro-batch,
// recomputation, ZeRO stage, pipeline schedule), for the planner to prune with before it simulates:
// the memory of a pipeline stage's GPU and an analytic estimate of the step's time split into
// compute, TP communication, pipeline bubble, pipeline transfers, exposed DP communication, expert
// all-to-alls and the optimizer. Sources: ../shared/reference/transformers.md (Korthikanti et al.
// 2022 per-layer activations; Narayanan et al. 2021 bubble (p−1)/m and (p−1)/(v·m), 1F1B's p
// micro-batches in flight on the first stage; ZeRO's divisions). Estimates only: what is ranked is
// simulated (analysis/plan/llm_planner.h).
//   LlmMemory m = llm_peak_memory(setting, layout);          // the most loaded stage
//   LlmTimeEstimate t = llm_time_estimate(setting, layout, machine);  t.step();
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/units.h"
#include "workloads/generators/transformer_gen.h"
#include "workloads/generators/transformer_model.h"
#include "workloads/program/pipeline_schedule.h"

namespace hybridsim::analysis {

// The pipeline's own schedules (workloads/program/pipeline_schedule.h), the names the loader takes.
using workloads::PipelineSchedule;

// What does not vary between candidates: the model (its experts and top_k with it: a copy of them here
// was never set, so Mixtral was planned as a dense model), the bytes of a 16-bit (2) or FP32 (4) value,
// flash attention.
struct LlmSetting {
  workloads::TransformerModel model{};
  std::int64_t value_bytes = 2;
  bool flash_attention = true;
};

// One configuration. gpus = dp · tp · pp; ep divides dp (experts are spread over data-parallel
// ranks); global_batch is in sequences, micro_batches() = global_batch / (dp · micro_batch).
struct LlmLayout {
  int dp = 1;
  int tp = 1;
  int pp = 1;
  int ep = 1;
  bool sequence_parallel = false;
  std::int64_t micro_batch = 1;
  workloads::Recompute recompute = workloads::Recompute::None;
  int zero = 0;  // 0..3; FSDP is 3
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  int virtual_stages = 1;
  std::int64_t global_batch = 1;

  int gpus() const { return dp * tp * pp; }
  std::int64_t micro_batches() const { return global_batch / (static_cast<std::int64_t>(dp) * micro_batch); }
  bool operator==(const LlmLayout&) const = default;
};

// Why `layout` is not a configuration of `setting` on machines of `gpus_per_machine` GPUs (empty
// when it is): tp splitting heads, tp within a machine, pp at most the layers (pp · v dividing them
// when interleaved: the chunk passes below count equal chunks), the batch dividing into micro-batches, 1F1B
// needing at least pp micro-batches, ZeRO and sequence parallelism needing dp > 1 and tp > 1, ep dividing dp
// and the experts, a mixture under tp > 1 needing sequence parallelism (Megatron-LM's rule).
std::string llm_layout_problem(const LlmSetting& setting, const LlmLayout& layout, int gpus_per_machine);

// The layers of pipeline stage `stage` (GPipe, 1F1B): the run's split when pipeline.stages is left
// out (workloads::balanced_layers: as even as can be, the first stage one fewer where they do not
// divide: Llama 3 405B's 126 layers over pp 16 are 7, 8 × 14, 7, as Meta trained it); interleaved,
// L/p (its layers divide into pp · v chunks). The most loaded stage's: llm_max_stage_layers.
std::int64_t llm_stage_layers(const LlmSetting& setting, const LlmLayout& layout, int stage);
std::int64_t llm_max_stage_layers(const LlmSetting& setting, const LlmLayout& layout);
// The split where it is uneven, as plan prints it beside pp ("stages of 7, 8 x14, 7 layers"); empty
// where every stage holds L/p.
std::string llm_stage_split_text(const LlmSetting& setting, const LlmLayout& layout);

struct LlmMemory {
  sim::Bytes weights, gradients, optimizer, activations;
  int stage = 0;  // which pipeline stage (the most loaded one, for llm_peak_memory)
  sim::Bytes total() const { return weights + gradients + optimizer + activations; }
};
// Parameters one GPU of `stage` holds before ZeRO: its layers' (an MoE layer's experts divided by
// ep, its norms whole) over tp, plus the vocabulary-parallel embedding on the first stage and the LM
// head with the final norm on the last (workloads::head_parameters_per_rank, as the profile's op).
std::int64_t llm_stage_parameters(const LlmSetting& setting, const LlmLayout& layout, int stage);
// Layers' worth of one micro-batch's activations the stage holds at its peak, in units of 1/v:
// pp 1: the layers (one micro-batch lives at a time, accumulation frees it); GPipe: m micro-batches
// of L/p layers; 1F1B: min(p, m) of them on the first stage (p − stage in general); interleaved:
// (L/p)(p + (p−1)/v) on the first stage (Korthikanti §4.2.3).
std::int64_t llm_layers_held_times_v(const LlmSetting& setting, const LlmLayout& layout, int stage);
// Weights 2, gradients 2, Adam 12 bytes per parameter under mixed precision (4/4/8 in FP32), ZeRO
// stage 1 dividing the optimizer by dp, 2 the gradients too, 3 the weights too, plus ZeRO-3's
// gathered parameters in flight (workloads::zero3_gathered_bytes, as the simulated memory model
// counts them: the largest pair of the stage's neighbouring ops, whole for the rank); activations per
// Korthikanti's Table 2 (workloads::layer_activation_bytes) times the layers held, plus one layer's
// full activations under full recomputation and the FP32 logits on the last stage.
LlmMemory llm_stage_memory(const LlmSetting& setting, const LlmLayout& layout, int stage);
LlmMemory llm_peak_memory(const LlmSetting& setting, const LlmLayout& layout);

// The machine as the estimate sees it: GEMMs at (F + F½) / rate (workloads/gpu/transformer_cost.h),
// the run's kernel cost for the generated step's memory-bound kernels and its optimizer
// (llm_generated_kernels.h; left default, a memory bandwidth of 0, they cost nothing: GEMMs alone), a
// GPU's NVLink bandwidth within a machine and its InfiniBand share (topology::ib_share_per_gpu: its
// machine's NICs, each at the lesser of its port and its PCIe link, over its GPUs).
struct LlmMachine {
  double gemm_flop_per_second = 0;
  double gemm_half_flop = 0;
  double nvlink_bytes_per_second = 0;
  double ib_bytes_per_second = 0;
  int gpus_per_machine = 8;
  workloads::TransformerCost kernels{};
};

// Seconds of one optimizer step on the slowest stage's GPU.
struct LlmTimeEstimate {
  double compute = 0;           // the generated step's kernels of its micro-batches: GEMMs and
                                // memory-bound kernels
  double tp_communication = 0;  // Megatron's all-reduces (or RS + AG), on the compute's path, the
                                // layers', the embedding's and the LM head's; under sequence
                                // parallelism also the norms' gradients' all-reduce a step
  double bubble = 0;            // (p−1)/(v·m) of compute + the micro-batches' TP (GPipe, 1F1B: v = 1)
  double pp_communication = 0;  // transfers between stages the step waits on: warm-up's and cool-down's
  double dp_exposed = 0;        // the data-parallel exchange the step waits on, as ZeRO's program runs it
  double ep_communication = 0;  // the experts' all-to-alls
  double optimizer = 0;         // Adam over the parameters this GPU updates
  double step() const {
    return compute + tp_communication + bubble + pp_communication + dp_exposed + ep_communication + optimizer;
  }
};
LlmTimeEstimate llm_time_estimate(const LlmSetting& setting, const LlmLayout& layout,
                                  const LlmMachine& machine);

// One layer's GEMMs of one micro-batch on one TP rank, (F + F½) / rate each, as the generated step
// issues them (workloads/generators/transformer_gemms.h, transformer_kernels.cpp), split as a
// mixture's two ops are: QKV, attention, output and the router; the MLP (a mixture's local experts,
// each on its own tokens). Backward twice each linear (input and weight gradients), flash attention
// 2.5 times its forward (it recomputes the scores), the unfused one's two GEMMs twice; selective
// recomputation adds the unfused scores, full recomputation the forward. Plus each op's memory-bound
// kernels, the generator's own (llm_generated_kernels.h).
struct LlmLayerSeconds {
  double attention_forward = 0, attention_backward = 0, mlp_forward = 0, mlp_backward = 0;
  double total() const { return attention_forward + attention_backward + mlp_forward + mlp_backward; }
};
LlmLayerSeconds llm_layer_seconds(const LlmSetting& setting, const LlmLayout& layout,
                                  const LlmMachine& machine);
// The embedding's and the LM head's kernels of one micro-batch on one TP rank: the head's GEMM (three
// with its two gradients) and both ops' memory-bound kernels (the lookup, the final norm, the loss).
struct LlmEndSeconds {
  double embedding_forward = 0, embedding_backward = 0, head_forward = 0, head_backward = 0;
};
LlmEndSeconds llm_end_seconds(const LlmSetting& setting, const LlmLayout& layout, const LlmMachine& machine);

// Data-parallel bytes each GPU sends per step relative to the gradient bytes it exchanges over a
// group of `replicas` (n), as the run's program moves them: 2(n−1)/n for an all-reduce (ZeRO 0) or
// a reduce-scatter and an all-gather (1); ZeRO 2 reduce-scatters every micro-batch, (m + 1)(n−1)/n;
// ZeRO 3 gathers the weights forward and backward and reduce-scatters every micro-batch,
// 3m(n−1)/n. Nothing over one replica.
double dp_volume_factor(const LlmLayout& layout, int replicas);
// The parameters of stage `stage`'s GPU that are a mixture's experts (its layers' experts / tp /
// ep; 0 without expert parallelism).
std::int64_t llm_stage_expert_parameters(const LlmSetting& setting, const LlmLayout& layout, int stage);
// Data-parallel bytes the first stage's GPU sends per step: its dense parameters' over all dp, its
// experts' over the dp / ep replicas that hold them (workloads::expert_replicas, the group the run
// reduces and gathers them over: none at dp = ep).
double llm_dp_bytes(const LlmSetting& setting, const LlmLayout& layout);
// Seconds of those bytes: over NVLink within a machine; across machines at the InfiniBand shares of
// the group's GPUs on one machine (the dense group's machine GPUs / tp, an expert's 1 / ep of them).
double llm_dp_seconds(const LlmSetting& setting, const LlmLayout& layout, const LlmMachine& machine);
// The rate those bytes move at: NVLink within a machine; across machines, the InfiniBand shares of
// the group's GPUs on one machine (the dense group's, or with `experts` an expert's replicas').
double llm_dp_rate(const LlmLayout& layout, const LlmMachine& machine, bool experts);

}  // namespace hybridsim::analysis

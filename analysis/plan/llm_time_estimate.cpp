// The transformer closed form's time (llm_closed_forms.h, llm_time_estimate): one optimizer step's
// seconds on the slowest stage's GPU, split into compute (the GEMMs and memory-bound kernels of each
// layer and of the ends), TP communication, pipeline bubble and transfers, the exposed data-parallel
// exchange (its bytes and rates by ZeRO stage), expert all-to-alls and the optimizer.
//   double seconds = llm_time_estimate(setting, layout, machine).step();
#include <algorithm>

#include "analysis/plan/llm_closed_forms.h"
#include "analysis/plan/llm_generated_kernels.h"
#include "analysis/plan/llm_zero3_overlap.h"
#include "workloads/generators/transformer_gemms.h"

namespace hybridsim::analysis {

namespace {

double ring_factor(int n) { return n <= 1 ? 0.0 : 2.0 * (n - 1) / n; }

// The experts each token runs: top_k of a mixture's, a dense model's one MLP.
double top_k(const workloads::TransformerModel& m) { return m.is_moe() ? static_cast<double>(m.top_k) : 1.0; }

// The first stage's GPU's data-parallel bytes: its dense parameters' and its experts'.
struct DpBytes {
  double dense = 0;
  double experts = 0;
};

DpBytes dp_bytes(const LlmSetting& s, const LlmLayout& l) {
  const std::int64_t all = llm_stage_parameters(s, l, 0);
  const std::int64_t experts = llm_stage_expert_parameters(s, l, 0);
  const auto bytes = [&](std::int64_t parameters) { return static_cast<double>(parameters * s.value_bytes); };
  return {dp_volume_factor(l, l.dp) * bytes(all - experts),
          dp_volume_factor(l, workloads::expert_replicas(l.dp, l.ep)) * bytes(experts)};
}

// The GEMMs of one micro-batch on one TP rank, by the generator's own sizes (transformer_gemms.h: they
// depend on the model, the micro-batch, tp, ep and sequence parallelism).
workloads::TransformerGemms gemms_of(const LlmSetting& s, const LlmLayout& l) {
  workloads::TransformerConfig c{.model = s.model, .micro_batch = l.micro_batch, .tp = l.tp, .ep = l.ep};
  c.sequence_parallel = l.sequence_parallel;
  return workloads::transformer_gemms(c);
}

// One GEMM of `flop` floating-point operations, (F + F½) / rate (workloads/gpu/transformer_cost.h).
double gemm_seconds(const LlmMachine& mc, double flop) {
  return (flop + mc.gemm_half_flop) / mc.gemm_flop_per_second;
}

// A column-parallel linear's backward communication beside its GEMM (`gemm` seconds), which shows
// only where longer: its input gradient reduced, two gathers of `half` seconds, beside its
// weight-gradient GEMM; under sequence parallelism one gather beside each of its two GEMMs.
double beside_gemm(double half, double gemm, bool sequence_parallel) {
  return sequence_parallel ? 2 * std::max(0.0, half - gemm) : std::max(0.0, 2 * half - gemm);
}

// The slowest stage's seconds of one micro-batch from one layer's and the ends' (the embedding's on
// the first stage, the LM head's on the last; one stage holds all three without a pipeline). Uneven
// stages (balanced_layers): the first and the last hold the fewest layers, with the embedding and
// the head; the middle ones the most. The slowest of the three kinds.
double slowest_stage_seconds(const LlmSetting& s, const LlmLayout& l, double per_layer, double embedding,
                             double head) {
  const auto first = static_cast<double>(llm_stage_layers(s, l, 0));
  if (l.pp == 1) return first * per_layer + embedding + head;
  const auto most = static_cast<double>(llm_max_stage_layers(s, l));
  const auto last = static_cast<double>(llm_stage_layers(s, l, l.pp - 1));
  return std::max({first * per_layer + embedding, most * per_layer, last * per_layer + head});
}

// The slowest stage's compute of one micro-batch: its layers' kernels (llm_layer_seconds), the
// embedding's on the first stage and the LM head's on the last (llm_end_seconds).
double stage_micro_batch_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc) {
  const double per_layer = llm_layer_seconds(s, l, mc).total();
  const LlmEndSeconds ends = llm_end_seconds(s, l, mc);
  const double embedding = ends.embedding_forward + ends.embedding_backward;
  const double head = ends.head_forward + ends.head_backward;
  return slowest_stage_seconds(s, l, per_layer, embedding, head);
}

// The TP communication of one layer and micro-batch, as the generated step runs it
// (transformer_kernels.cpp), in gathers of s·b·h (a reduce-scatter is one, an all-reduce two).
// Exposed: the forward's two all-reduces (under sequence parallelism two all-gathers and two
// reduce-scatters, and the backward's two all-gathers of the output gradients); two more with full
// recomputation; a mixture's experts' input-gradient reduce. Beside a GEMM, each column-parallel
// linear's (QKV, a dense MLP's first) input gradient reduced beside its weight-gradient GEMM, and
// under sequence parallelism its input all-gathered again beside its input-gradient GEMM
// (Megatron-LM's layers.py, LinearWithGradAccumulationAndAsyncCommunication.backward), which show
// only where longer than the GEMM.
double tensor_parallel_layer_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc,
                                     double bsh) {
  const workloads::TransformerModel& m = s.model;
  const double half = ring_factor(l.tp) / 2 * bsh / mc.nvlink_bytes_per_second;  // one gather of s·b·h
  const bool sp = l.sequence_parallel, full = l.recompute == workloads::Recompute::Full;
  // A mixture's experts reduce their input gradient after the experts, exposed (its dispatcher's
  // gather or all-reduce, not a column-parallel linear's).
  const int exposed = (sp ? 6 : 4) + (full ? 4 : 0) + (m.is_moe() ? (sp ? 1 : 2) : 0);
  const auto beside = [&](std::int64_t flop) {
    return beside_gemm(half, gemm_seconds(mc, static_cast<double>(flop)), sp);
  };
  const workloads::TransformerGemms g = gemms_of(s, l);
  return exposed * half + beside(g.qkv) + (m.is_moe() ? 0.0 : beside(g.mlp_in));
}

// The embedding's and the LM head's TP communication of one micro-batch, as the generated step runs
// them (profile_gen_transformer.cpp, add_embedding and add_head), in gathers of s·b·h: the
// vocabulary-parallel lookup's all-reduce (under sequence parallelism a reduce-scatter forward and
// an all-gather backward), exposed; the head's input all-gathered under sequence parallelism,
// exposed, the cross entropy's three all-reduces of b·s FP32 values, exposed, and its backward a
// column-parallel linear's beside its GEMMs (as QKV's). Not recomputed.
struct EndsTp {
  double embedding = 0, head = 0;
};

EndsTp tensor_parallel_end_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc,
                                   double bsh) {
  if (l.tp <= 1) return {};
  const double half = ring_factor(l.tp) / 2 * bsh / mc.nvlink_bytes_per_second;
  const bool sp = l.sequence_parallel;
  const double tokens = static_cast<double>(l.micro_batch * s.model.sequence);
  const double loss = 3 * ring_factor(l.tp) * tokens * 4 / mc.nvlink_bytes_per_second;
  const double gemm = gemm_seconds(mc, static_cast<double>(gemms_of(s, l).lm_head));
  return {2 * half, (sp ? half : 0.0) + loss + beside_gemm(half, gemm, sp)};
}

// The slowest stage's TP communication of one micro-batch: its layers', the first stage's with the
// embedding's and the last's with the head's (one stage holds all three without a pipeline).
double stage_tensor_parallel_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc,
                                     double bsh) {
  const double per_layer = tensor_parallel_layer_seconds(s, l, mc, bsh);
  const EndsTp ends = tensor_parallel_end_seconds(s, l, mc, bsh);
  return slowest_stage_seconds(s, l, per_layer, ends.embedding, ends.head);
}

// The data-parallel exchange the step waits for, as the ZeRO program orders it
// (workloads/program/sharded_data_parallel.h). dp_time is a reduce-scatter and an all-gather of
// equal bytes (stages 1 and 2) or an all-reduce (0), each at the group's rate (llm_dp_seconds).
//   0: the all-reduce bucket by bucket during the last micro-batch's backward, beside it; in a
//      pipeline a chunk's gradients after its last backward (pipeline_program.h), which on the first
//      stage ends the step: none of it beside compute (GPT-3 175B dp 8 tp 8 pp 8 v 4 on 512 H100:
//      0.204 s, all of it exposed in the run);
//   1: the reduce-scatters held until backward is done, then the optimizer, then the all-gather of
//      the updated parameters on the compute stream: none of it beside compute;
//   2: every micro-batch's reduce-scatters bucket by bucket during its backward, on one stream: the
//      m rounds queue behind the m−1 micro-batches after the first one's backward and the last's
//      backward; the all-gather after the optimizer, exposed as in stage 1;
//   3: the gathers and scatters beside each op (zero3_exposed_seconds).
double dp_exposed_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc, double stage_mb) {
  const double dp_time = llm_dp_seconds(s, l, mc);
  const double backward = stage_mb * 2 / 3;
  switch (l.zero) {
    case 0:
      return l.pp > 1 ? dp_time : std::max(0.0, dp_time - backward);
    case 1:
      return dp_time;
    case 2: {
      const double m = static_cast<double>(l.micro_batches()), pass = dp_time / (m + 1);
      return pass + std::max(0.0, m * pass - ((m - 1) * stage_mb + backward));
    }
    default:
      return zero3_exposed_seconds(s, l, mc);
  }
}

}  // namespace

double dp_volume_factor(const LlmLayout& l, int replicas) {
  if (replicas <= 1) return 0;
  const double once = static_cast<double>(replicas - 1) / replicas;
  // The run's program (workloads/program/sharded_data_parallel.h): stage 2 reduce-scatters every
  // micro-batch and gathers once, stage 3 gathers forward and backward and reduce-scatters every
  // micro-batch (sharded_layout_options).
  const double m = static_cast<double>(l.micro_batches());
  if (l.zero == 2) return (m + 1) * once;
  return l.zero >= 3 ? 3 * m * once : 2 * once;
}

double llm_dp_bytes(const LlmSetting& s, const LlmLayout& l) {
  const DpBytes b = dp_bytes(s, l);
  return b.dense + b.experts;
}

double llm_dp_rate(const LlmLayout& l, const LlmMachine& mc, bool experts) {
  if (l.tp * l.dp <= mc.gpus_per_machine) return mc.nvlink_bytes_per_second;
  // Across machines each of a group's rings leaves a machine through the NIC of one of its GPUs there:
  // the group's members on a machine carry it at their InfiniBand shares together (topology/README.md:
  // 383 GB/s between 2 DGX H100 at 8 GPUs a machine), never faster than NVLink within the machine. The
  // dense group holds a machine's GPUs / tp (tp innermost); every ep-th of them holds an expert's
  // replicas, at least one a machine.
  const int dense = mc.gpus_per_machine / l.tp;
  const int members = experts ? dense / std::max(1, l.ep) : dense;
  return std::min(mc.nvlink_bytes_per_second, std::max(1, members) * mc.ib_bytes_per_second);
}

double llm_dp_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc) {
  const DpBytes b = dp_bytes(s, l);
  return b.dense / llm_dp_rate(l, mc, false) + b.experts / llm_dp_rate(l, mc, true);
}

LlmLayerSeconds llm_layer_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc) {
  const workloads::TransformerGemms g = gemms_of(s, l);
  const auto gemm = [&](double flop) { return gemm_seconds(mc, flop); };
  const auto f = [](std::int64_t flop) { return static_cast<double>(flop); };
  const double linear =
      gemm(f(g.qkv)) + gemm(f(g.attention_output)) + (g.router > 0 ? gemm(f(g.router)) : 0.0);
  const double attention = s.flash_attention ? gemm(f(g.attention)) : 2 * gemm(f(g.attention) / 2);
  LlmLayerSeconds r;
  r.attention_forward = linear + attention;
  r.attention_backward =
      2 * linear + (s.flash_attention ? gemm(f(g.attention) * 5 / 2) : 2 * gemm(f(g.attention)));
  r.mlp_forward = static_cast<double>(g.mlps) * (gemm(f(g.mlp_in)) + gemm(f(g.mlp_out)));
  r.mlp_backward = 2 * r.mlp_forward;
  if (l.recompute == workloads::Recompute::Full) {
    r.attention_backward += r.attention_forward;
    r.mlp_backward += r.mlp_forward;
  }
  if (l.recompute == workloads::Recompute::Selective && !s.flash_attention)
    r.attention_backward += gemm(f(g.attention) / 2);
  // The memory-bound kernels, recomputation's included, as the generator emits them.
  const LlmMemoryBound mb = llm_memory_bound_seconds(s, l, mc);
  r.attention_forward += mb.attention_forward;
  r.attention_backward += mb.attention_backward;
  r.mlp_forward += mb.mlp_forward;
  r.mlp_backward += mb.mlp_backward;
  return r;
}

LlmEndSeconds llm_end_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc) {
  const double head = gemm_seconds(mc, static_cast<double>(gemms_of(s, l).lm_head));
  const LlmMemoryBound mb = llm_memory_bound_seconds(s, l, mc);
  return {mb.embedding_forward, mb.embedding_backward, head + mb.head_forward, 2 * head + mb.head_backward};
}

LlmTimeEstimate llm_time_estimate(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc) {
  LlmTimeEstimate e;
  const double m = static_cast<double>(l.micro_batches());
  const double v = l.schedule == PipelineSchedule::Interleaved ? l.virtual_stages : 1;
  const double stage_mb = stage_micro_batch_seconds(s, l, mc);
  e.compute = m * stage_mb;
  const double bsh = static_cast<double>(l.micro_batch * s.model.sequence * s.model.hidden * s.value_bytes);
  const double layers = static_cast<double>(llm_max_stage_layers(s, l));
  e.tp_communication = m * stage_tensor_parallel_seconds(s, l, mc, bsh);
  e.bubble = (l.pp - 1) / (v * m) * (e.compute + e.tp_communication);
  // Sequence parallelism: once a step, after the bubble, the slowest stage's norms' (and routers')
  // gradients all-reduced over its TP group (the last stage's with the final norm).
  if (l.sequence_parallel) {
    const auto replicated = [&](std::int64_t stage_layers) {
      return static_cast<double>(stage_layers * workloads::layer_replicated_parameters(s.model) *
                                 s.value_bytes);
    };
    const double last = replicated(llm_stage_layers(s, l, l.pp - 1)) +
                        static_cast<double>(workloads::norm_parameters(s.model) * s.value_bytes);
    e.tp_communication += ring_factor(l.tp) * std::max(replicated(llm_max_stage_layers(s, l)), last) /
                          mc.nvlink_bytes_per_second;
  }
  // Stages (outermost) that fill a machine or more sit on other machines: every boundary crosses it.
  const bool across = l.tp * l.dp >= mc.gpus_per_machine;
  if (l.pp > 1) {
    const double link = across ? mc.ib_bytes_per_second : mc.nvlink_bytes_per_second;
    // Each transfer runs on a send stream of its own beside the stages' compute (pipeline_program.h,
    // as Megatron-LM's asynchronous point-to-point); the step waits only for those on its edges: the
    // first micro-batch's activations into each of the p·v − 1 later chunks (warm-up) and the last
    // one's gradients back (cool-down). The rest shows only where one direction's v·m transfers
    // outlast the compute they run beside.
    const double transfer = bsh / (l.sequence_parallel ? l.tp : 1) / link;
    e.pp_communication = 2 * (l.pp * v - 1) * transfer + std::max(0.0, v * m * transfer - e.compute);
  }
  // An expert's replicas (every ep-th replica of the dense group) span the same machines as the
  // dense group under the default mapping, so both cross InfiniBand where dp · tp outgrows one.
  e.dp_exposed = dp_exposed_seconds(s, l, mc, stage_mb);
  if (s.model.is_moe() && l.ep > 1) {
    const double link =
        l.ep * l.tp > mc.gpus_per_machine ? mc.ib_bytes_per_second : mc.nvlink_bytes_per_second;
    const double share = static_cast<double>(l.ep - 1) / l.ep;
    e.ep_communication = m * layers * 4 * bsh * top_k(s.model) * share / link;
  }
  // Adam with FP32 masters as the generated step prices it (llm_generated_kernels.h). Under ZeRO each GPU
  // updates 1/dp of the rest and 1/(dp / ep) of its experts, as the run shards them
  // (workloads::shard_experts).
  const std::int64_t params = llm_stage_parameters(s, l, 0);
  const std::int64_t experts = llm_stage_expert_parameters(s, l, 0);
  const double updated = l.zero >= 1
                             ? static_cast<double>(params - experts) / l.dp +
                                   static_cast<double>(experts) / workloads::expert_replicas(l.dp, l.ep)
                             : static_cast<double>(params);
  e.optimizer = llm_optimizer_seconds(s, l, mc, updated);
  return e;
}

}  // namespace hybridsim::analysis

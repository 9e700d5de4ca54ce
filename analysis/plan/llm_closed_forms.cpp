#include "analysis/plan/llm_closed_forms.h"

#include <algorithm>
#include <limits>

#include "analysis/plan/llm_generated_kernels.h"
#include "analysis/plan/llm_zero3_overlap.h"
#include "sim/error.h"
#include "workloads/generators/transformer_gemms.h"
#include "workloads/memory/pipeline_memory.h"
#include "workloads/memory/transformer_memory.h"
#include "workloads/program/sharded_data_parallel.h"

namespace hybridsim::analysis {

std::string llm_layout_problem(const LlmSetting& setting, const LlmLayout& l, int gpus_per_machine) {
  const workloads::TransformerModel& m = setting.model;
  try {
    workloads::check_transformer(m, l.tp);
  } catch (const InputError& e) {
    return e.what();
  }
  if (l.tp > gpus_per_machine) return "tp " + std::to_string(l.tp) + " spans machines";
  const int v = l.schedule == PipelineSchedule::Interleaved ? l.virtual_stages : 1;
  // GPipe and 1F1B take uneven stages (the run's balanced split); interleaved's chunk passes need
  // equal chunks.
  if (l.pp > m.layers)
    return "pp " + std::to_string(l.pp) + " is more than the " + std::to_string(m.layers) + " layers";
  if (v > 1 && m.layers % (static_cast<std::int64_t>(l.pp) * v) != 0)
    return std::to_string(m.layers) + " layers do not split into pp x v = " + std::to_string(l.pp * v);
  if (l.pp == 1 && (l.schedule != PipelineSchedule::OneFOneB || l.virtual_stages != 1))
    return "a schedule without a pipeline";
  const std::int64_t per_step = static_cast<std::int64_t>(l.dp) * l.micro_batch;
  if (l.global_batch % per_step != 0)
    return "global batch " + std::to_string(l.global_batch) + " is not a multiple of dp x micro-batch";
  // The pipeline's own rules are the ones `run` applies, so that the plan never ranks a layout its
  // run would refuse (interleaved with micro-batches not a multiple of pp, among others).
  if (l.pp > 1 && l.micro_batches() <= std::numeric_limits<int>::max())
    if (const auto problem = workloads::pipeline_problem(
            {.pp = l.pp, .schedule = l.schedule, .virtual_stages = l.virtual_stages},
            static_cast<int>(m.layers), static_cast<int>(l.micro_batches())))
      return problem->what;
  if (l.schedule != PipelineSchedule::GPipe && l.micro_batches() < l.pp)
    return "fewer micro-batches than stages";
  if (l.zero > 0 && l.dp == 1) return "ZeRO without data parallelism";
  // The rule `run` refuses by (scenarios/loader/resolve.cpp, apply_sharding_settings).
  if (!workloads::zero_runs_with_pipeline(l.zero, l.pp))
    return "ZeRO-" + std::to_string(l.zero) + " with a pipeline";
  if (l.sequence_parallel && l.tp == 1) return "sequence parallelism without tp";
  // The rule `run` refuses by (resolve_transformer.cpp, check_expert_parallel), as Megatron-LM does.
  if (m.is_moe() && l.tp > 1 && !l.sequence_parallel)
    return "a mixture under tp without sequence parallelism";
  if (l.ep > 1 && (m.experts % l.ep != 0 || l.dp % l.ep != 0))
    return "ep divides neither experts nor dp";
  return {};
}

namespace {

// An MoE layer holds `experts` MLPs, spread over ep ranks; a dense one its one MLP. Divided as the
// run's memory model divides them (workloads/memory/transformer_memory.h).
std::int64_t layer_parameters_per_rank(const LlmSetting& s, const LlmLayout& l) {
  return workloads::layer_parameters_per_rank(s.model, l.tp, l.ep);
}

bool first(const LlmLayout&, int stage) { return stage == 0; }
bool last(const LlmLayout& l, int stage) { return stage == l.pp - 1; }

double ring_factor(int n) { return n <= 1 ? 0.0 : 2.0 * (n - 1) / n; }

// The experts each token runs: top_k of a mixture's, a dense model's one MLP.
double top_k(const workloads::TransformerModel& m) { return m.is_moe() ? static_cast<double>(m.top_k) : 1.0; }

}  // namespace

std::int64_t llm_stage_layers(const LlmSetting& s, const LlmLayout& l, int stage) {
  if (l.pp <= 1 || s.model.layers % l.pp == 0 || l.pp > s.model.layers) return s.model.layers / l.pp;
  return workloads::balanced_layers(static_cast<int>(s.model.layers), l.pp)[static_cast<std::size_t>(stage)];
}

std::int64_t llm_max_stage_layers(const LlmSetting& s, const LlmLayout& l) {
  return (s.model.layers + l.pp - 1) / l.pp;  // balanced_layers' largest
}

std::string llm_stage_split_text(const LlmSetting& s, const LlmLayout& l) {
  if (l.pp <= 1 || s.model.layers % l.pp == 0 || l.pp > s.model.layers) return "";
  return "stages of " + workloads::balanced_layers_text(static_cast<int>(s.model.layers), l.pp) + " layers";
}

std::int64_t llm_stage_parameters(const LlmSetting& s, const LlmLayout& l, int stage) {
  std::int64_t p = llm_stage_layers(s, l, stage) * layer_parameters_per_rank(s, l);
  if (first(l, stage)) p += workloads::embedding_parameters_per_rank(s.model, l.tp);
  if (last(l, stage)) p += workloads::head_parameters_per_rank(s.model, l.tp);  // and the final norm
  return p;
}

std::int64_t llm_layers_held_times_v(const LlmSetting& s, const LlmLayout& l, int stage) {
  const std::int64_t per_stage = llm_stage_layers(s, l, stage), m = l.micro_batches();
  const std::int64_t v = l.schedule == PipelineSchedule::Interleaved ? l.virtual_stages : 1;
  if (l.pp == 1) return per_stage * v;
  switch (l.schedule) {
    case PipelineSchedule::GPipe:
      return m * per_stage;
    case PipelineSchedule::Interleaved: {
      // Chunk passes of L/(p·v) layers each, as Megatron-LM warms stage s up: (p − s − 1)·2 + (v − 1)·p
      // forwards and one in steady state ((L/p)(p + (p−1)/v) layers on the first stage), every one of
      // the m·v when m = p. Later stages were counted at min(p − s, m) micro-batches (the last stage
      // of GPT-3's dp 128 tp 8 pp 4 v 4 at 1,536 sequences at 2.44 GiB of activations, not 7.82), and
      // the first at p + (p−1)/v of them when m = p, more passes than the m·v there are.
      const std::int64_t all = m * v;
      const std::int64_t warm = (l.pp - stage - 1) * 2 + (v - 1) * l.pp + 1;
      return per_stage * (m == l.pp ? all : std::min(warm, all));
    }
    case PipelineSchedule::OneFOneB:
      break;
  }
  return per_stage * std::min<std::int64_t>(l.pp - stage, m);
}

LlmMemory llm_stage_memory(const LlmSetting& s, const LlmLayout& l, int stage) {
  workloads::TransformerMemoryInput in{.model = s.model,
                                       .micro_batch = l.micro_batch,
                                       .tp = l.tp,
                                       .sequence_parallel = l.sequence_parallel,
                                       .recompute = l.recompute,
                                       .flash_attention = s.flash_attention,
                                       .value_bytes = s.value_bytes,
                                       .zero = l.zero,
                                       .dp = l.dp,
                                       .ep = l.ep};
  LlmMemory r;
  r.stage = stage;
  // The weights (ZeRO-3's gathered pair in flight included), gradients and optimizer state as the
  // simulated memory model counts them, by its one function (a copy here divided a mixture's experts
  // by dp, where ZeRO shards them over the dp / ep replicas that hold them).
  const workloads::TransformerMemory state =
      workloads::model_state_memory(in, llm_stage_layers(s, l, stage), first(l, stage), last(l, stage));
  r.weights = state.weights;
  r.gradients = state.gradients;
  r.optimizer = state.optimizer;
  const std::int64_t v = l.schedule == PipelineSchedule::Interleaved ? l.virtual_stages : 1;
  std::int64_t act = workloads::layer_activation_bytes(in) * llm_layers_held_times_v(s, l, stage) / v;
  if (l.recompute == workloads::Recompute::Full) {
    in.recompute = workloads::Recompute::None;  // one layer's whole activations while it recomputes
    act += workloads::layer_activation_bytes(in);
  }
  // The loss's FP32 logits of every micro-batch the last stage holds for its backward, as the run's
  // memory model counts them (GPipe: all m; they were counted once).
  if (last(l, stage))
    act += workloads::pipeline_logits_bytes(in) *
           (l.pp == 1 ? 1
                      : workloads::logits_in_flight(
                            {.pp = l.pp, .schedule = l.schedule, .virtual_stages = static_cast<int>(v)},
                            static_cast<int>(l.micro_batches())));
  // Sequence parallelism's gathered input and norm-gradient buffers, as the run's memory model.
  r.activations = sim::Bytes::of(
      workloads::with_sequence_parallel_buffers(in, act, llm_stage_layers(s, l, stage), last(l, stage)));
  return r;
}

LlmMemory llm_peak_memory(const LlmSetting& s, const LlmLayout& l) {
  LlmMemory peak = llm_stage_memory(s, l, 0);
  if (l.pp == 1) return peak;
  // Equal stages peak on the first or the last (the embedding, the most micro-batches; the head and
  // logits); uneven ones can on the second, which holds a layer more than the first.
  const bool even = s.model.layers % l.pp == 0;
  for (int stage = even ? l.pp - 1 : 1; stage < l.pp; ++stage)
    if (const LlmMemory m = llm_stage_memory(s, l, stage); m.total() > peak.total()) peak = m;
  return peak;
}

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

namespace {

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

}  // namespace

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

std::int64_t llm_stage_expert_parameters(const LlmSetting& s, const LlmLayout& l, int stage) {
  if (l.ep <= 1) return 0;
  return llm_stage_layers(s, l, stage) * (workloads::layer_expert_parameters(s.model) / l.tp / l.ep);
}

namespace {

// The GEMMs of one micro-batch on one TP rank, by the generator's own sizes (transformer_gemms.h: they
// depend on the model, the micro-batch, tp, ep and sequence parallelism).
workloads::TransformerGemms gemms_of(const LlmSetting& s, const LlmLayout& l) {
  workloads::TransformerConfig c{.model = s.model, .micro_batch = l.micro_batch, .tp = l.tp, .ep = l.ep};
  c.sequence_parallel = l.sequence_parallel;
  return workloads::transformer_gemms(c);
}

}  // namespace

LlmLayerSeconds llm_layer_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc) {
  const workloads::TransformerGemms g = gemms_of(s, l);
  const auto gemm = [&](double flop) { return (flop + mc.gemm_half_flop) / mc.gemm_flop_per_second; };
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
  const double head =
      (static_cast<double>(gemms_of(s, l).lm_head) + mc.gemm_half_flop) / mc.gemm_flop_per_second;
  const LlmMemoryBound mb = llm_memory_bound_seconds(s, l, mc);
  return {mb.embedding_forward, mb.embedding_backward, head + mb.head_forward, 2 * head + mb.head_backward};
}

namespace {

// The slowest stage's compute of one micro-batch: its layers' kernels (llm_layer_seconds), the
// embedding's on the first stage and the LM head's on the last (llm_end_seconds).
double stage_micro_batch_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc) {
  const double per_layer = llm_layer_seconds(s, l, mc).total();
  const LlmEndSeconds ends = llm_end_seconds(s, l, mc);
  const double embedding = ends.embedding_forward + ends.embedding_backward;
  const double head = ends.head_forward + ends.head_backward;
  const auto first = static_cast<double>(llm_stage_layers(s, l, 0));
  if (l.pp == 1) return first * per_layer + embedding + head;
  // Uneven stages (balanced_layers): the first and the last hold the fewest layers, with the
  // embedding and the head; the middle ones the most. The slowest of the three kinds.
  const auto most = static_cast<double>(llm_max_stage_layers(s, l));
  const auto last = static_cast<double>(llm_stage_layers(s, l, l.pp - 1));
  return std::max({first * per_layer + embedding, most * per_layer, last * per_layer + head});
}

// The TP communication of one layer and micro-batch, as the generated step runs it
// (profile_gen_transformer.cpp), in gathers of s·b·h (a reduce-scatter is one, an all-reduce two).
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
    const double gemm = (static_cast<double>(flop) + mc.gemm_half_flop) / mc.gemm_flop_per_second;
    return sp ? 2 * std::max(0.0, half - gemm) : std::max(0.0, 2 * half - gemm);
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
  const double gemm =
      (static_cast<double>(gemms_of(s, l).lm_head) + mc.gemm_half_flop) / mc.gemm_flop_per_second;
  const double beside = sp ? 2 * std::max(0.0, half - gemm) : std::max(0.0, 2 * half - gemm);
  return {2 * half, (sp ? half : 0.0) + loss + beside};
}

// The slowest stage's TP communication of one micro-batch: its layers', the first stage's with the
// embedding's and the last's with the head's (one stage holds all three without a pipeline).
double stage_tensor_parallel_seconds(const LlmSetting& s, const LlmLayout& l, const LlmMachine& mc,
                                     double bsh) {
  const double per_layer = tensor_parallel_layer_seconds(s, l, mc, bsh);
  const EndsTp ends = tensor_parallel_end_seconds(s, l, mc, bsh);
  const auto first = static_cast<double>(llm_stage_layers(s, l, 0));
  if (l.pp == 1) return first * per_layer + ends.embedding + ends.head;
  const auto most = static_cast<double>(llm_max_stage_layers(s, l));
  const auto last = static_cast<double>(llm_stage_layers(s, l, l.pp - 1));
  return std::max({first * per_layer + ends.embedding, most * per_layer, last * per_layer + ends.head});
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

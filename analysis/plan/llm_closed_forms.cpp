#include "analysis/plan/llm_closed_forms.h"

#include <algorithm>
#include <limits>

#include "sim/error.h"
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

std::int64_t llm_stage_expert_parameters(const LlmSetting& s, const LlmLayout& l, int stage) {
  if (l.ep <= 1) return 0;
  return llm_stage_layers(s, l, stage) * (workloads::layer_expert_parameters(s.model) / l.tp / l.ep);
}

}  // namespace hybridsim::analysis

#include "workloads/memory/transformer_memory.h"

#include <algorithm>
#include <vector>

#include "sim/error.h"

namespace hybridsim::workloads {

namespace {

// The experts' tokens on this GPU in 16-bit values: each its input and its three ffn-wide tensors.
std::int64_t moe_activation_bytes16(const TransformerMemoryInput& in) {
  const TransformerModel& m = in.model;
  const std::int64_t tokens = expert_tokens(m, m.sequence * in.micro_batch * in.ep) * (m.experts / in.ep);
  return 2 * tokens * (m.hidden + 3 * m.ffn_hidden / in.tp);
}

}  // namespace

std::int64_t layer_activation_bytes(const TransformerMemoryInput& in) {
  const TransformerModel& m = in.model;
  const std::int64_t s = m.sequence, b = in.micro_batch, h = m.hidden, a = m.heads, t = in.tp;
  const std::int64_t sbh = s * b * h;
  std::int64_t bytes16 = 0;
  if (in.recompute == Recompute::Full) {
    bytes16 = 2 * sbh / (in.sequence_parallel ? t : 1);  // the layer's input only
  } else {
    // 34 s·b·h split into 10 replicated (norms, dropouts; split too under SP) + 24 split by t.
    bytes16 = in.sequence_parallel ? 34 * sbh / t : 10 * sbh + 24 * sbh / t;
    const bool softmax_kept = in.recompute == Recompute::None && !in.flash_attention;
    if (softmax_kept) bytes16 += 5 * a * s * s * b / t;
    if (m.is_moe())
      bytes16 += moe_activation_bytes16(in) - (in.sequence_parallel ? 2 * sbh / t : 2 * sbh) - 16 * sbh / t;
  }
  std::int64_t bytes = bytes16 * in.value_bytes / 2;
  if (m.is_moe() && in.recompute != Recompute::Full) bytes += 4 * s * b * m.experts;  // router logits
  return bytes;
}

std::int64_t with_sequence_parallel_buffers(const TransformerMemoryInput& in, std::int64_t activations,
                                            std::int64_t layers, bool head) {
  if (!in.sequence_parallel || in.tp <= 1) return activations;
  const TransformerModel& m = in.model;
  const std::int64_t gathered = m.sequence * in.micro_batch * m.hidden * in.value_bytes;
  const std::int64_t norms =
      (layers * layer_replicated_parameters(m) + (head ? norm_parameters(m) : 0)) * in.value_bytes;
  return gathered + std::max(activations, norms);
}

std::int64_t layer_parameters_per_rank(const TransformerModel& m, int tp, int ep) {
  return layer_shared_parameters_per_rank(m, tp) +
         layer_expert_parameters(m) / std::max(tp, 1) / std::max(ep, 1);
}

std::int64_t zero3_gathered_bytes(const TransformerMemoryInput& in, std::int64_t layers, bool embedding,
                                  bool head) {
  if (in.zero < 3 || in.dp <= 1) return 0;
  const TransformerModel& m = in.model;
  const std::int64_t tp = std::max(in.tp, 1), ep = std::max(in.ep, 1);
  const std::int64_t experts = layer_expert_parameters(m);
  // The experts are sharded over the dp / ep replicas that hold them (model_state_memory): at dp =
  // ep each replica holds its experts whole, and nothing of them is gathered. Counting them in the
  // pair put Mixtral dp 2 x ep 2 x tp 8 under ZeRO-3 at 0.56 GiB of weights a GPU of a 2-layer
  // slice, more than the 0.41 it holds with no ZeRO at all.
  const bool experts_gathered = m.is_moe() && expert_replicas(in.dp, in.ep) > 1;
  std::vector<std::int64_t> ops;  // parameters per rank of each op gathered, in order
  if (embedding) ops.push_back(embedding_parameters_per_rank(m, in.tp));
  for (std::int64_t l = 0; l < layers; ++l) {
    ops.push_back(layer_shared_parameters_per_rank(m, in.tp));
    if (experts_gathered) ops.push_back(experts / tp / ep);
  }
  if (head) ops.push_back(head_parameters_per_rank(m, in.tp));
  std::int64_t pair = ops.empty() ? 0 : ops.front();
  for (std::size_t i = 1; i < ops.size(); ++i) pair = std::max(pair, ops[i - 1] + ops[i]);
  return (in.value_bytes == 2 ? 2 : 4) * pair;
}

TransformerMemory model_state_memory(const TransformerMemoryInput& in, std::int64_t layers, bool embedding,
                                     bool head) {
  const TransformerModel& m = in.model;
  // Megatron's padded vocabulary (a multiple of 128·tp): the embedding and head the step computes on;
  // the head's op holds the final norm too, whole on every TP rank (the profile's lm_head).
  const std::int64_t params = layers * layer_parameters_per_rank(m, in.tp, in.ep) +
                              (embedding ? embedding_parameters_per_rank(m, in.tp) : 0) +
                              (head ? head_parameters_per_rank(m, in.tp) : 0);
  // ZeRO shards each parameter over the replicas that hold it: a mixture's experts over the dp / ep
  // that hold the same experts (expert_parallel.h reduce-scatters their gradients over those), the
  // rest over all dp. Dividing the experts by dp counted Mixtral ep 8 dp 16 under ZeRO-1 at 5.06 GiB
  // of optimizer state a GPU, where its experts alone hold 31.5.
  const std::int64_t ep = std::max(in.ep, 1), dp = std::max(in.dp, 1);
  const std::int64_t expert = ep > 1 ? layers * (layer_expert_parameters(m) / std::max(in.tp, 1) / ep) : 0;
  const std::int64_t expert_dp = expert_replicas(in.dp, in.ep);
  const bool mixed = in.value_bytes == 2;
  // Bytes of `per_parameter` a parameter, each part divided by its group when ZeRO `stage` shards it.
  const auto held = [&](std::int64_t per_parameter, int stage) {
    if (in.zero < stage) return per_parameter * params;
    return per_parameter * (params - expert) / dp + per_parameter * expert / expert_dp;
  };
  TransformerMemory r;
  r.weights = sim::Bytes::of(held(mixed ? 2 : 4, 3) + zero3_gathered_bytes(in, layers, embedding, head));
  r.gradients = sim::Bytes::of(held(mixed ? 2 : 4, 2));
  r.optimizer = sim::Bytes::of(held(mixed ? 12 : 8, 1));
  return r;
}

TransformerMemory transformer_memory(const TransformerMemoryInput& in) {
  const TransformerModel& m = in.model;
  // The model's parameters counted layer by layer, as a pipeline's stages count them (the whole
  // model's sum, rounded once, was a second formula for the same count).
  TransformerMemory r = model_state_memory(in, m.layers, true, true);
  std::int64_t act = m.layers * layer_activation_bytes(in);
  if (in.recompute == Recompute::Full) {
    // One layer's full activations live while its backward recomputes it.
    TransformerMemoryInput kept = in;
    kept.recompute = Recompute::None;
    act += layer_activation_bytes(kept);
  }
  act += 4 * m.sequence * in.micro_batch * padded_vocab(m, in.tp) / in.tp;  // FP32 logits of the loss
  r.activations = sim::Bytes::of(with_sequence_parallel_buffers(in, act, m.layers, true));
  return r;
}

StepMemory transformer_step_memory(const TransformerMemoryInput& in) {
  return transformer_step_memory(in, transformer_memory(in));
}

StepMemory transformer_step_memory(const TransformerMemoryInput& in, const TransformerMemory& memory) {
  StepMemory out;
  const bool mixed = in.value_bytes == 2;
  out.rule = {.mixed_precision = mixed, .bytes_per_parameter = mixed ? 2 : 4, .optimizer_states = 2};
  out.options = {.dp = in.dp, .gradient_copies = false, .nccl_channels = 0, .nccl_connections_per_channel = 0,
                 .framework = sim::Bytes()};
  RankMemory rank;
  rank.peak[MemoryPart::Weights] = memory.weights;
  rank.peak[MemoryPart::Gradients] = memory.gradients;
  rank.peak[MemoryPart::OptimizerState] = memory.optimizer;
  rank.peak[MemoryPart::Activations] = memory.activations;
  rank.after_step = memory.weights + memory.gradients + memory.optimizer;
  rank.timeline.push_back({MemoryPhase::Backward, 0, memory.total()});
  out.ranks.push_back(std::move(rank));
  return out;
}

TransformerMemoryInput largest_sharding(const TransformerMemoryInput& in, int gpus, int per_machine) {
  TransformerMemoryInput out = in;
  out.tp = 1;
  for (int t = per_machine; t > 1 && out.tp == 1; --t) {
    if (per_machine % t != 0 || gpus % t != 0) continue;
    try {
      check_transformer(in.model, t);
      out.tp = t;
    } catch (const InputError&) {  // heads, kv_heads or ffn_hidden do not split t ways
    }
  }
  out.dp = std::max(gpus / out.tp, 1);
  out.zero = out.dp > 1 ? 3 : 0;
  out.sequence_parallel = sequence_parallel_divides(in.model, out.tp);
  out.recompute = Recompute::Full;
  return out;
}

std::string transformer_memory_rule(const TransformerMemoryInput& in) {
  std::string out = "Korthikanti et al. 2022's activations; weights, gradients, optimizer / tp " +
                    std::to_string(in.tp);
  // The experts' share is divided by ep too (layer_parameters_per_rank): an ep run's line said "/ tp 1".
  if (in.ep > 1) out += " (the experts' also / ep " + std::to_string(in.ep) + ")";
  if (in.zero == 0 || in.dp <= 1) return out + "; no ZeRO (each replica holds them all)";
  const char* parts = in.zero == 1 ? "optimizer" : in.zero == 2 ? "gradients, optimizer"
                                                                : "weights, gradients, optimizer";
  // The experts' shards are over the dp / ep replicas that hold them (model_state_memory).
  const std::string experts = in.ep > 1
                                  ? " (the experts' / " + std::to_string(expert_replicas(in.dp, in.ep)) +
                                        ", the dp / ep replicas that hold them)"
                                  : "";
  return out + "; ZeRO-" + std::to_string(in.zero) + " over dp " + std::to_string(in.dp) + ": " + parts +
         " / " + std::to_string(in.dp) + experts +
         (in.zero >= 3 ? ", plus two ops' gathered weights in flight" : "");
}

void check_transformer_fits(const TransformerMemory& mem, sim::Bytes capacity, const std::string& model,
                            const std::string& where) {
  if (mem.total() <= capacity) return;
  // In GiB, as the run's memory line and plan's refusals: "needs 10.4 GB" beside a line in GiB.
  throw InputError(model + " needs " + format_gib(mem.total()) + " per GPU (weights " +
                   format_gib(mem.weights) + ", gradients " + format_gib(mem.gradients) + ", optimizer " +
                   format_gib(mem.optimizer) + ", activations " + format_gib(mem.activations) +
                   ") but the GPU has " + format_gib(capacity) + " (" + where +
                   "); expected a larger tp, sequence_parallel, recompute or zero");
}

}  // namespace hybridsim::workloads

#include "workloads/generators/transformer_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/error.h"
#include "sim/limits.h"

namespace hybridsim::workloads {
namespace {

// ../shared/reference/transformers.md, "Architectures" (model cards; Megatron-LM 2019 for the 1.2B).
const std::vector<TransformerModel>& named_models() {
  static const std::vector<TransformerModel> models = {
      {"bert-large", 24, 1024, 16, 16, 4096, FfnKind::Gelu, 30522, 512},
      {"gpt3-175b", 96, 12288, 96, 96, 49152, FfnKind::Gelu, 50257, 2048},
      {"megatron-1.2b", 40, 1536, 16, 16, 6144, FfnKind::Gelu, 50257, 1024},
      {"llama2-7b", 32, 4096, 32, 32, 11008, FfnKind::Swiglu, 32000, 4096},
      {"llama2-70b", 80, 8192, 64, 8, 28672, FfnKind::Swiglu, 32000, 4096},
      {"llama3-8b", 32, 4096, 32, 8, 14336, FfnKind::Swiglu, 128256, 8192},
      {"llama3-70b", 80, 8192, 64, 8, 28672, FfnKind::Swiglu, 128256, 8192},
      {"llama3-405b", 126, 16384, 128, 8, 53248, FfnKind::Swiglu, 128256, 8192},
      {"mixtral-8x7b", 32, 4096, 32, 8, 14336, FfnKind::Swiglu, 32000, 4096, 8, 2},
  };
  return models;
}

std::string num(std::int64_t v) { return std::to_string(v); }

}  // namespace

std::string_view ffn_kind_name(FfnKind kind) { return kind == FfnKind::Swiglu ? "swiglu" : "gelu"; }

FfnKind ffn_kind_by_name(std::string_view name) {
  if (name == "gelu") return FfnKind::Gelu;
  if (name == "swiglu") return FfnKind::Swiglu;
  throw InputError("unknown ffn \"" + std::string(name) + "\": expected gelu or swiglu");
}

std::vector<std::string> transformer_model_names() {
  std::vector<std::string> names;
  for (const auto& m : named_models()) names.push_back(m.name);
  return names;
}

bool is_transformer_model_name(std::string_view name) {
  for (const auto& m : named_models())
    if (m.name == name) return true;
  return false;
}

bool is_transformer_network(std::string_view network) {
  return network == "transformer" || is_transformer_model_name(network);
}

TransformerModel named_transformer(std::string_view name) {
  std::string list;
  for (const auto& m : named_models()) {
    if (m.name == name) return m;
    list += (list.empty() ? "" : ", ") + m.name;
  }
  throw InputError("unknown transformer \"" + std::string(name) + "\" (expected one of: " + list + ")");
}

void check_transformer(const TransformerModel& m, int tp) {
  if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0 || m.kv_heads <= 0 || m.ffn_hidden <= 0 ||
      m.vocab <= 0 || m.sequence <= 0)
    throw InputError(m.name + ": layers, hidden, heads, kv_heads, ffn_hidden, vocab and sequence must be "
                              "positive");
  if (tp < 1) throw InputError("tp must be at least 1, got " + num(tp));
  if (m.hidden % m.heads != 0)
    throw InputError(m.name + ": hidden " + num(m.hidden) + " is not divisible by heads " + num(m.heads) +
                     "; expected a multiple of heads");
  if (m.heads % m.kv_heads != 0)
    throw InputError(m.name + ": kv_heads " + num(m.kv_heads) + " does not divide heads " + num(m.heads) +
                     "; expected a divisor of heads");
  if (m.heads % tp != 0)
    throw InputError(m.name + ": heads " + num(m.heads) + " are not divisible by tp " + num(tp) +
                     "; expected tp dividing heads");
  if (m.kv_heads % tp != 0)
    throw InputError(m.name + ": kv_heads " + num(m.kv_heads) + " are not divisible by tp " + num(tp) +
                     "; expected tp dividing kv_heads (a KV head is not split)");
  if (m.ffn_hidden % tp != 0)
    throw InputError(m.name + ": ffn_hidden " + num(m.ffn_hidden) + " is not divisible by tp " + num(tp) +
                     "; expected tp dividing ffn_hidden");
}

void check_transformer_counts(const TransformerModel& m, std::int64_t micro_batch) {
  // In 128 bits: the int64 products these bound overflowed (sequence 1e8: "internal error:
  // transformer cost: negative work", exit 3).
  using Wide = __int128;
  const Wide b = micro_batch, s = m.sequence, h = m.hidden, kv = m.kv_heads * (m.hidden / m.heads);
  const Wide mlp = Wide{m.ffn == FfnKind::Swiglu ? 3 : 2} * h * m.ffn_hidden;
  const Wide active = m.is_moe() ? Wide{m.top_k} * mlp + h * m.experts : mlp;
  const Wide attention = 4 * b * s * s * h;
  const Wide layer = 2 * b * s * (2 * h * h + 2 * h * kv + active) + attention;
  const Wide logits = 2 * b * s * h * m.vocab;
  const std::int64_t limit = sim::limits::kLayerFlop.value;
  if (layer <= limit && logits <= limit) return;
  const auto sci = [](Wide v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2g", static_cast<double>(v));
    return std::string(text);
  };
  throw InputError(m.name + ": sequence " + num(m.sequence) + " at micro_batch " + num(micro_batch) +
                   " gives " +
                   (layer > limit ? "a layer of " + sci(layer) + " FLOPs a micro-batch (its attention, " +
                                        "4·b·s²·h, " + sci(attention) + ")"
                                  : "the LM head " + sci(logits) + " FLOPs a micro-batch") +
                   ", past the " + std::string(sim::limits::kLayerFlop.shown) +
                   " a layer's kernels may count; expected a smaller sequence, micro_batch or model");
}

// Megatron-LM asserts it (arguments.py: "sequence length must be divisible by tensor parallel size"
// under --sequence-parallel): each GPU of the group holds sequence / tp tokens of the LayerNorm and
// dropout activations, and a sequence of 1001 over tp 8 was simulated as 125 tokens a GPU (the
// activations 0.09 GiB where the layer holds 125.125 tokens' worth), with exit 0.
bool sequence_parallel_divides(const TransformerModel& m, int tp) { return tp > 1 && m.sequence % tp == 0; }

void check_sequence_parallel(const TransformerModel& m, int tp) {
  if (tp > 1 && !sequence_parallel_divides(m, tp))
    throw InputError(m.name + ": sequence " + num(m.sequence) + " is not divisible by tp " + num(tp) +
                     ", which sequence parallelism splits it over; expected a sequence that tp divides, or " +
                     "sequence_parallel false");
}

void check_experts(const TransformerModel& m, int ep) {
  if (ep < 1) throw InputError("ep must be at least 1, got " + num(ep));
  if (m.experts < 1) throw InputError(m.name + ": experts must be at least 1, got " + num(m.experts));
  if (!m.is_moe() && ep > 1)
    throw InputError(m.name + " has no experts, so ep " + num(ep) + " has nothing to divide; expected ep 1");
  if (m.experts % ep != 0)
    throw InputError(m.name + ": experts " + num(m.experts) + " are not divisible by ep " + num(ep) +
                     "; expected ep dividing experts");
  if (m.top_k < 1 || m.top_k > m.experts)
    throw InputError(m.name + ": top_k " + num(m.top_k) + " must be from 1 to experts " + num(m.experts));
  if (!(m.capacity_factor > 0)) throw InputError(m.name + ": capacity_factor must be positive");
}

int expert_replicas(int dp, int ep) { return std::max(dp / std::max(ep, 1), 1); }

std::int64_t expert_tokens(const TransformerModel& m, std::int64_t tokens) {
  const double share =
      static_cast<double>(tokens * m.top_k) * m.capacity_factor / static_cast<double>(m.experts);
  return static_cast<std::int64_t>(std::ceil(share - 1e-9));
}

std::int64_t layer_expert_parameters(const TransformerModel& m) {
  if (!m.is_moe()) return 0;
  return m.experts * (m.ffn == FfnKind::Swiglu ? 3 : 2) * m.hidden * m.ffn_hidden;
}

std::int64_t norm_parameters(const TransformerModel& m) {
  return m.ffn == FfnKind::Swiglu ? m.hidden : 2 * m.hidden;
}

std::int64_t layer_replicated_parameters(const TransformerModel& m) {
  const std::int64_t router = m.is_moe() ? m.hidden * m.experts : 0;
  return 2 * norm_parameters(m) + router;
}

std::int64_t layer_shared_parameters_per_rank(const TransformerModel& m, int tp) {
  const std::int64_t whole = layer_replicated_parameters(m);
  return (layer_parameters(m) - layer_expert_parameters(m) - whole) / std::max(tp, 1) + whole;
}

std::int64_t padded_vocab(const TransformerModel& m, int tp) {
  const std::int64_t unit = 128 * static_cast<std::int64_t>(tp);
  return (m.vocab + unit - 1) / unit * unit;
}

std::int64_t embedding_parameters_per_rank(const TransformerModel& m, int tp) {
  return padded_vocab(m, tp) * m.hidden / std::max(tp, 1);
}

std::int64_t head_parameters_per_rank(const TransformerModel& m, int tp) {
  return embedding_parameters_per_rank(m, tp) + norm_parameters(m);
}

std::int64_t layer_parameters(const TransformerModel& m) {
  const std::int64_t h = m.hidden, kv = m.kv_heads * (h / m.heads);
  const std::int64_t mlp = (m.ffn == FfnKind::Swiglu ? 3 : 2) * h * m.ffn_hidden;
  const std::int64_t norms = 2 * norm_parameters(m);
  if (m.is_moe()) return 2 * h * h + 2 * h * kv + layer_expert_parameters(m) + h * m.experts + norms;
  return 2 * h * h + 2 * h * kv + mlp + norms;
}

std::int64_t transformer_parameters(const TransformerModel& m) {
  return m.layers * layer_parameters(m) + 2 * m.vocab * m.hidden + norm_parameters(m);
}

std::int64_t layer_forward_flop(const TransformerModel& m, std::int64_t b) {
  const std::int64_t h = m.hidden, s = m.sequence, kv = m.kv_heads * (h / m.heads);
  const std::int64_t mlp = (m.ffn == FfnKind::Swiglu ? 3 : 2) * h * m.ffn_hidden;
  if (!m.is_moe()) return 2 * b * s * (2 * h * h + 2 * h * kv + mlp) + 4 * b * s * s * h;
  // The routed tokens past an expert's capacity skip it (dropped_token_share): not computed, so not
  // counted; at capacity_factor >= 1 the integer count is exact, as before.
  std::int64_t experts = 2 * b * s * m.top_k * mlp;
  if (m.capacity_factor < 1) experts = std::llround(static_cast<double>(experts) * m.capacity_factor);
  return 2 * b * s * (2 * h * h + 2 * h * kv + h * m.experts) + experts + 4 * b * s * s * h;
}

double dropped_token_share(const TransformerModel& m) {
  return m.is_moe() && m.capacity_factor < 1 ? 1 - m.capacity_factor : 0;
}

std::int64_t logits_forward_flop(const TransformerModel& m, std::int64_t b) {
  return 2 * b * m.sequence * m.hidden * m.vocab;
}

double model_flop_per_iteration(const TransformerModel& m, std::int64_t b, bool full_recompute) {
  // Summed in 128 bits and rounded once, so that a count within int64 is the double it was.
  using Wide = __int128;
  return static_cast<double>(Wide{full_recompute ? 4 : 3} * m.layers * layer_forward_flop(m, b) +
                             Wide{3} * logits_forward_flop(m, b));
}

}  // namespace hybridsim::workloads

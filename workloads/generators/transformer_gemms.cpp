#include "workloads/generators/transformer_gemms.h"

namespace hybridsim::workloads {

TransformerGemms transformer_gemms(const TransformerConfig& c) {
  const TransformerModel& m = c.model;
  const std::int64_t t = c.tp, h = m.hidden, tokens = c.micro_batch * m.sequence;
  const std::int64_t kv = m.kv_heads * (m.hidden / m.heads);
  const std::int64_t in_factor = m.ffn == FfnKind::Swiglu ? 2 : 1;
  // A mixture's local expert takes its share of the EP group's tokens (expert_tokens); dense, all.
  const std::int64_t mlp_tokens = m.experts > 1 ? expert_tokens(m, tokens * c.ep) : tokens;
  TransformerGemms g;
  g.qkv = 2 * tokens * h * (h + 2 * kv) / t;
  g.attention = 4 * c.micro_batch * m.sequence * m.sequence * h / t;
  g.attention_output = 2 * tokens * h * h / t;
  g.mlp_in = 2 * mlp_tokens * h * m.ffn_hidden * in_factor / t;
  g.mlp_out = 2 * mlp_tokens * m.ffn_hidden * h / t;
  g.mlps = m.experts > 1 ? m.experts / c.ep : 1;
  g.router = m.experts > 1 ? 2 * (tokens / (c.sequence_parallel ? t : 1)) * h * m.experts : 0;
  g.lm_head = 2 * tokens * h * padded_vocab(m, c.tp) / t;
  return g;
}

}  // namespace hybridsim::workloads

// GNMT v2 (NVIDIA DeepLearningExamples, PyTorch) as a profile, every recurrent layer unrolled: one
// op per layer per time step, edges (layer, t)→(layer, t+1) and (layer, t)→(layer+1, t), so that
// placing layers on different GPUs pipelines as a wavefront. Encoder: L0 bidirectional (two layers
// enc.L0.fw / enc.L0.bw, the latter running t+1→t), L1 2048→1024, L2.. with residual. Decoder: L0 is
// the attention RNN, Bahdanau attention per step, L1.. read [x, context], L2.. with residual.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/error.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/generators/profile_gen_detail.h"
#include "workloads/gpu/optimizer_cost.h"

namespace hybridsim::workloads {

namespace {

// The kernels of one LSTM time step (cuDNN-style: input GEMM, recurrent GEMM, fused pointwise).
struct LstmStep {
  std::int64_t batch, input, hidden;
  bool dropout;   // dropout on the step's input (covers the [x, context] concat too)
  bool residual;  // output = LSTM(x) + x

  void price(const KernelCostModel& cost, Op& op) const {
    const std::int64_t gates = 4 * hidden;
    const std::int64_t x_bytes = batch * input * cost.value_bytes();
    const std::int64_t h_bytes = batch * hidden * cost.value_bytes();
    // Pointwise: read both GEMM outputs (2×4H) and c, write h and c, keep the 4 gates: 15·H floats.
    const std::int64_t pointwise = 15 * h_bytes;
    if (dropout) op.forward.push_back(cost.memory("dropout", 3 * x_bytes));
    op.forward.push_back(cost.gemm("gemm_input", 2 * batch * input * gates));
    op.forward.push_back(cost.gemm("gemm_recurrent", 2 * batch * hidden * gates));
    op.forward.push_back(cost.memory("lstm_pointwise", pointwise));
    if (residual) op.forward.push_back(cost.memory("residual_add", 3 * h_bytes));
    op.backward.push_back(cost.memory("lstm_pointwise_grad", pointwise));
    op.backward.push_back(cost.gemm("gemm_dgrad_recurrent", 2 * batch * gates * hidden));
    op.backward.push_back(cost.gemm("gemm_dgrad_input", 2 * batch * gates * input));
    op.backward.push_back(cost.gemm("gemm_wgrad", 2 * batch * gates * (input + hidden)));
    if (dropout) op.backward.push_back(cost.memory("dropout_grad", 2 * x_bytes));
  }
  // PyTorch nn.LSTM: W_ih, W_hh and two bias vectors.
  std::int64_t parameters() const { return 4 * hidden * (input + hidden) + 8 * hidden; }
};

std::string step_name(const std::string& layer, int t) { return layer + ".t" + std::to_string(t); }

class GnmtBuilder {
 public:
  GnmtBuilder(Profile& p, const KernelCostModel& cost, const GnmtConfig& c) : p_(p), cost_(cost), c_(c) {}

  // One unrolled LSTM layer; `below[t]` are the ops feeding step t. Steps are added in the order
  // they run (t = 0.. forward in time, or T−1..0 for the reverse direction); the gradient sits on
  // the op that runs last in backward, i.e. the first one added.
  std::vector<std::uint32_t> lstm_layer(const std::string& layer, int steps, bool reverse,
                                        const std::vector<std::vector<std::uint32_t>>& below,
                                        const LstmStep& shape) {
    std::vector<std::uint32_t> ids(static_cast<std::size_t>(steps));
    std::optional<std::uint32_t> previous;
    for (int k = 0; k < steps; ++k) {
      const int t = reverse ? steps - 1 - k : k;
      std::vector<std::uint32_t> inputs = below[static_cast<std::size_t>(t)];
      if (previous) inputs.push_back(*previous);
      Op op = detail::make_op(step_name(layer, t), layer, std::move(inputs),
                              c_.batch * c_.hidden * cost_.value_bytes(), t);
      shape.price(cost_, op);
      if (k == 0) detail::set_dense_gradient(op, shape.parameters(), cost_.value_bytes());
      previous = ids[static_cast<std::size_t>(t)] = detail::add_op(p_, std::move(op));
    }
    return ids;
  }

 private:
  Profile& p_;
  const KernelCostModel& cost_;
  const GnmtConfig& c_;
};

// Wraps single inputs so that lstm_layer can take per-step input lists.
std::vector<std::vector<std::uint32_t>> per_step(const std::vector<std::uint32_t>& a,
                                                 const std::vector<std::uint32_t>& b = {}) {
  std::vector<std::vector<std::uint32_t>> out(a.size());
  for (std::size_t t = 0; t < a.size(); ++t) {
    out[t].push_back(a[t]);
    if (!b.empty()) out[t].push_back(b[t]);
  }
  return out;
}

// What a generated GNMT profile records about itself: shapes, the calibration it rests on, notes.
void describe_gnmt(ProfileMetadata& m, const GnmtConfig& c, const KernelCostModel& cost,
                   std::int64_t tokens) {
  m.network = c.layers == 4 ? "gnmt" : "gnmt-" + std::to_string(c.layers);
  m.gpu = cost.gpu;
  m.precision = std::string(precision_name(cost.precision));
  m.batch_per_gpu = c.batch;
  m.sequence_length = c.source_length;
  m.target_length = c.target_length;
  m.throughput_unit = "tokens";
  m.units_per_step = tokens;
  m.measured_micro_batches = c.measured_micro_batches;
  // GNMT calibrates the V100's GEMM rates in both precisions; other GPUs are estimates.
  const bool amp = cost.precision == Precision::Amp;
  m.source =
      "generated by hybridsim (workloads/generators/profile_gen_gnmt.cpp): GNMT v2 shapes (NVIDIA "
      "DeepLearningExamples PyTorch: hidden 1024, vocabulary 32,320, shared embedding) " +
      detail::priced_by(cost, cost.calibrated,
                        std::string(amp ? "68,312" : "21,424") +
                            " tokens/s (source + target) at 128 sentences per GPU (DeepLearningExamples GNMT "
                            "README, " + (amp ? "mixed precision" : "FP32") + ", container 19.05)");
  m.notes =
      "recurrent layers unrolled per step (op <layer>.t<t>, layer field <layer>, step t); a layer's "
      "gradient sits on the op run last in backward (step 0; step T-1 for enc.L0.bw); attention.keys "
      "carries keys and encoder outputs; 24 source + 24 target tokens ~ 47.9 tokens per pair in "
      "NVIDIA's MLPerf logs";
  if (const std::string n = detail::precision_notes(cost); !n.empty()) m.notes += "; " + n;
}

// Bahdanau attention (normalized), one op per decoder step of `queries`; not recurrent. Each reads
// its query and the attention memory (keys and encoder outputs, op `keys`: B × Ts × H values). Its
// parameters (linear_q, the normalized v and its scale, the bias) sit on step 0, the last one in
// backward. Returns each step's context op.
std::vector<std::uint32_t> add_attention_steps(Profile& p, const KernelCostModel& cost,
                                               const std::vector<std::uint32_t>& queries, std::uint32_t keys,
                                               std::int64_t B, std::int64_t H, int Ts, std::int64_t e) {
  const std::int64_t memory = B * Ts * H * e;
  const auto Tt = static_cast<int>(queries.size());
  std::vector<std::uint32_t> context(static_cast<std::size_t>(Tt));
  const std::int64_t query_flop = 2 * B * H * H;
  for (int t = 0; t < Tt; ++t) {
    Op op = detail::make_op(step_name("attention", t), "attention",
                            {queries[static_cast<std::size_t>(t)], keys}, B * H * e, t);
    op.forward = {cost.gemm("gemm_query", query_flop), cost.memory("score_add", 2 * memory),
                  cost.memory("score_tanh", 2 * memory), cost.memory("score_dot", memory),
                  cost.memory("softmax", 3 * B * Ts * e), cost.memory("context", memory)};
    op.backward = {cost.memory("context_grad", 3 * memory),
                   cost.memory("softmax_grad", 3 * B * Ts * e),
                   cost.memory("score_dot_grad", 3 * memory), cost.memory("score_tanh_grad", 3 * memory),
                   cost.memory("score_add_grad", 3 * memory), cost.gemm("gemm_query_dgrad", query_flop),
                   cost.gemm("gemm_query_wgrad", query_flop)};
    if (t == 0) detail::set_dense_gradient(op, H * H + 2 * H + 1, e);
    context[static_cast<std::size_t>(t)] = detail::add_op(p, std::move(op));
  }
  return context;
}

// The parameter tensors, as PyTorch holds them (44 for GNMT-4): the shared embedding; per LSTM
// layer W_ih, W_hh, b_ih, b_hh; attention linear_q, linear_k, v, its normalization scalar and bias;
// the classifier's weight and bias.
std::vector<std::int64_t> gnmt_tensors(const GnmtConfig& c) {
  const std::int64_t H = c.hidden, V = c.vocabulary;
  std::vector<std::int64_t> t{V * H};
  auto lstm = [&](std::int64_t input) { t.insert(t.end(), {4 * H * input, 4 * H * H, 4 * H, 4 * H}); };
  lstm(H);  // enc.L0.fw
  lstm(H);  // enc.L0.bw
  lstm(2 * H);
  for (int l = 2; l < c.layers; ++l) lstm(H);
  lstm(H);  // dec.L0
  for (int l = 1; l < c.layers; ++l) lstm(2 * H);
  t.insert(t.end(), {H * H, H * H, H, 1, H, H * V, V});
  return t;
}

}  // namespace

Profile generate_gnmt(const GnmtConfig& c, const KernelCostModel& cost) {
  if (c.layers < 2 || c.batch <= 0 || c.source_length <= 0 || c.target_length <= 0 || c.hidden <= 0 ||
      c.vocabulary <= 0) {
    throw InputError("gnmt: needs at least 2 layers and positive batch, lengths, hidden, vocabulary");
  }
  Profile p;
  GnmtBuilder g(p, cost, c);
  const std::int64_t B = c.batch, H = c.hidden, V = c.vocabulary;
  const int Ts = c.source_length, Tt = c.target_length;
  const std::int64_t tokens = B * (Ts + Tt);
  const std::int64_t e = cost.value_bytes();

  // The shared source/target embedding: gather all rows; the dense gradient (PyTorch default) zeroes
  // the table and scatter-adds the rows.
  Op emb = detail::make_op("embedding", "embedding", {}, tokens * H * e);
  emb.forward = {cost.memory("embedding_gather", 2 * tokens * H * e)};
  emb.backward = {cost.memory("embedding_grad", V * H * e + 3 * tokens * H * e)};
  detail::set_dense_gradient(emb, V * H, e);
  const std::uint32_t embedding = detail::add_op(p, std::move(emb));
  const std::vector<std::uint32_t> src_emb(static_cast<std::size_t>(Ts), embedding);
  const std::vector<std::uint32_t> tgt_emb(static_cast<std::size_t>(Tt), embedding);

  // Encoder.
  const auto fw = g.lstm_layer("enc.L0.fw", Ts, false, per_step(src_emb), {B, H, H, false, false});
  const auto bw = g.lstm_layer("enc.L0.bw", Ts, true, per_step(src_emb), {B, H, H, false, false});
  auto enc = g.lstm_layer("enc.L1", Ts, false, per_step(fw, bw), {B, 2 * H, H, true, false});
  for (int l = 2; l < c.layers; ++l) {
    enc = g.lstm_layer("enc.L" + std::to_string(l), Ts, false, per_step(enc), {B, H, H, true, true});
  }

  // Attention memory: keys = linear_k(encoder outputs); the op's output carries the keys and the
  // encoder outputs (the values), which every decoder step reads.
  const std::int64_t memory = B * Ts * H * e;
  Op keys = detail::make_op("attention.keys", "attention", enc, 2 * memory);
  const std::int64_t keys_flop = 2 * B * Ts * H * H;
  keys.forward = {cost.gemm("gemm_keys", keys_flop)};
  keys.backward = {cost.gemm("gemm_dgrad", keys_flop), cost.gemm("gemm_wgrad", keys_flop)};
  detail::set_dense_gradient(keys, H * H, e);
  const std::uint32_t keys_id = detail::add_op(p, std::move(keys));

  // Decoder L0: the attention RNN over the target embedding.
  const auto dec0 = g.lstm_layer("dec.L0", Tt, false, per_step(tgt_emb), {B, H, H, false, false});

  // Bahdanau attention, one op per decoder step.
  const std::vector<std::uint32_t> context = add_attention_steps(p, cost, dec0, keys_id, B, H, Ts, e);

  // Decoder L1..: input [x, context]; residual from L2 on.
  auto dec = g.lstm_layer("dec.L1", Tt, false, per_step(dec0, context), {B, 2 * H, H, true, false});
  for (int l = 2; l < c.layers; ++l) {
    dec = g.lstm_layer("dec.L" + std::to_string(l), Tt, false, per_step(dec, context),
                       {B, 2 * H, H, true, true});
  }

  // Classifier over all target positions with its (label-smoothed) softmax cross-entropy.
  const std::int64_t logits = B * Tt * V * e;
  const std::int64_t logits_flop = 2 * B * Tt * H * V;
  Op cls = detail::make_op("classifier", "classifier", dec, logits);
  cls.forward = {cost.gemm("gemm_logits", logits_flop), cost.memory("softmax_xent", 4 * logits)};
  cls.backward = {cost.memory("softmax_xent_grad", 2 * logits), cost.gemm("gemm_dgrad", logits_flop),
                  cost.gemm("gemm_wgrad", logits_flop)};
  detail::set_dense_gradient(cls, H * V + V, e);
  detail::add_op(p, std::move(cls));

  // torch.optim.Adam (unfused, per tensor), clip_grad_norm_ and zero_grad over the 44 parameter
  // tensors (gnmt_training_loop.md §1; under AMP with apex O2's FP32 master passes).
  const OptimizerRecipe adam{OptimizerKind::Adam, OptimizerLaunch::PerOp, true, true};
  const std::vector<std::int64_t> tensors = gnmt_tensors(c);
  const sim::Time update = optimizer_update_time(cost, adam, tensors);
  const std::int64_t gradient_bytes = p.parameter_bytes().count();
  p.optimizer = OptimizerCost{
      "adam", sim::Time::ps(static_cast<std::int64_t>(
                  (static_cast<__int128>(update.ps()) << 30) / gradient_bytes))};
  p.ops[embedding].forward.front().idle_before = c.host_sync_gap * c.host_syncs;
  describe_gnmt(p.meta, c, cost, tokens);
  validate_profile(p);
  return p;
}

}  // namespace hybridsim::workloads

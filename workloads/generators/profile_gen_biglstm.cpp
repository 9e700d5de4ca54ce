// BigLSTM (Jozefowicz et al. 2016; the f-lm BIGLSTM configuration, TensorFlow) as a profile: a sparse
// embedding, 2 LSTMP layers (8192 cells projected to 1024) unrolled per time step, and a sampled
// softmax over 793,470 words whose gradient, like the embedding's, is sparse (IndexedSlices).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/error.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/generators/profile_gen_detail.h"

namespace hybridsim::workloads {

namespace {

// One LSTMP time step: gates = [x, h_prev] · W (+ b), fused pointwise, projection h = m · W_proj.
void price_lstmp_step(const KernelCostModel& cost, const BigLstmConfig& c, Op& op) {
  const std::int64_t B = c.batch, C = c.cells, P = c.projection;
  const std::int64_t in = P + P;  // input (embedding or layer below, both P wide) and h_prev
  const std::int64_t gates_flop = 2 * B * in * 4 * C;
  const std::int64_t proj_flop = 2 * B * C * P;
  const std::int64_t x_bytes = B * P * cost.value_bytes();
  const std::int64_t pointwise = 15 * B * C * cost.value_bytes();  // as GNMT's cells: 15 values per cell
  op.forward = {cost.memory("dropout", 3 * x_bytes), cost.gemm("gemm_gates", gates_flop),
                cost.memory("lstm_pointwise", pointwise), cost.gemm("gemm_projection", proj_flop)};
  op.backward = {cost.gemm("gemm_projection_dgrad", proj_flop),
                 cost.gemm("gemm_projection_wgrad", proj_flop),
                 cost.memory("lstm_pointwise_grad", pointwise),
                 cost.gemm("gemm_gates_dgrad", gates_flop),
                 cost.gemm("gemm_gates_wgrad", gates_flop),
                 cost.memory("dropout_grad", 2 * x_bytes)};
}

}  // namespace

Profile generate_biglstm(const BigLstmConfig& c, const KernelCostModel& cost) {
  if (c.batch <= 0 || c.steps <= 0 || c.layers <= 0 || c.cells <= 0 || c.projection <= 0 ||
      c.vocabulary <= 0 || c.samples <= 0) {
    throw InputError("biglstm: every size must be positive");
  }
  Profile p;
  const std::int64_t B = c.batch, P = c.projection, V = c.vocabulary, S = c.samples;
  const std::int64_t tokens = B * c.steps;
  const std::int64_t e = cost.value_bytes();
  const std::int64_t row = P * e;

  // Embedding: gather B·T rows; its gradient is the B·T looked-up rows (IndexedSlices, not
  // de-duplicated), a sparse all-gather under data parallelism.
  Op emb = detail::make_op("embedding", "embedding", {}, tokens * row);
  emb.forward = {cost.memory("embedding_gather", 2 * tokens * row)};
  emb.backward = {cost.memory("embedding_grad", 2 * tokens * row)};
  detail::set_sparse_gradient(emb, V * P, e, tokens, row);
  std::vector<std::uint32_t> below(static_cast<std::size_t>(c.steps), detail::add_op(p, std::move(emb)));

  // LSTMP layers, unrolled; the layer's dense gradient sits on step 0 (run last in backward).
  for (int l = 0; l < c.layers; ++l) {
    const std::string layer = "lstm_" + std::to_string(l);
    std::vector<std::uint32_t> ids;
    for (int t = 0; t < c.steps; ++t) {
      std::vector<std::uint32_t> inputs{below[static_cast<std::size_t>(t)]};
      if (t > 0) inputs.push_back(ids.back());
      Op op = detail::make_op(layer + ".t" + std::to_string(t), layer, std::move(inputs),
                              B * P * e, t);
      price_lstmp_step(cost, c, op);
      // TF LSTMCell(num_proj): kernel (P + P) × 4C, bias 4C, projection C × P.
      if (t == 0) detail::set_dense_gradient(op, 2 * P * 4 * c.cells + 4 * c.cells + c.cells * P, e);
      ids.push_back(detail::add_op(p, std::move(op)));
    }
    below = ids;
  }

  // Sampled softmax: S shared candidates plus each position's true word. Its gradient touches
  // S + B·T rows of W (P floats) and of b (1 float), each with an index.
  const std::int64_t rows = S + tokens;
  const std::int64_t logits = tokens * (S + 1) * e;
  const std::int64_t sampled_flop = 2 * tokens * P * S;
  Op sm = detail::make_op("softmax", "softmax", below, logits);
  sm.forward = {cost.memory("gather_weights", 2 * rows * (P + 1) * e),
                cost.gemm("gemm_sampled_logits", sampled_flop),
                cost.memory("true_logits", 2 * tokens * row), cost.memory("softmax_xent", 4 * logits)};
  sm.backward = {cost.memory("softmax_xent_grad", 2 * logits), cost.gemm("gemm_dgrad", sampled_flop),
                 cost.gemm("gemm_wgrad", sampled_flop), cost.memory("true_logits_grad", 3 * tokens * row)};
  // Two IndexedSlices: W's rows (P values + index) and b's (1 value + index).
  detail::set_sparse_gradient(sm, V * P + V, e, rows, row + e + detail::kIndexBytes);
  detail::add_op(p, std::move(sm));

  // Adagrad (f-lm's optimizer; TensorFlow's fused ApplyAdagrad): reads w, g, accumulator and
  // writes w, accumulator; sparse tables update only the gathered rows.
  p.optimizer = OptimizerCost{"adagrad", cost.optimizer_time_per_gib(5)};
  ProfileMetadata& m = p.meta;
  m.network = "biglstm";
  m.gpu = cost.gpu;
  m.precision = std::string(precision_name(cost.precision));
  m.batch_per_gpu = B;
  m.sequence_length = c.steps;
  m.throughput_unit = "words";
  m.units_per_step = tokens;
  // Never calibrated: on V100 its GEMMs run at GNMT's calibrated rate of the precision.
  const std::string shapes =
      "generated by hybridsim (workloads/generators/profile_gen_biglstm.cpp): f-lm BIGLSTM shapes (2 x LSTMP "
      "8192/1024, vocabulary 793,470, sampled softmax 8192) ";
  m.source = cost.calibrated && cost.precision == Precision::Fp32
                 ? shapes + "priced by the V100 FP32 cost model; ESTIMATE: no public single-V100 figure, "
                            "its GEMMs run at the rate calibrated on GNMT (compare 4.5K words/s on a P100, "
                            "f-lm README)"
                 : shapes + detail::priced_by(cost, false, {}) + "; no public figure (compare 4.5K words/s "
                                                                 "FP32 on a P100, f-lm README)";
  m.notes =
      "LSTMP layers unrolled per step (op lstm_<l>.t<t>); a layer's gradient sits on step 0; "
      "embedding and softmax gradients are sparse all-gathers of the touched rows (values + int64 "
      "index per row, not de-duplicated)";
  if (const std::string n = detail::precision_notes(cost); !n.empty()) m.notes += "; " + n;
  validate_profile(p);
  return p;
}

}  // namespace hybridsim::workloads

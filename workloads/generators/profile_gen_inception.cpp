// Inception-V3 (torchvision's definition: 299×299 input, BasicConv2d = conv without bias + BatchNorm +
// ReLU, the auxiliary head on Mixed_6e) as a profile: one op per BasicConv2d, pooling and concat,
// every Mixed block's branches kept apart with their true inputs, layer = the block's name.
#include <optional>
#include <utility>

#include "sim/error.h"
#include "workloads/generators/profile_gen.h"
#include "workloads/generators/profile_gen_detail.h"

namespace hybridsim::workloads {

namespace {

// A feature map (channels × height × width per image) and the op that produced it (nullopt: images).
struct Tensor {
  std::int64_t c = 0, h = 0, w = 0;
  std::optional<std::uint32_t> op;
};

class InceptionBuilder {
 public:
  InceptionBuilder(Profile& profile, const KernelCostModel& cost, std::int64_t batch)
      : p_(profile), cost_(cost), batch_(batch) {}

  std::int64_t bytes(const Tensor& t) const { return t.c * t.h * t.w * cost_.value_bytes() * batch_; }

  // BasicConv2d: conv (no bias) + BatchNorm (γ, β) + ReLU; parameters k_h·k_w·C_in·C_out + 2·C_out.
  Tensor conv(const std::string& block, const std::string& name, const Tensor& in, std::int64_t cout,
              std::int64_t kh, std::int64_t kw, std::int64_t stride = 1, std::int64_t ph = 0,
              std::int64_t pw = 0) {
    Tensor out{cout, (in.h + 2 * ph - kh) / stride + 1, (in.w + 2 * pw - kw) / stride + 1, {}};
    const std::int64_t flop = 2 * batch_ * out.c * out.h * out.w * in.c * kh * kw;
    const std::int64_t y = bytes(out);
    Op op = detail::make_op(block + "." + name, block, inputs_of({in}), y);
    op.forward = {cost_.conv("conv", flop), cost_.memory("batchnorm", 3 * y), cost_.memory("relu", 2 * y)};
    op.backward = {cost_.memory("relu_grad", 3 * y), cost_.memory("batchnorm_grad", 5 * y)};
    if (in.op) op.backward.push_back(cost_.conv("conv_dgrad", flop));  // no gradient for the images
    op.backward.push_back(cost_.conv("conv_wgrad", flop));
    detail::set_dense_gradient(op, kh * kw * in.c * cout + 2 * cout, cost_.value_bytes());
    out.op = detail::add_op(p_, std::move(op));
    return out;
  }

  Tensor max_pool(const std::string& block, const std::string& name, const Tensor& in, std::int64_t k,
                  std::int64_t stride) {
    Tensor out{in.c, (in.h - k) / stride + 1, (in.w - k) / stride + 1, {}};
    Op op = detail::make_op(block + "." + name, block, inputs_of({in}), bytes(out));
    op.forward = {cost_.memory("max_pool", bytes(in) + bytes(out))};
    op.backward = {cost_.memory("max_pool_grad", 2 * (bytes(in) + bytes(out)))};
    out.op = detail::add_op(p_, std::move(op));
    return out;
  }

  Tensor avg_pool(const std::string& block, const std::string& name, const Tensor& in, std::int64_t k,
                  std::int64_t stride, std::int64_t pad = 0) {
    Tensor out{in.c, (in.h + 2 * pad - k) / stride + 1, (in.w + 2 * pad - k) / stride + 1, {}};
    Op op = detail::make_op(block + "." + name, block, inputs_of({in}), bytes(out));
    op.forward = {cost_.memory("avg_pool", bytes(in) + bytes(out))};
    op.backward = {cost_.memory("avg_pool_grad", bytes(in) + bytes(out))};
    out.op = detail::add_op(p_, std::move(op));
    return out;
  }

  Tensor concat(const std::string& block, const std::vector<Tensor>& parts) {
    Tensor out{0, parts.front().h, parts.front().w, {}};
    for (const auto& t : parts) out.c += t.c;
    Op op = detail::make_op(block + ".concat", block, inputs_of(parts), bytes(out));
    op.forward = {cost_.memory("concat", 2 * bytes(out))};
    op.backward = {cost_.memory("concat_grad", 2 * bytes(out))};
    out.op = detail::add_op(p_, std::move(op));
    return out;
  }

  // Fully connected classifier with its softmax cross-entropy loss (and dropout before it).
  void classifier(const std::string& block, const Tensor& in, std::int64_t classes, bool dropout) {
    const std::int64_t features = in.c * in.h * in.w;
    const std::int64_t flop = 2 * batch_ * features * classes;
    const std::int64_t logits = batch_ * classes * cost_.value_bytes();
    Op op = detail::make_op(block + ".fc", block, inputs_of({in}), logits);
    if (dropout) op.forward.push_back(cost_.memory("dropout", 3 * bytes(in)));
    op.forward.push_back(cost_.gemm("gemm", flop));
    op.forward.push_back(cost_.memory("softmax_xent", 4 * logits));
    op.backward = {cost_.memory("softmax_xent_grad", 2 * logits), cost_.gemm("gemm_dgrad", flop),
                   cost_.gemm("gemm_wgrad", flop)};
    if (dropout) op.backward.push_back(cost_.memory("dropout_grad", 2 * bytes(in)));
    detail::set_dense_gradient(op, features * classes + classes, cost_.value_bytes());
    detail::add_op(p_, std::move(op));
  }

  // An output read by k > 1 ops receives k gradients; their sum (read k, write 1) opens its backward.
  void add_gradient_sums() {
    std::vector<std::int64_t> consumers(p_.ops.size(), 0);
    for (const auto& op : p_.ops) {
      for (auto in : op.inputs) ++consumers[in];
    }
    for (std::size_t i = 0; i < p_.ops.size(); ++i) {
      if (consumers[i] < 2) continue;
      Op& op = p_.ops[i];
      op.backward.insert(op.backward.begin(),
                         cost_.memory("grad_sum", (consumers[i] + 1) * op.activation_bytes.count()));
    }
  }

 private:
  static std::vector<std::uint32_t> inputs_of(const std::vector<Tensor>& tensors) {
    std::vector<std::uint32_t> ids;
    for (const auto& t : tensors) {
      if (t.op) ids.push_back(*t.op);
    }
    return ids;
  }

  Profile& p_;
  const KernelCostModel& cost_;
  std::int64_t batch_;
};

// torchvision InceptionA: 1×1 | 1×1→5×5 | 1×1→3×3→3×3 | avgpool→1×1; 35×35 stays.
Tensor inception_a(InceptionBuilder& b, const std::string& n, const Tensor& x, std::int64_t pool) {
  Tensor b1 = b.conv(n, "branch1x1", x, 64, 1, 1);
  Tensor b5 = b.conv(n, "branch5x5_1", x, 48, 1, 1);
  b5 = b.conv(n, "branch5x5_2", b5, 64, 5, 5, 1, 2, 2);
  Tensor b3 = b.conv(n, "branch3x3dbl_1", x, 64, 1, 1);
  b3 = b.conv(n, "branch3x3dbl_2", b3, 96, 3, 3, 1, 1, 1);
  b3 = b.conv(n, "branch3x3dbl_3", b3, 96, 3, 3, 1, 1, 1);
  Tensor bp = b.avg_pool(n, "avgpool", x, 3, 1, 1);
  bp = b.conv(n, "branch_pool", bp, pool, 1, 1);
  return b.concat(n, {b1, b5, b3, bp});
}

// InceptionB (grid reduction 35→17): 3×3/2 | 1×1→3×3→3×3/2 | maxpool/2.
Tensor inception_b(InceptionBuilder& b, const std::string& n, const Tensor& x) {
  Tensor b3 = b.conv(n, "branch3x3", x, 384, 3, 3, 2);
  Tensor bd = b.conv(n, "branch3x3dbl_1", x, 64, 1, 1);
  bd = b.conv(n, "branch3x3dbl_2", bd, 96, 3, 3, 1, 1, 1);
  bd = b.conv(n, "branch3x3dbl_3", bd, 96, 3, 3, 2);
  Tensor bp = b.max_pool(n, "maxpool", x, 3, 2);
  return b.concat(n, {b3, bd, bp});
}

// InceptionC (17×17, factorized 7×7): 1×1 | 1×1→1×7→7×1 | 1×1→7×1→1×7→7×1→1×7 | avgpool→1×1.
Tensor inception_c(InceptionBuilder& b, const std::string& n, const Tensor& x, std::int64_t c7) {
  Tensor b1 = b.conv(n, "branch1x1", x, 192, 1, 1);
  Tensor b7 = b.conv(n, "branch7x7_1", x, c7, 1, 1);
  b7 = b.conv(n, "branch7x7_2", b7, c7, 1, 7, 1, 0, 3);
  b7 = b.conv(n, "branch7x7_3", b7, 192, 7, 1, 1, 3, 0);
  Tensor bd = b.conv(n, "branch7x7dbl_1", x, c7, 1, 1);
  bd = b.conv(n, "branch7x7dbl_2", bd, c7, 7, 1, 1, 3, 0);
  bd = b.conv(n, "branch7x7dbl_3", bd, c7, 1, 7, 1, 0, 3);
  bd = b.conv(n, "branch7x7dbl_4", bd, c7, 7, 1, 1, 3, 0);
  bd = b.conv(n, "branch7x7dbl_5", bd, 192, 1, 7, 1, 0, 3);
  Tensor bp = b.avg_pool(n, "avgpool", x, 3, 1, 1);
  bp = b.conv(n, "branch_pool", bp, 192, 1, 1);
  return b.concat(n, {b1, b7, bd, bp});
}

// InceptionD (grid reduction 17→8): 1×1→3×3/2 | 1×1→1×7→7×1→3×3/2 | maxpool/2.
Tensor inception_d(InceptionBuilder& b, const std::string& n, const Tensor& x) {
  Tensor b3 = b.conv(n, "branch3x3_1", x, 192, 1, 1);
  b3 = b.conv(n, "branch3x3_2", b3, 320, 3, 3, 2);
  Tensor b7 = b.conv(n, "branch7x7x3_1", x, 192, 1, 1);
  b7 = b.conv(n, "branch7x7x3_2", b7, 192, 1, 7, 1, 0, 3);
  b7 = b.conv(n, "branch7x7x3_3", b7, 192, 7, 1, 1, 3, 0);
  b7 = b.conv(n, "branch7x7x3_4", b7, 192, 3, 3, 2);
  Tensor bp = b.max_pool(n, "maxpool", x, 3, 2);
  return b.concat(n, {b3, b7, bp});
}

// InceptionE (8×8, expanded): 1×1 | 1×1→(1×3, 3×1) | 1×1→3×3→(1×3, 3×1) | avgpool→1×1.
Tensor inception_e(InceptionBuilder& b, const std::string& n, const Tensor& x) {
  Tensor b1 = b.conv(n, "branch1x1", x, 320, 1, 1);
  Tensor b3 = b.conv(n, "branch3x3_1", x, 384, 1, 1);
  Tensor b3a = b.conv(n, "branch3x3_2a", b3, 384, 1, 3, 1, 0, 1);
  Tensor b3b = b.conv(n, "branch3x3_2b", b3, 384, 3, 1, 1, 1, 0);
  Tensor bd = b.conv(n, "branch3x3dbl_1", x, 448, 1, 1);
  bd = b.conv(n, "branch3x3dbl_2", bd, 384, 3, 3, 1, 1, 1);
  Tensor bda = b.conv(n, "branch3x3dbl_3a", bd, 384, 1, 3, 1, 0, 1);
  Tensor bdb = b.conv(n, "branch3x3dbl_3b", bd, 384, 3, 1, 1, 1, 0);
  Tensor bp = b.avg_pool(n, "avgpool", x, 3, 1, 1);
  bp = b.conv(n, "branch_pool", bp, 192, 1, 1);
  return b.concat(n, {b1, b3a, b3b, bda, bdb, bp});
}

// InceptionAux on Mixed_6e: avgpool 5/3 → 1×1 (128) → 5×5 (768) → fc.
void aux_head(InceptionBuilder& b, const Tensor& x, std::int64_t classes) {
  const std::string n = "AuxLogits";
  Tensor t = b.avg_pool(n, "avgpool", x, 5, 3);
  t = b.conv(n, "conv0", t, 128, 1, 1);
  t = b.conv(n, "conv1", t, 768, 5, 5);
  b.classifier(n, t, classes, false);
}

}  // namespace

Profile generate_inception_v3(const InceptionConfig& config, const KernelCostModel& cost) {
  if (config.batch <= 0) throw InputError("inception-v3: batch must be positive");
  constexpr std::int64_t kClasses = 1000;
  Profile p;
  InceptionBuilder b(p, cost, config.batch);
  Tensor x{3, 299, 299, {}};
  x = b.conv("stem", "Conv2d_1a_3x3", x, 32, 3, 3, 2);
  x = b.conv("stem", "Conv2d_2a_3x3", x, 32, 3, 3);
  x = b.conv("stem", "Conv2d_2b_3x3", x, 64, 3, 3, 1, 1, 1);
  x = b.max_pool("stem", "maxpool1", x, 3, 2);
  x = b.conv("stem", "Conv2d_3b_1x1", x, 80, 1, 1);
  x = b.conv("stem", "Conv2d_4a_3x3", x, 192, 3, 3);
  x = b.max_pool("stem", "maxpool2", x, 3, 2);
  x = inception_a(b, "Mixed_5b", x, 32);
  x = inception_a(b, "Mixed_5c", x, 64);
  x = inception_a(b, "Mixed_5d", x, 64);
  x = inception_b(b, "Mixed_6a", x);
  x = inception_c(b, "Mixed_6b", x, 128);
  x = inception_c(b, "Mixed_6c", x, 160);
  x = inception_c(b, "Mixed_6d", x, 160);
  x = inception_c(b, "Mixed_6e", x, 192);
  if (config.aux_head) aux_head(b, x, kClasses);
  x = inception_d(b, "Mixed_7a", x);
  x = inception_e(b, "Mixed_7b", x);
  x = inception_e(b, "Mixed_7c", x);
  x = b.avg_pool("head", "avgpool", x, 8, 8);
  b.classifier("head", x, kClasses, true);
  b.add_gradient_sums();

  // SGD with momentum (TensorFlow's fused ApplyMomentum): reads w, g, v and writes w, v.
  p.optimizer = OptimizerCost{"sgd-momentum", cost.optimizer_time_per_gib(5)};
  ProfileMetadata& m = p.meta;
  m.network = "inception-v3";
  m.gpu = cost.gpu;
  m.precision = std::string(precision_name(cost.precision));
  m.batch_per_gpu = config.batch;
  m.throughput_unit = "images";
  m.units_per_step = config.batch;
  // Calibrated on V100 FP32 only; AMP and the other GPUs are estimates.
  m.source =
      "generated by hybridsim (workloads/generators/profile_gen_inception.cpp): torchvision Inception-V3 "
      "shapes "
      "(299x299, aux head) " +
      detail::priced_by(cost, cost.calibrated && cost.precision == Precision::Fp32,
                        "259 images/s at batch 64 (Lambda Labs V100 TensorFlow benchmark, synthetic data)");
  m.notes =
      "one op per BasicConv2d (conv+BN+ReLU), pooling and concat; Mixed-block branches are separate "
      "ops; layer = block; gradient bytes = " + std::to_string(cost.value_bytes()) +
      " x parameters; per-block shares checked against PipeDream's measured profile in workloads/README.md";
  if (const std::string p = detail::precision_notes(cost); !p.empty()) m.notes += "; " + p;
  validate_profile(p);
  return p;
}

}  // namespace hybridsim::workloads

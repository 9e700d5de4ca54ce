#include "workloads/generators/profile_gen.h"

#include <algorithm>

#include "sim/error.h"
#include "workloads/generators/profile_gen_detail.h"

namespace hybridsim::workloads {

namespace {

struct Builtin {
  const char* name;
  const char* file;  // the committed file's name without ".yaml" (and "_amp" under AMP)
};
constexpr Builtin kBuiltins[] = {{"inception-v3", "inception_v3"}, {"gnmt", "gnmt"}, {"biglstm", "biglstm"}};

const Builtin& builtin_by_name(std::string_view name) {
  for (const auto& b : kBuiltins) {
    if (name == b.name) return b;
  }
  std::string list;
  for (const auto& b : kBuiltins) list += (list.empty() ? "" : ", ") + std::string(b.name);
  throw InputError("unknown built-in profile \"" + std::string(name) + "\" (expected one of: " + list + ")");
}

}  // namespace

std::string canonical_network_name(std::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

std::vector<std::string> builtin_profile_names() {
  std::vector<std::string> names;
  for (const auto& b : kBuiltins) names.emplace_back(b.name);
  return names;
}

std::string builtin_profile_path(std::string_view name, Precision precision) {
  return std::string("workloads/profiles/v100/") + builtin_by_name(name).file +
         (precision == Precision::Amp ? "_amp" : "") + ".yaml";
}

Profile generate_builtin_profile(std::string_view name, const BuiltinProfileOptions& options) {
  const std::string_view canonical = builtin_by_name(name).name;
  const KernelCostModel cost = cost_model(gpu_by_key(options.gpu), options.precision);
  if (canonical == "inception-v3") return generate_inception_v3(InceptionConfig{}, cost);
  if (canonical == "gnmt") return generate_gnmt(GnmtConfig{}, cost);
  return generate_biglstm(BigLstmConfig{}, cost);
}

Profile builtin_profile(std::string_view name, const BuiltinProfileOptions& options) {
  return generate_builtin_profile(name, options);
}

namespace detail {

Op make_op(std::string name, std::string layer, std::vector<std::uint32_t> inputs,
           std::int64_t activation_bytes, std::optional<int> step) {
  Op op;
  op.name = std::move(name);
  op.layer = std::move(layer);
  op.step = step;
  op.inputs = std::move(inputs);
  op.activation_bytes = sim::Bytes::of(activation_bytes);
  return op;
}

void set_dense_gradient(Op& op, std::int64_t parameters, std::int64_t value_bytes) {
  op.gradient_bytes = sim::Bytes::of(parameters * value_bytes);
  op.exchange = GradientExchange::DenseAllReduce;
}

void set_sparse_gradient(Op& op, std::int64_t parameters, std::int64_t value_bytes, std::int64_t rows,
                         std::int64_t row_bytes) {
  op.gradient_bytes = sim::Bytes::of(parameters * value_bytes);
  op.exchange = GradientExchange::SparseAllGather;
  op.sparse_bytes_per_worker = sim::Bytes::of(rows * (row_bytes + kIndexBytes));
}

std::string priced_by(const KernelCostModel& cost, bool calibrated_here, const std::string& calibration) {
  const std::string model = "priced by the " + cost.label + " cost model";
  return calibrated_here ? model + ", calibrated to " + calibration
                         : model + "; ESTIMATE: " + cost.derivation;
}

std::string precision_notes(const KernelCostModel& cost) {
  if (cost.precision == Precision::Amp)
    return "AMP: GEMMs and convolutions on FP16 Tensor Cores; activations, memory-bound traffic and "
           "gradients in FP16 (2 bytes a value); the optimizer updates FP32 master weights at the FP32 "
           "cost per parameter";
  if (cost.tensor_cores)
    return "FP32 storage with GEMMs and convolutions on TF32 Tensor Cores (the frameworks' default "
           "for FP32 training on this GPU)";
  return {};
}

std::uint32_t add_op(Profile& profile, Op op) {
  for (auto in : op.inputs) {
    if (in >= profile.ops.size()) throw InternalError("generator: op " + op.name + " uses a later op");
  }
  profile.ops.push_back(std::move(op));
  return static_cast<std::uint32_t>(profile.ops.size() - 1);
}

}  // namespace detail

}  // namespace hybridsim::workloads

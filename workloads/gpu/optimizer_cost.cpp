#include "workloads/gpu/optimizer_cost.h"

#include "sim/error.h"

namespace hybridsim::workloads {
namespace {

// torch.optim's element-wise kernels per optimizer, FP32 weights and states (the header's table).
std::vector<std::int64_t> per_op_kernels(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::Sgd: return {12};
    case OptimizerKind::Momentum: return {8, 12, 12};
    case OptimizerKind::Adam: return {8, 12, 8, 12, 8, 8, 16};
    case OptimizerKind::Adagrad: return {12, 8, 8, 16};
  }
  return {};
}

// One fused kernel: reads weight, gradient and states, writes weight and states (4 bytes each).
std::int64_t fused_bytes(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::Sgd: return 12;
    case OptimizerKind::Momentum: return 20;
    case OptimizerKind::Adam: return 28;
    case OptimizerKind::Adagrad: return 20;
  }
  return 0;
}

// The update's passes at the streaming rate (cost_model.h: streaming_bandwidth).
KernelCostModel streaming(const KernelCostModel& cost) {
  KernelCostModel out = cost;
  out.memory_bandwidth = cost.streaming_bandwidth();
  return out;
}

}  // namespace

std::string_view optimizer_kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::Sgd: return "sgd";
    case OptimizerKind::Momentum: return "sgd-momentum";
    case OptimizerKind::Adam: return "adam";
    case OptimizerKind::Adagrad: return "adagrad";
  }
  return "?";
}

std::vector<OptimizerPass> optimizer_passes(const OptimizerRecipe& recipe, Precision precision) {
  const bool amp = precision == Precision::Amp;
  std::vector<OptimizerPass> out;
  if (amp) out.push_back({2 + 4, false});  // FP16 gradients unscaled into FP32 master gradients
  if (recipe.clip) {
    out.push_back({4, true});  // the norm of each tensor
    out.push_back({8, true});  // the scale pass
  }
  if (recipe.launch == OptimizerLaunch::PerOp) {
    for (const std::int64_t bytes : per_op_kernels(recipe.kind)) out.push_back({bytes, true});
  } else {
    out.push_back({fused_bytes(recipe.kind), recipe.launch == OptimizerLaunch::PerTensor});
  }
  if (amp) out.push_back({4 + 2, false});  // FP32 master weights copied to the FP16 model
  if (recipe.zero_grad) out.push_back({amp ? 2 : 4, true});
  return out;
}

std::int64_t optimizer_bytes_per_parameter(const OptimizerRecipe& recipe, Precision precision) {
  std::int64_t total = 0;
  for (const OptimizerPass& p : optimizer_passes(recipe, precision)) total += p.bytes_per_parameter;
  return total;
}

sim::Time optimizer_update_time(const KernelCostModel& kernels, const OptimizerRecipe& recipe,
                                std::span<const std::int64_t> tensor_elements) {
  const KernelCostModel cost = streaming(kernels);
  std::int64_t all = 0;
  for (const std::int64_t n : tensor_elements) {
    if (n <= 0) throw InternalError("optimizer: a parameter tensor without elements");
    all += n;
  }
  sim::Time total;
  for (const OptimizerPass& p : optimizer_passes(recipe, cost.precision)) {
    if (!p.per_tensor) {
      total += cost.memory("optimizer", p.bytes_per_parameter * all).duration;
      continue;
    }
    for (const std::int64_t n : tensor_elements)
      total += cost.memory("optimizer", p.bytes_per_parameter * n).duration;
  }
  return total;
}

}  // namespace hybridsim::workloads

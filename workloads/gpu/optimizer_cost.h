// The optimizer update as the kernels a framework launches: per optimizer, precision and launch
// style, each kernel's bytes of HBM traffic per parameter, priced by the cost model's memory-bound
// rate and launch floor (cost_model.h), one kernel per parameter tensor or one for all of them.
// Includes gradient-norm clipping, zero_grad and, under AMP, the FP32 master-weight passes.
//   OptimizerRecipe r{.kind = OptimizerKind::Adam, .launch = OptimizerLaunch::PerOp, .clip = true};
//   sim::Time t = optimizer_update_time(v100_fp32(), r, {4096, 4'194'304});
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/time.h"
#include "workloads/gpu/cost_model.h"

namespace hybridsim::workloads {

enum class OptimizerKind : std::uint8_t { Sgd, Momentum, Adam, Adagrad };
std::string_view optimizer_kind_name(OptimizerKind kind);  // "sgd", "sgd-momentum", "adam", "adagrad"

// How the update's element-wise work is launched.
enum class OptimizerLaunch : std::uint8_t {
  PerOp,      // torch.optim (2019–2020): one kernel per tensor per element-wise op (mul_, add_, ...)
  PerTensor,  // one fused kernel per tensor (TensorFlow's ApplyMomentum / ApplyAdagrad)
  MultiTensor // one kernel over all tensors (apex FusedAdam, multi_tensor_apply)
};

struct OptimizerRecipe {
  OptimizerKind kind = OptimizerKind::Momentum;
  OptimizerLaunch launch = OptimizerLaunch::PerTensor;
  bool clip = false;       // clip_grad_norm_: a norm per tensor (read) and a scale pass (read + write)
  bool zero_grad = false;  // gradients zeroed after the update (PyTorch); TensorFlow makes them anew
};

// One pass over the parameters: bytes of HBM traffic per parameter, and whether it is launched per
// tensor (true) or once over all tensors.
struct OptimizerPass {
  std::int64_t bytes_per_parameter = 0;
  bool per_tensor = true;
  bool operator==(const OptimizerPass&) const = default;
};

// The passes of one update (workloads/README.md, "The optimizer update", derives each):
// per element-wise op of torch.optim, FP32 weights and states (4 bytes each):
//   sgd: add_ 12; momentum: mul_ 8, add_ 12, update 12; adam: exp_avg mul_ 8 + add_ 12, exp_avg_sq
//   mul_ 8 + addcmul_ 12, sqrt 8 + add_ eps 8, addcdiv_ 16; adagrad: addcmul_ 12, sqrt 8, add_ 8,
//   addcdiv_ 16. Fused (per tensor or multi-tensor): one pass reading weight, gradient and states
//   and writing weight and states: sgd 12, momentum 20, adam 28, adagrad 20.
// clip: norm 4, scale 8 (FP32 master gradients under AMP). zero_grad: 4 (FP32) or 2 (FP16).
// AMP (apex O2): the FP16 gradients unscaled into FP32 master gradients (2 + 4) and the FP32
// master weights copied to the FP16 model (4 + 2), each one multi-tensor kernel.
std::vector<OptimizerPass> optimizer_passes(const OptimizerRecipe& recipe, Precision precision);
// Total bytes per parameter of one update (the sum of its passes).
std::int64_t optimizer_bytes_per_parameter(const OptimizerRecipe& recipe, Precision precision);

// The update of parameter tensors of these element counts on `cost`'s GPU: each per-tensor pass
// max(launch floor, bytes / memory-bound bandwidth) per tensor, each multi-tensor pass once over
// all of them.
sim::Time optimizer_update_time(const KernelCostModel& cost, const OptimizerRecipe& recipe,
                                std::span<const std::int64_t> tensor_elements);

}  // namespace hybridsim::workloads

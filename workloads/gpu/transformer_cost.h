// The kernel cost model of transformer workloads (workloads/generators/transformer_gen.h): GEMMs
// at an efficiency that grows with their size, time = (F + F½) / (η · peak) — a GEMM of F½ FLOPs
// runs at half the rate η·peak of large ones (tile and wave quantisation, launch) — memory-bound
// kernels at the GPU's memory-kernel bandwidth (cost_model.h's rule), each at least the launch
// floor; integer arithmetic throughout. η and F½ are calibrated on the one-GPU figures of
// ../shared/reference/transformers.md only (V100: Megatron 1.2B, η 92.1% with F½ chosen as 10^9;
// A100: Narayanan et al.'s 1 B GPT at micro-batch 1 and 16, one micro-batch per optimizer step,
// giving η 49% and F½ 8·10^10 once the unfused attention's score traffic and the Adam update are
// priced: the fixed ~74 ms per iteration the figure implies is only half the optimizer's, so F½
// keeps the rest); everything else (H100, H200, fp32, tf32, fp8, V100/A100 at other sizes'
// shapes is the same model) is an ESTIMATE derived by peak ratios, and says so.
//   TransformerCost c = transformer_cost(gpu_by_key("h100"), Precision::Bf16);
//   Kernel k = c.gemm("qkv", 2 * 8192 * 4096 * 6144);
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/time.h"
#include "sim/units.h"
#include "workloads/gpu/cost_model.h"
#include "workloads/gpu/gpu.h"
#include "workloads/profile/profile.h"

namespace hybridsim::workloads {

// Precisions (cost_model.h) for a transformer: fp32 on CUDA cores; tf32 on TF32 Tensor Cores (A100
// on); fp16/bf16/amp on 16-bit Tensor Cores with FP32 master weights; fp8: H100/H200 FP8 Tensor Cores
// (twice the 16-bit peak) for GEMMs, activations kept in 16 bits — always an estimate.

struct TransformerCost {
  std::string gpu;            // the GPU's model name ("H100-SXM5-80GB")
  std::string label;          // "H100 BF16"
  Precision precision = Precision::Bf16;
  bool calibrated = false;    // true only for the GPU and precision a one-GPU figure calibrates
  std::string derivation;     // how the rates were obtained
  std::int64_t peak_flop_per_second = 0;   // the dense peak of the GEMMs' math (MFU's denominator)
  std::int64_t gemm_flop_per_second = 0;   // η · peak: large GEMMs
  std::int64_t gemm_half_flop = 0;         // F½
  sim::Bandwidth memory_bandwidth;
  sim::Time launch_floor;
  KernelCostModel optimizer_cost;           // prices the optimizer's passes (optimizer_cost.h)

  // Bytes of a stored activation or gradient value: 4 (fp32, tf32) or 2.
  std::int64_t value_bytes() const;
  Kernel gemm(std::string name, std::int64_t flop) const;
  Kernel memory(std::string name, std::int64_t bytes) const;
};

// The calibrated constants (workloads/README.md, "Transformers"): η in parts per 10,000 of the
// 16-bit Tensor peak and F½ in FLOPs, per calibrated GPU chip ("v100", "a100").
struct TransformerCalibration {
  std::int64_t efficiency_bp = 0;
  std::int64_t half_flop = 0;
};
std::optional<TransformerCalibration> transformer_calibration(std::string_view chip);

// InputError when the GPU lacks the precision (tf32 or bf16 on a V100, fp8 before the H100).
TransformerCost transformer_cost(const Gpu& gpu, Precision precision);

}  // namespace hybridsim::workloads

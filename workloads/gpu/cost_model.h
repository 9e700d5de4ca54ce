// Kernel cost models of the built-in profiles: FLOPs at an achieved rate for GEMMs and convolutions,
// bytes at an achieved bandwidth for memory-bound kernels, a per-kernel floor, in exact integer
// arithmetic. Calibrated on ONE V100 (FP32: Inception-V3 and GNMT; AMP: GNMT), and derived for the
// other GPUs of the facts table (gpu.h) by one rule: rate = that GPU's peak for the kernel's
// math × the fraction of the V100's peak the calibration reached (workloads/README.md).
//   KernelCostModel m = cost_model(gpu_by_key("h100"), Precision::Amp);  // an estimate
//   Kernel k = m.gemm("gemm_input", 2 * 128 * 1024 * 4096);
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/time.h"
#include "sim/units.h"
#include "workloads/gpu/gpu.h"
#include "workloads/profile/profile.h"

namespace hybridsim::workloads {

// One vocabulary of precisions (`workload.precision`) for every network. fp32: FP32 storage (on
// A100/H100/H200 the GEMMs and convolutions of the built-in networks run on TF32 Tensor Cores, the
// frameworks' default there); tf32: the same, said explicitly; fp16 and bf16: 16-bit Tensor Cores
// with FP32 master weights, amp being mixed precision's usual name (FP16 on a V100, BF16 on later
// GPUs for transformers); fp8: H100/H200 FP8 GEMMs, transformers only, always an estimate.
enum class Precision : std::uint8_t { Fp32, Tf32, Fp16, Bf16, Amp, Fp8 };
std::string_view precision_name(Precision precision);  // "fp32", "amp", ...: a profile's metadata.precision
std::optional<Precision> find_precision(std::string_view name);
// InputError "expected fp32, tf32, fp16, bf16, amp or fp8".
Precision precision_by_name(std::string_view name);
// True for fp16, bf16 and amp: 16-bit activations and gradients over FP32 master weights.
bool is_sixteen_bit(Precision precision);
// The math of the built-in networks' cost model (fp32 or amp) that a precision asks for on a GPU:
// tf32 is fp32 on a GPU with TF32 Tensor Cores, fp16 is amp, bf16 is amp on a GPU with BF16;
// InputError for tf32 or bf16 on a V100 and for fp8 (the built-in networks have no FP8 model).
Precision builtin_math(const Gpu& gpu, Precision precision);

// Prices kernels on one GPU. Every duration is max(launch_floor, work / rate), rounded up to a
// whole nanosecond, in exact integer arithmetic (so generated files are identical on every machine).
struct KernelCostModel {
  std::string gpu;                          // metadata.gpu: "V100-SXM2-16GB"
  std::string label;                        // "V100 FP32", "H100 AMP": what profiles' sources say
  Precision precision = Precision::Fp32;
  bool calibrated = true;                   // false: derived from the V100 calibration (an estimate)
  bool tensor_cores = false;                // GEMMs and convolutions on Tensor Cores (FP16, or TF32)
  std::string derivation;                   // how the rates were obtained, for profiles' sources
  std::int64_t conv_flop_per_second = 0;    // effective rate of cuDNN convolutions
  std::int64_t gemm_flop_per_second = 0;    // GEMMs: LSTM gates, projections, classifiers
  sim::Bandwidth memory_bandwidth;          // achieved by memory-bound kernels (BN, ReLU, pooling)
  sim::Time launch_floor;                   // the shortest kernel

  // Bytes of one stored value: activations, memory-bound traffic, gradients (4 FP32, 2 FP16).
  std::int64_t value_bytes() const { return is_sixteen_bit(precision) ? 2 : 4; }
  Kernel conv(std::string name, std::int64_t flop) const;
  Kernel gemm(std::string name, std::int64_t flop) const;
  Kernel memory(std::string name, std::int64_t bytes) const;  // bytes read + written
  // The optimizer's time per GiB of gradient bytes when it moves `passes` × 4 bytes per parameter
  // (FP32 weights and states). Under AMP the update still works on FP32 master weights: reading the
  // FP16 gradient instead of an FP32 one saves 2 bytes per parameter and writing the FP16 copy of
  // the weights costs 2, so a parameter costs what it costs in FP32, and since gradients are FP16
  // a GiB of them is twice the parameters: twice the FP32 time per GiB.
  sim::Time optimizer_time_per_gib(std::int64_t passes) const;
  // What the optimizer's element-wise passes reach: they stream over whole parameter tensors
  // (megabytes each), more of HBM's peak than the small BN/ReLU kernels memory_bandwidth was
  // calibrated on. The reference prices one GNMT update, about 16 GB, at "of the order of 20 ms
  // on a V100" (../shared/reference/gnmt_training_loop.md section 1): 800 GB/s, 4/3 of the V100's
  // calibrated 600 GB/s; every GPU's rate is scaled alike.
  sim::Bandwidth streaming_bandwidth() const;
};

// The one-GPU calibration (V100-SXM2-16GB, ../shared/reference/calibration.md; values and their
// derivation in workloads/README.md).
struct V100Calibration {
  std::int64_t gemm_fp32_flop_per_second;    // GNMT FP32: 21,424 tokens/s
  std::int64_t conv_fp32_flop_per_second;    // Inception-V3 FP32: 259 images/s
  std::int64_t tensor_flop_per_second;       // GNMT AMP: 68,312 tokens/s (GEMMs; convolutions too)
  sim::Bandwidth memory_bandwidth;           // memory-bound kernels (PipeDream's BN+ReLU layers)
  sim::Time launch_floor;                    // the shortest kernel
};
V100Calibration v100_calibration();

// The cost model of a GPU of the facts table at a precision: the V100's calibrated models, and for
// the other GPUs the rule above (TF32 peak for fp32 on GPUs that have it, FP16 Tensor peak for amp,
// HBM peak for memory-bound kernels; the launch floor unchanged).
KernelCostModel cost_model(const Gpu& gpu, Precision precision);
// The calibrated V100 FP32 model.
KernelCostModel v100_fp32();
// What memory-bound kernels reach alone on `gpu`: its HBM peak × the V100's calibrated 600 / 900.
sim::Bandwidth memory_kernel_bandwidth(const Gpu& gpu);
// The shortest kernel, launch included, on every GPU (the V100's 5 us; nothing calibrates others).
sim::Time kernel_launch_floor();

}  // namespace hybridsim::workloads

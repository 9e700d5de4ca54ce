#include "workloads/gpu/cost_model.h"

#include "sim/error.h"

namespace hybridsim::workloads {
namespace {

constexpr __int128 kNsPerSecond = 1'000'000'000;

// ceil(work × 10^9 / rate) nanoseconds, not below the floor.
sim::Time priced(std::int64_t work, std::int64_t rate, sim::Time floor) {
  if (work < 0 || rate <= 0) throw InternalError("cost model: negative work or non-positive rate");
  const __int128 ns = (static_cast<__int128>(work) * kNsPerSecond + rate - 1) / rate;
  return max(sim::Time::ns(static_cast<std::int64_t>(ns)), floor);
}

// peak × calibrated / calibrated_peak, rounded down: the calibrated fraction of another peak.
std::int64_t scaled_rate(std::int64_t peak, std::int64_t calibrated, std::int64_t calibrated_peak) {
  return static_cast<std::int64_t>(static_cast<__int128>(peak) * calibrated / calibrated_peak);
}

// "989.4" for 989.4 TFLOP/s (tenths, rounded down: texts stay exact integers).
std::string tflops(std::int64_t flop_per_second) {
  const std::int64_t tenths = flop_per_second / 100'000'000'000;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

}  // namespace

std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::Fp32: return "fp32";
    case Precision::Tf32: return "tf32";
    case Precision::Fp16: return "fp16";
    case Precision::Bf16: return "bf16";
    case Precision::Amp: return "amp";
    case Precision::Fp8: return "fp8";
  }
  return "fp32";
}

std::optional<Precision> find_precision(std::string_view name) {
  for (const Precision p :
       {Precision::Fp32, Precision::Tf32, Precision::Fp16, Precision::Bf16, Precision::Amp, Precision::Fp8})
    if (precision_name(p) == name) return p;
  return std::nullopt;
}

Precision precision_by_name(std::string_view name) {
  if (const auto p = find_precision(name)) return *p;
  throw InputError("unknown precision \"" + std::string(name) +
                   "\": expected fp32, tf32, fp16, bf16, amp or fp8");
}

bool is_sixteen_bit(Precision precision) {
  return precision == Precision::Fp16 || precision == Precision::Bf16 || precision == Precision::Amp;
}

Precision builtin_math(const Gpu& gpu, Precision precision) {
  const std::string name(gpu.name);
  switch (precision) {
    case Precision::Fp32:
    case Precision::Amp: return precision;
    case Precision::Fp16: return Precision::Amp;
    case Precision::Tf32:
      if (gpu.tf32_flop_per_second == 0)
        throw InputError("the " + name + " has no TF32 Tensor Cores; expected fp32, fp16 or amp");
      return Precision::Fp32;
    case Precision::Bf16:
      if (gpu.tf32_flop_per_second == 0)
        throw InputError("the " + name + " has no BF16 Tensor Cores; expected fp32, fp16 or amp");
      return Precision::Amp;
    case Precision::Fp8: break;
  }
  throw InputError("the built-in networks (GNMT, Inception-V3, BigLSTM) have no FP8 model; fp8 is for "
                   "transformers; expected fp32, tf32, fp16, bf16 or amp");
}

Kernel KernelCostModel::conv(std::string name, std::int64_t flop) const {
  return Kernel{std::move(name), priced(flop, conv_flop_per_second, launch_floor)};
}

Kernel KernelCostModel::gemm(std::string name, std::int64_t flop) const {
  return Kernel{std::move(name), priced(flop, gemm_flop_per_second, launch_floor)};
}

Kernel KernelCostModel::memory(std::string name, std::int64_t bytes) const {
  return Kernel{std::move(name), priced(bytes, memory_bandwidth.bytes_per_second(), launch_floor), {},
                sim::KernelBound::Memory};
}

sim::Time KernelCostModel::optimizer_time_per_gib(std::int64_t passes) const {
  // passes × 4 bytes per parameter; a GiB of gradients holds 2^30 / value_bytes() parameters.
  return priced((passes << 30) * 4 / value_bytes(), streaming_bandwidth().bytes_per_second(),
                sim::Time::zero());
}

sim::Bandwidth KernelCostModel::streaming_bandwidth() const {
  constexpr std::int64_t kNumerator = 4;  // 800 / 600 GB/s on the V100 (the header says why)
  constexpr std::int64_t kDenominator = 3;
  return sim::Bandwidth::bytes_per_second(memory_bandwidth.bytes_per_second() * kNumerator / kDenominator);
}

V100Calibration v100_calibration() {
  // workloads/README.md, "The generator and its cost models": each constant reproduces its one-GPU
  // figure (calibration.md) within 0.1% (tests/unit/profile_builtin.cpp).
  return V100Calibration{.gemm_fp32_flop_per_second = 9'111'000'000'000,
                         .conv_fp32_flop_per_second = 12'300'000'000'000,
                         .tensor_flop_per_second = 32'111'000'000'000,
                         .memory_bandwidth = sim::Bandwidth::gb_per_second(600),
                         .launch_floor = sim::Time::us(5)};
}

sim::Bandwidth memory_kernel_bandwidth(const Gpu& gpu) {
  const Gpu& v100 = gpu_by_key("v100");
  return scaled_bandwidth(gpu.memory_bandwidth, v100_calibration().memory_bandwidth.bytes_per_second(),
                          v100.memory_bandwidth.bytes_per_second());
}

sim::Time kernel_launch_floor() { return v100_calibration().launch_floor; }

KernelCostModel cost_model(const Gpu& gpu, Precision asked) {
  const Precision precision = builtin_math(gpu, asked);
  const V100Calibration cal = v100_calibration();
  const Gpu& v100 = gpu_by_key("v100");
  KernelCostModel m;
  m.gpu = std::string(gpu.model);
  m.label = std::string(gpu.name.substr(0, gpu.name.find(' '))) + " " + upper(precision_name(precision));
  m.precision = precision;
  m.calibrated = gpu.chip == v100.key;
  m.memory_bandwidth = memory_kernel_bandwidth(gpu);
  m.launch_floor = cal.launch_floor;
  const std::string memory = "memory-bound kernels at " + sim::format_bandwidth(m.memory_bandwidth) + " (" +
                             sim::format_bandwidth(gpu.memory_bandwidth) + " HBM x the V100's 600 / 900)";
  if (precision == Precision::Fp32 && gpu.tf32_flop_per_second == 0) {
    // FP32 on CUDA cores: the V100's calibrated fractions of its FP32 peak, per kernel class.
    m.gemm_flop_per_second = scaled_rate(gpu.fp32_flop_per_second, cal.gemm_fp32_flop_per_second,
                                         v100.fp32_flop_per_second);
    m.conv_flop_per_second = scaled_rate(gpu.fp32_flop_per_second, cal.conv_fp32_flop_per_second,
                                         v100.fp32_flop_per_second);
    m.derivation = m.calibrated ? "calibrated on one V100 in FP32"
                                : "GEMMs and convolutions at the V100's FP32 fractions of " +
                                      tflops(gpu.fp32_flop_per_second) + " TFLOP/s FP32, " + memory;
    return m;
  }
  // Tensor Cores (FP16 under AMP, TF32 for fp32 where the GPU has it): the fraction of its Tensor
  // peak the V100 reached on GNMT AMP's GEMMs, for GEMMs and convolutions alike (cuDNN's Tensor-Core
  // convolutions are implicit GEMMs doing the direct count of multiplies).
  const bool tf32 = precision == Precision::Fp32;
  const std::int64_t peak = tf32 ? gpu.tf32_flop_per_second : gpu.fp16_tensor_flop_per_second;
  m.gemm_flop_per_second = scaled_rate(peak, cal.tensor_flop_per_second, v100.fp16_tensor_flop_per_second);
  m.conv_flop_per_second = m.gemm_flop_per_second;
  m.tensor_cores = true;
  m.derivation =
      m.calibrated
          ? "GEMMs and convolutions at the Tensor-Core rate calibrated on one V100 with GNMT AMP (" +
                tflops(cal.tensor_flop_per_second) + " of " + tflops(v100.fp16_tensor_flop_per_second) +
                " TFLOP/s), memory-bound kernels at " + sim::format_bandwidth(m.memory_bandwidth)
          : "GEMMs and convolutions at " + tflops(peak) + " TFLOP/s " + (tf32 ? "TF32" : "FP16") +
                " Tensor x the V100's AMP fraction " + tflops(cal.tensor_flop_per_second) + " / " +
                tflops(v100.fp16_tensor_flop_per_second) + ", " + memory;
  return m;
}

KernelCostModel v100_fp32() { return cost_model(gpu_by_key("v100"), Precision::Fp32); }

}  // namespace hybridsim::workloads

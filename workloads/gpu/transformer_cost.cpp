#include "workloads/gpu/transformer_cost.h"

#include "sim/error.h"

namespace hybridsim::workloads {
namespace {

constexpr __int128 kNsPerSecond = 1'000'000'000;

sim::Time priced_ns(__int128 work, std::int64_t rate, sim::Time floor) {
  if (work < 0 || rate <= 0) throw InternalError("transformer cost: negative work or non-positive rate");
  const __int128 ns = (work * kNsPerSecond + rate - 1) / rate;
  return max(sim::Time::ns(static_cast<std::int64_t>(ns)), floor);
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

std::int64_t peak_for(const Gpu& gpu, Precision p) {
  const std::string name(gpu.name);
  switch (p) {
    case Precision::Fp32: return gpu.fp32_flop_per_second;
    case Precision::Tf32:
      if (gpu.tf32_flop_per_second == 0) throw InputError("the " + name + " has no TF32 Tensor Cores");
      return gpu.tf32_flop_per_second;
    case Precision::Bf16:
      if (gpu.tf32_flop_per_second == 0) throw InputError("the " + name + " has no BF16 Tensor Cores");
      return gpu.fp16_tensor_flop_per_second;
    case Precision::Fp8:
      if (gpu.chip != "h100" && gpu.chip != "h200")
        throw InputError("fp8 needs an H100 or H200, not the " + name);
      return 2 * gpu.fp16_tensor_flop_per_second;
    case Precision::Fp16:
    case Precision::Amp: break;
  }
  return gpu.fp16_tensor_flop_per_second;
}

}  // namespace

std::int64_t TransformerCost::value_bytes() const {
  return precision == Precision::Fp32 || precision == Precision::Tf32 ? 4 : 2;
}

Kernel TransformerCost::gemm(std::string name, std::int64_t flop) const {
  return Kernel{std::move(name),
                priced_ns(static_cast<__int128>(flop) + gemm_half_flop, gemm_flop_per_second, launch_floor)};
}

Kernel TransformerCost::memory(std::string name, std::int64_t bytes) const {
  return Kernel{std::move(name), priced_ns(bytes, memory_bandwidth.bytes_per_second(), launch_floor), {},
                sim::KernelBound::Memory};
}

std::optional<TransformerCalibration> transformer_calibration(std::string_view chip) {
  // Fitted to the one-GPU figures of ../shared/reference/transformers.md (workloads/README.md,
  // "Transformers"), each case one micro-batch per optimizer step as measured, with the unfused
  // attention's score traffic and the Adam update priced at memory rates. A100: the two points of
  // Narayanan et al.'s Fig. 7 fix both: η 49% and F½ 8·10^10 FLOP (about 0.5 ms per GEMM, which
  // still carries overhead the model does not name). V100: one figure, F½ chosen as 10^9, η fitted.
  if (chip == "v100") return TransformerCalibration{.efficiency_bp = 9'210, .half_flop = 1'000'000'000};
  if (chip == "a100") return TransformerCalibration{.efficiency_bp = 4'900, .half_flop = 80'000'000'000};
  return std::nullopt;
}

TransformerCost transformer_cost(const Gpu& gpu, Precision precision) {
  TransformerCost c;
  c.gpu = std::string(gpu.model);
  c.precision = precision;
  c.label = std::string(gpu.name.substr(0, gpu.name.find(' '))) + " " +
            upper(precision_name(precision));
  c.peak_flop_per_second = peak_for(gpu, precision);
  const auto own = transformer_calibration(gpu.chip);
  // Newer chips take the A100's efficiency and its F½ scaled by the peak ratio (the same time
  // overhead per GEMM); other precisions on a calibrated chip take its 16-bit η and F½ likewise.
  const TransformerCalibration cal = own ? *own : *transformer_calibration("a100");
  const std::int64_t cal_peak = own ? gpu.fp16_tensor_flop_per_second
                                    : gpu_by_key("a100").fp16_tensor_flop_per_second;
  c.gemm_flop_per_second = static_cast<std::int64_t>(static_cast<__int128>(c.peak_flop_per_second) *
                                                     cal.efficiency_bp / 10'000);
  c.gemm_half_flop =
      static_cast<std::int64_t>(static_cast<__int128>(cal.half_flop) * c.peak_flop_per_second / cal_peak);
  c.memory_bandwidth = memory_kernel_bandwidth(gpu);
  c.launch_floor = kernel_launch_floor();
  c.calibrated = own.has_value() && is_sixteen_bit(precision) &&
                 (gpu.chip == "a100" || precision != Precision::Bf16);
  const std::string eta = std::to_string(cal.efficiency_bp / 100) + "." +
                          std::to_string(cal.efficiency_bp % 100 / 10) + "%";
  c.derivation = c.calibrated
                     ? "GEMMs at " + eta + " of the 16-bit Tensor peak with F½ " +
                           std::to_string(cal.half_flop) + " FLOP, calibrated on one " +
                           std::string(gpu.name) + " (transformers.md)"
                     : "ESTIMATE: GEMMs at the " + std::string(own ? gpu.name : "A100") +
                           "'s calibrated " + eta + " of this GPU's " +
                           upper(precision_name(precision)) +
                           " peak, F½ scaled by the peak ratio; memory-bound kernels at " +
                           sim::format_bandwidth(c.memory_bandwidth);
  c.optimizer_cost = cost_model(gpu, is_sixteen_bit(precision) || precision == Precision::Fp8
                                         ? Precision::Amp
                                         : Precision::Fp32);
  return c;
}

}  // namespace hybridsim::workloads

#include "workloads/gpu_spec.h"

#include "workloads/profile_gen.h"

namespace hybridsim::workloads {

sim::Bandwidth scaled_bandwidth(sim::Bandwidth bw, std::int64_t num, std::int64_t den) {
  return sim::Bandwidth::bytes_per_second(
      static_cast<std::int64_t>(static_cast<__int128>(bw.bytes_per_second()) * num / den));
}

std::optional<GpuSpec> find_gpu_spec(std::string_view gpu) {
  // V100: 80 SMs and 900 GB/s of HBM2 (NVIDIA's datasheet); memory-bound kernels reach 600 GB/s and
  // the shortest kernel takes 5 us: the calibrated cost model of the built-in profiles (v100_fp32).
  // Memory: 16 or 32 GB V100, 40 or 80 GB A100, 80 GB H100, 141 GB H200 (../shared/reference/
  // hardware.md), as GiB.
  const GpuCostModel v100 = v100_fp32();
  const bool has_32gb = gpu.find("32GB") != std::string_view::npos;
  if (gpu.find("V100") != std::string_view::npos)
    return GpuSpec{has_32gb ? "V100 32GB" : "V100", {80, sim::Bandwidth::gb_per_second(900), v100.memory_bandwidth},
                   v100.launch_floor, sim::Bytes::gib(has_32gb ? 32 : 16)};
  // Later GPUs (SMs and HBM from the vendors' datasheets): memory-bound kernels are assumed to reach
  // the V100's fraction of peak (600 / 900 = 2/3) and the same 5 us floor; nothing calibrates them.
  auto later = [&](std::string name, std::uint32_t sms, sim::Bandwidth peak, std::int64_t gib) {
    return GpuSpec{std::move(name), {sms, peak, scaled_bandwidth(peak, 2, 3)}, v100.launch_floor, sim::Bytes::gib(gib)};
  };
  if (gpu.find("A100") != std::string_view::npos)
    return gpu.find("80GB") != std::string_view::npos
               ? later("A100 80GB", 108, sim::Bandwidth::gb_per_second(2039), 80)
               : later("A100", 108, sim::Bandwidth::gb_per_second(1555), 40);
  if (gpu.find("H100") != std::string_view::npos) return later("H100", 132, sim::Bandwidth::gb_per_second(3350), 80);
  if (gpu.find("H200") != std::string_view::npos) return later("H200", 132, sim::Bandwidth::gb_per_second(4800), 141);
  return std::nullopt;
}

}  // namespace hybridsim::workloads

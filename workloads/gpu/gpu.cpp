#include "workloads/gpu/gpu.h"

#include <vector>

#include "sim/collective.h"
#include "sim/error.h"
#include "sim/text.h"
#include "workloads/gpu/cost_model.h"

namespace hybridsim::workloads {
namespace {

constexpr std::int64_t kTera = 1'000'000'000'000;

// hardware.md ("NVIDIA V100-SXM2-16GB"; "Newer GPUs and machines", vendor datasheets as tabulated
// by glennklockwood.com): SMs, dense peaks, HBM. H200 is the H100 chip with more, faster memory.
// Capacities: 16 GB V100, 80 / 40 GB A100, 80 GB H100, 141 GB H200; and the 32 GB V100 of the DGX-2
// (V100-SXM3-32GB), found by its name only: the same chip, clocks and HBM2 rate as the 16 GB part as
// far as this table goes (only the capacity differs), so its kernels are the 16 GB part's.
constexpr Gpu kGpus[] = {
    {.key = "v100",
     .chip = "v100",
     .model = "V100-SXM2-16GB",
     .name = "V100",
     .match = "V100",
     .variant = {},
     .sms = 80,
     .fp32_flop_per_second = 15'700'000'000'000,
     .tf32_flop_per_second = 0,
     .fp16_tensor_flop_per_second = 125 * kTera,
     .memory_bandwidth = sim::Bandwidth::gb_per_second(900),
     .memory_gib = 16},
    {.key = "a100",
     .chip = "a100",
     .model = "A100-SXM4-80GB",
     .name = "A100 80GB",
     .match = "A100",
     .variant = "80GB",
     .sms = 108,
     .fp32_flop_per_second = 19'500'000'000'000,
     .tf32_flop_per_second = 156 * kTera,
     .fp16_tensor_flop_per_second = 312 * kTera,
     .memory_bandwidth = sim::Bandwidth::gb_per_second(2039),
     .memory_gib = 80},
    {.key = "a100-40gb",
     .chip = "a100-40gb",
     .model = "A100-SXM4-40GB",
     .name = "A100",
     .match = "A100",
     .variant = {},
     .sms = 108,
     .fp32_flop_per_second = 19'500'000'000'000,
     .tf32_flop_per_second = 156 * kTera,
     .fp16_tensor_flop_per_second = 312 * kTera,
     .memory_bandwidth = sim::Bandwidth::gb_per_second(1555),
     .memory_gib = 40},
    {.key = "h100",
     .chip = "h100",
     .model = "H100-SXM5-80GB",
     .name = "H100",
     .match = "H100",
     .variant = {},
     .sms = 132,
     .fp32_flop_per_second = 66'900'000'000'000,
     .tf32_flop_per_second = 494'700'000'000'000,
     .fp16_tensor_flop_per_second = 989'400'000'000'000,
     .memory_bandwidth = sim::Bandwidth::gb_per_second(3350),
     .memory_gib = 80},
    {.key = "h200",
     .chip = "h200",
     .model = "H200-SXM-141GB",
     .name = "H200",
     .match = "H200",
     .variant = {},
     .sms = 132,
     .fp32_flop_per_second = 66'900'000'000'000,
     .tf32_flop_per_second = 494'700'000'000'000,
     .fp16_tensor_flop_per_second = 989'400'000'000'000,
     .memory_bandwidth = sim::Bandwidth::gb_per_second(4800),
     .memory_gib = 141},
    {.key = "v100-32gb",
     .chip = "v100",
     .model = "V100-SXM3-32GB",
     .name = "V100 32GB",
     .match = "V100",
     .variant = "32GB",
     .choosable = false,
     .sms = 80,
     .fp32_flop_per_second = 15'700'000'000'000,
     .tf32_flop_per_second = 0,
     .fp16_tensor_flop_per_second = 125 * kTera,
     .memory_bandwidth = sim::Bandwidth::gb_per_second(900),
     .memory_gib = 32},
};

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

std::span<const Gpu> gpu_table() { return kGpus; }

std::string gpu_key_list() {
  std::vector<std::string_view> keys;
  for (const Gpu& g : kGpus)
    if (g.choosable) keys.push_back(g.key);
  return sim::choice_list(keys);
}

const Gpu* find_gpu(std::string_view key_or_name) {
  for (const Gpu& g : kGpus)
    if (g.choosable && g.key == key_or_name) return &g;
  // A variant first ("A100 ... 80GB"), then the part's entry for any other name.
  for (const Gpu& g : kGpus)
    if (!g.variant.empty() && contains(key_or_name, g.match) && contains(key_or_name, g.variant)) return &g;
  for (const Gpu& g : kGpus)
    if (g.variant.empty() && contains(key_or_name, g.match)) return &g;
  return nullptr;
}

const Gpu& gpu_by_key(std::string_view key) {
  for (const Gpu& g : kGpus)
    if (g.choosable && g.key == key) return g;
  throw InputError("unknown GPU \"" + std::string(key) + "\": expected " + gpu_key_list());
}

const Gpu& gpu_by_key(std::string_view key, std::string_view option) {
  try {
    return gpu_by_key(key);
  } catch (const InputError& e) {
    throw InputError(std::string(option) + ": " + e.what());
  }
}

sim::GpuResources gpu_resources(const Gpu& gpu) {
  // Memory-bound kernels reach the V100's calibrated fraction of peak (600 of 900 GB/s) on every GPU:
  // cost_model.h, where the rule is written down.
  return {gpu.sms, gpu.memory_bandwidth, memory_kernel_bandwidth(gpu)};
}

sim::Bandwidth reduction_bandwidth(const Gpu* gpu) {
  if (gpu == nullptr) return sim::CollectiveConfig{}.reduction_bandwidth;
  return scaled_bandwidth(gpu->memory_bandwidth, 1, 4);
}

sim::Bandwidth scaled_bandwidth(sim::Bandwidth bw, std::int64_t num, std::int64_t den) {
  return sim::Bandwidth::bytes_per_second(
      static_cast<std::int64_t>(static_cast<__int128>(bw.bytes_per_second()) * num / den));
}

}  // namespace hybridsim::workloads

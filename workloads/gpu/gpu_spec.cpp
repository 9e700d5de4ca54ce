#include "workloads/gpu/gpu_spec.h"

#include "sim/error.h"
#include "workloads/gpu/cost_model.h"

namespace hybridsim::workloads {
namespace {

constexpr std::int64_t kTera = 1'000'000'000'000;

// hardware.md ("NVIDIA V100-SXM2-16GB"; "Newer GPUs and machines", vendor datasheets as tabulated
// by glennklockwood.com): SMs, dense peaks, HBM. H200 is the H100 chip with more, faster memory.
// Capacities: 16 GB V100 (a 32 GB part too), 80 / 40 GB A100, 80 GB H100, 141 GB H200.
constexpr GpuFacts kGpus[] = {
    {.key = "v100", .model = "V100-SXM2-16GB", .name = "V100", .match = "V100", .variant = {},
     .sms = 80, .fp32_flop_per_second = 15'700'000'000'000, .tf32_flop_per_second = 0,
     .fp16_tensor_flop_per_second = 125 * kTera, .memory_bandwidth = sim::Bandwidth::gb_per_second(900),
     .memory_gib = 16},
    {.key = "a100", .model = "A100-SXM4-80GB", .name = "A100 80GB", .match = "A100", .variant = "80GB",
     .sms = 108, .fp32_flop_per_second = 19'500'000'000'000, .tf32_flop_per_second = 156 * kTera,
     .fp16_tensor_flop_per_second = 312 * kTera, .memory_bandwidth = sim::Bandwidth::gb_per_second(2039),
     .memory_gib = 80},
    {.key = "a100-40gb", .model = "A100-SXM4-40GB", .name = "A100", .match = "A100", .variant = {},
     .sms = 108, .fp32_flop_per_second = 19'500'000'000'000, .tf32_flop_per_second = 156 * kTera,
     .fp16_tensor_flop_per_second = 312 * kTera, .memory_bandwidth = sim::Bandwidth::gb_per_second(1555),
     .memory_gib = 40},
    {.key = "h100", .model = "H100-SXM5-80GB", .name = "H100", .match = "H100", .variant = {},
     .sms = 132, .fp32_flop_per_second = 66'900'000'000'000, .tf32_flop_per_second = 494'700'000'000'000,
     .fp16_tensor_flop_per_second = 989'400'000'000'000, .memory_bandwidth = sim::Bandwidth::gb_per_second(3350),
     .memory_gib = 80},
    {.key = "h200", .model = "H200-SXM-141GB", .name = "H200", .match = "H200", .variant = {},
     .sms = 132, .fp32_flop_per_second = 66'900'000'000'000, .tf32_flop_per_second = 494'700'000'000'000,
     .fp16_tensor_flop_per_second = 989'400'000'000'000, .memory_bandwidth = sim::Bandwidth::gb_per_second(4800),
     .memory_gib = 141},
};

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace

std::span<const GpuFacts> gpu_facts() { return kGpus; }

std::string gpu_key_list() {
  std::string out;
  for (std::size_t i = 0; i < std::size(kGpus); ++i)
    out += (i == 0 ? "" : i + 1 == std::size(kGpus) ? " or " : ", ") + std::string(kGpus[i].key);
  return out;
}

const GpuFacts* find_gpu_facts_by_key(std::string_view key) {
  for (const GpuFacts& g : kGpus)
    if (g.key == key) return &g;
  return nullptr;
}

const GpuFacts& gpu_facts_by_key(std::string_view key) {
  if (const GpuFacts* g = find_gpu_facts_by_key(key)) return *g;
  throw InputError("unknown GPU \"" + std::string(key) + "\": expected " + gpu_key_list());
}

const GpuFacts* find_gpu_facts(std::string_view gpu) {
  // A variant first ("A100 ... 80GB"), then the model's entry for any other name.
  for (const GpuFacts& g : kGpus)
    if (!g.variant.empty() && contains(gpu, g.match) && contains(gpu, g.variant)) return &g;
  for (const GpuFacts& g : kGpus)
    if (g.variant.empty() && contains(gpu, g.match)) return &g;
  return nullptr;
}

sim::Bandwidth scaled_bandwidth(sim::Bandwidth bw, std::int64_t num, std::int64_t den) {
  return sim::Bandwidth::bytes_per_second(
      static_cast<std::int64_t>(static_cast<__int128>(bw.bytes_per_second()) * num / den));
}

std::optional<GpuSpec> find_gpu_spec(std::string_view gpu) {
  // Memory-bound kernels reach the V100's calibrated fraction of peak (600 of 900 GB/s) on every GPU,
  // and the shortest kernel is the V100's 5 us: cost_model.h, where the rule is written down.
  const GpuFacts* g = find_gpu_facts(gpu);
  if (g == nullptr) return std::nullopt;
  // The V100 comes as 16 and 32 GB parts with the same chip: only the capacity differs.
  const bool v100_32gb = g->key == "v100" && contains(gpu, "32GB");
  return GpuSpec{v100_32gb ? "V100 32GB" : std::string(g->name),
                 {g->sms, g->memory_bandwidth, memory_kernel_bandwidth(*g)}, kernel_launch_floor(),
                 sim::Bytes::gib(v100_32gb ? 32 : g->memory_gib)};
}

}  // namespace hybridsim::workloads

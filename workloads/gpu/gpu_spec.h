// The one table of GPU facts (vendor datasheets, ../shared/reference/hardware.md): per GPU model its
// key (what `workload.gpu` names), the name generated profiles record, SMs, peak FP32, TF32 and FP16
// Tensor-Core rates and peak memory bandwidth; and what a GPU offers to the kernels and collectives
// that share it, by the name a profile records (metadata.gpu): SMs, peak memory bandwidth, the
// bandwidth a memory-bound kernel reaches alone, and the shortest kernel. The stream executor uses
// the first three to slow kernels beside communication (sim/stream_executor.h); step programs price
// data-parallel copies with the last two; the cost models (cost_model.h) scale the V100 calibration
// by the peaks.
//   std::optional<GpuSpec> g = find_gpu_spec("V100-SXM2-16GB");   // g->resources.sms == 80
//   const GpuFacts& h = gpu_facts_by_key("h100");                 // h.sms == 132
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/gpu_program.h"
#include "sim/time.h"

namespace hybridsim::workloads {

// One GPU model. Rates are dense peaks in FLOP/s (sparsity doubles them; never used here).
struct GpuFacts {
  std::string_view key;          // "v100", "a100", "a100-40gb", "h100", "h200": workload.gpu's value
  std::string_view model;        // metadata.gpu of profiles generated for it ("H100-SXM5-80GB")
  std::string_view name;         // the short name reports print ("H100", "A100 80GB")
  std::string_view match;        // a profile GPU name containing this is this model ("A100")
  std::string_view variant;      // ... when it also contains this ("80GB"); empty: any other
  std::uint32_t sms = 0;
  std::int64_t fp32_flop_per_second = 0;         // vector FP32 (CUDA cores)
  std::int64_t tf32_flop_per_second = 0;         // TF32 Tensor Cores; 0: none (V100)
  std::int64_t fp16_tensor_flop_per_second = 0;  // FP16/BF16 Tensor Cores
  sim::Bandwidth memory_bandwidth;               // HBM peak
  std::int64_t memory_gib = 0;                   // HBM capacity, "80 GB" read as GiB (memory model)
};

// Every GPU model, in the order they are listed (v100, a100, a100-40gb, h100, h200).
std::span<const GpuFacts> gpu_facts();
// "v100, a100, a100-40gb, h100 or h200".
std::string gpu_key_list();
// By key; nullptr for an unknown one.
const GpuFacts* find_gpu_facts_by_key(std::string_view key);
// By key; InputError "unknown GPU "x": expected one of v100, ..." otherwise.
const GpuFacts& gpu_facts_by_key(std::string_view key);
// By a GPU name as profiles and presets record it ("V100-SXM2-16GB", "NVIDIA H100 80GB HBM3"):
// case-sensitive substrings "V100", "A100" (with "80GB": the 80 GB part), "H100", "H200".
const GpuFacts* find_gpu_facts(std::string_view gpu);

struct GpuSpec {
  std::string name;              // "V100", "A100 80GB", ...
  sim::GpuResources resources;   // SMs, peak memory bandwidth, memory-bound kernels' bandwidth
  sim::Time launch_floor;        // the shortest kernel, launch included
  // Memory capacity as the data sheet states it, read as binary units: a "16 GB" V100 has 16 GiB
  // (2^30 B) of HBM2 (workloads/README.md, "Memory per GPU").
  sim::Bytes memory{};
  bool operator==(const GpuSpec&) const = default;
};

// By the model in a profile's GPU name (find_gpu_facts; a V100 name with "32GB" is the 32 GB
// part, "V100 32GB"). nullopt for anything else: such a GPU's
// kernels are never slowed by communication and data-parallel copies are not priced.
std::optional<GpuSpec> find_gpu_spec(std::string_view gpu);

// A bandwidth × a fraction given as a ratio, rounded down (for memory-bound kernels' share of peak).
sim::Bandwidth scaled_bandwidth(sim::Bandwidth bw, std::int64_t num, std::int64_t den);

}  // namespace hybridsim::workloads

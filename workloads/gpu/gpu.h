// The one GPU concept: a GPU part (vendor datasheets, ../shared/reference/hardware.md) — its key
// (what `workload.gpu` names), the chip it shares calibration and kernels with, the name generated
// profiles record, SMs, peak FP32, TF32 and FP16 Tensor-Core rates, peak memory bandwidth and
// capacity — one row per part in one table (gpu_table()), found by its key or by the name a
// profile or preset records (find_gpu). What the simulation kernel sees of it (sim::GpuResources:
// SMs, peak memory bandwidth, the bandwidth a memory-bound kernel reaches alone) is derived from the
// row (gpu_resources, by the V100 calibration's rule in cost_model.h): the stream executor slows
// kernels beside communication with it (sim/stream_executor.h), step programs price data-parallel
// copies with it, and the cost models (cost_model.h) scale the V100 calibration by the peaks.
//   const Gpu* g = find_gpu("V100-SXM2-16GB");   // gpu_resources(*g).sms == 80
//   const Gpu& h = gpu_by_key("h100");          // h.sms == 132
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "sim/gpu_program.h"
#include "sim/time.h"

namespace hybridsim::workloads {

// One GPU part. Rates are dense peaks in FLOP/s (sparsity doubles them; never used here).
struct Gpu {
  std::string_view key;          // "v100", "a100", "a100-40gb", "h100", "h200": workload.gpu's value
  std::string_view chip;         // the key of the part whose kernels it runs ("v100" for both V100s)
  std::string_view model;        // metadata.gpu of profiles generated for it ("H100-SXM5-80GB")
  std::string_view name;         // the short name reports print ("H100", "A100 80GB")
  std::string_view match;        // a recorded GPU name containing this is this part ("A100")
  std::string_view variant;      // ... when it also contains this ("80GB"); empty: any other
  bool choosable = true;         // a value of workload.gpu (false: found by a recorded name only)
  std::uint32_t sms = 0;
  std::int64_t fp32_flop_per_second = 0;         // vector FP32 (CUDA cores)
  std::int64_t tf32_flop_per_second = 0;         // TF32 Tensor Cores; 0: none (V100)
  std::int64_t fp16_tensor_flop_per_second = 0;  // FP16/BF16 Tensor Cores
  sim::Bandwidth memory_bandwidth;               // HBM peak
  // HBM capacity as the data sheet states it, read as binary units: a "16 GB" V100 has 16 GiB
  // (2^30 B) of HBM2 (workloads/README.md, "Memory per GPU").
  std::int64_t memory_gib = 0;
  sim::Bytes memory() const { return sim::Bytes::gib(memory_gib); }
};

// Every GPU part, in the order they are listed (v100, a100, a100-40gb, h100, h200, then the parts
// found by name only).
std::span<const Gpu> gpu_table();
// The choosable keys: "v100, a100, a100-40gb, h100 or h200".
std::string gpu_key_list();
// The one lookup: a choosable key exactly ("h100"), else the name a profile or preset records
// ("V100-SXM2-16GB", "NVIDIA H100 80GB HBM3"): case-sensitive substrings "V100" (with "32GB": the
// 32 GB part), "A100" (with "80GB": the 80 GB part), "H100", "H200". nullptr for anything else: such
// a GPU's kernels are never slowed by communication and data-parallel copies are not priced.
const Gpu* find_gpu(std::string_view key_or_name);
// A choosable key; InputError "unknown GPU "x": expected one of v100, ..." otherwise.
const Gpu& gpu_by_key(std::string_view key);
// The same for a key an option gave: the error begins with the option ("--gpu: unknown GPU ...").
const Gpu& gpu_by_key(std::string_view key, std::string_view option);
// What the simulation kernel sees of the GPU: SMs, HBM peak, memory-bound kernels' bandwidth.
sim::GpuResources gpu_resources(const Gpu& gpu);

// The rate a receiving rank adds received bytes at when none is given (communication.reduction_bandwidth:
// auto, collective's --reduction-bandwidth left out): a quarter of the GPU's HBM peak, as the add reads
// two buffers and writes one (the V100's 900 GB/s gave the 225 GB/s every GPU had before; A100 80GB:
// 2,039 / 4 = 509.75 GB/s, H100: 837.5, H200: 1,200). A GPU not in the table (nullptr) keeps the
// V100's figure, sim::CollectiveConfig's default.
sim::Bandwidth reduction_bandwidth(const Gpu* gpu);

// A bandwidth × a fraction given as a ratio, rounded down (for memory-bound kernels' share of peak).
sim::Bandwidth scaled_bandwidth(sim::Bandwidth bw, std::int64_t num, std::int64_t den);

}  // namespace hybridsim::workloads

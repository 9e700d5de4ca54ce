// What a GPU offers to the kernels and collectives that share it, by the name a profile records
// (metadata.gpu): SMs, peak memory bandwidth, the bandwidth a memory-bound kernel reaches alone, and
// the shortest kernel, and its memory. The stream executor uses the first three to slow kernels
// beside communication (sim/stream_executor.h); step programs price data-parallel copies with the
// next two; the memory model (workloads/memory_model.h) checks a GPU's footprint against the last.
//   std::optional<GpuSpec> g = find_gpu_spec("V100-SXM2-16GB");   // g->resources.sms == 80
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "sim/gpu_program.h"
#include "sim/time.h"

namespace hybridsim::workloads {

struct GpuSpec {
  std::string name;              // "V100", "A100 80GB", ...
  sim::GpuResources resources;   // SMs, peak memory bandwidth, memory-bound kernels' bandwidth
  sim::Time launch_floor;        // the shortest kernel, launch included
  // Memory capacity as the data sheet states it, read as binary units: a "16 GB" V100 has 16 GiB
  // (2^30 B) of HBM2 (workloads/README.md, "Memory per GPU").
  sim::Bytes memory{};
  bool operator==(const GpuSpec&) const = default;
};

// By the model in a profile's GPU name (case-sensitive substrings "V100", "A100", "H100", "H200";
// an A100 name with "80GB" is the 80 GB part, a V100 name with "32GB" the 32 GB part). nullopt for anything else: such a GPU's kernels are
// never slowed by communication and data-parallel copies are not priced.
std::optional<GpuSpec> find_gpu_spec(std::string_view gpu);

// A bandwidth × a fraction given as a ratio, rounded down (for memory-bound kernels' share of peak).
sim::Bandwidth scaled_bandwidth(sim::Bandwidth bw, std::int64_t num, std::int64_t den);

}  // namespace hybridsim::workloads

// Text and JSON forms of a step's per-GPU memory (workloads/memory/memory_model.h) against the GPU's
// capacity: the peak of a GPU with its breakdown and headroom, the "does not fit" verdict that run,
// sweep, study and plan print, and the JSON object of a run summary. Memory is in GiB (2^30 B).
//   std::string why = does_not_fit_text(peaks, mapping, capacity);
//   // "does not fit: GPU 0 needs 16.9 GiB of 16 GiB: weights 6.62, optimizer 6.62, ..."
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/memory/memory_model.h"
#include "workloads/program/mapping.h"

namespace hybridsim::analysis {

// The key of the largest GPU's peak in a run's summary.json and summary.csv. The printed table names
// both peaks "peak memory", its value saying which GPU is which (memory_table_key).
inline constexpr std::string_view kLargestPeakKey = "peak memory, largest GPU";
// The name a memory_lines key has in the printed table: "peak memory" for kLargestPeakKey, else the key.
std::string_view memory_table_key(std::string_view key);

// The first global GPU rank holding MP rank `k` (worker 0's), or k when the mapping is empty.
int gpu_of_mp_rank(const workloads::WorkerMapping& mapping, int k);
// The MP rank of a global GPU rank under the mapping; 0 when the GPU is not in it.
int mp_rank_of_gpu(const workloads::WorkerMapping& mapping, int gpu);

// "15.2 GiB of 16 GiB (headroom 0.83 GiB): weights 6.62, optimizer 6.62, ..." (or "... of 16 GiB
// (0.70 GiB too much): ..."; without a capacity "15.2 GiB (capacity unknown): ...").
std::string memory_peak_text(const workloads::MemoryBreakdown& peak,
                             const std::optional<workloads::MemoryCapacity>& capacity);
// "does not fit: GPU 3 needs 16.9 GiB of 16 GiB: weights 6.62, ..." for a GPU of the largest rank:
// the critical GPU's worker's when `critical_gpu` is given (the critical GPU itself where it ties for
// the largest, as memory_lines names it), else worker 0's; empty when every rank fits or the capacity
// is unknown.
std::string does_not_fit_text(const std::vector<workloads::MemoryBreakdown>& peaks,
                              const workloads::WorkerMapping& mapping,
                              const std::optional<workloads::MemoryCapacity>& capacity,
                              std::optional<int> critical_gpu = std::nullopt);
// What the largest rank needs, whatever the capacity: its bytes, and as text "4.96 GiB on GPU 0 (weights
// 0.60, ...)" (plan's "nothing fits" refusal, nothing_fits.h, names the candidate that needs the least
// by it); one rank found once for both (planner.cpp found it twice, workloads::largest_peak beside).
struct LargestNeed {
  sim::Bytes bytes;
  std::string text;  // empty where there are no peaks
};
LargestNeed largest_need(const std::vector<workloads::MemoryBreakdown>& peaks,
                         const workloads::WorkerMapping& mapping);
// The lines a run prints: the critical GPU's peak ("peak memory") and, when another rank is larger,
// the largest (kLargestPeakKey); then the verdict. (key, value) pairs as run_metrics gives them; keys
// are unique, as summary.json's context needs.
std::vector<std::pair<std::string, std::string>> memory_lines(
    const workloads::StepMemory& memory, const workloads::WorkerMapping& mapping,
    const std::optional<workloads::MemoryCapacity>& capacity, int critical_gpu);
// The run summary's "memory" member: {"capacity_bytes", "capacity_source", "fits", "critical":
// {gpu, mp_rank, peak_bytes, parts...}, "largest": {...}, "per_mp_rank": [...], rule and options}.
std::string memory_json(const workloads::StepMemory& memory, const workloads::WorkerMapping& mapping,
                        const std::optional<workloads::MemoryCapacity>& capacity, int critical_gpu);

}  // namespace hybridsim::analysis

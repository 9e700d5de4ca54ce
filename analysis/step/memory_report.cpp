#include "analysis/step/memory_report.h"

#include "analysis/output/json_text.h"

#include <algorithm>

namespace hybridsim::analysis {
namespace {

using workloads::format_gib;
using workloads::MemoryBreakdown;

// "the largest" GPU's peak and its rank. GPUs of one MP rank hold the same peak, so the one named is
// in the critical GPU's worker, and the critical GPU itself where its rank ties for the largest: the
// "peak memory" line said "GPU 4 (critical, largest)" while the verdict said "GPU 0 needs" (worker
// 0's) in the same run.
struct Largest {
  int rank = 0;
  int gpu = 0;
  sim::Bytes bytes;
};
Largest largest_of(const std::vector<MemoryBreakdown>& peaks, const workloads::WorkerMapping& mapping,
                   std::optional<int> critical_gpu) {
  Largest l;
  l.rank = workloads::largest_rank(peaks);
  if (!peaks.empty()) l.bytes = peaks[static_cast<std::size_t>(l.rank)].total();
  l.gpu = gpu_of_mp_rank(mapping, l.rank);
  if (!critical_gpu) return l;
  for (const auto& worker : mapping.gpu_rank) {
    if (std::find(worker.begin(), worker.end(), *critical_gpu) == worker.end()) continue;
    const auto critical_rank = static_cast<std::size_t>(mp_rank_of_gpu(mapping, *critical_gpu));
    if (critical_rank < peaks.size() && peaks[critical_rank].total() == l.bytes)
      l.rank = static_cast<int>(critical_rank);
    if (l.rank < static_cast<int>(worker.size())) l.gpu = worker[static_cast<std::size_t>(l.rank)];
    break;
  }
  return l;
}

void rank_json(std::string& out, const MemoryBreakdown& b, int gpu, int rank) {
  out += "{\"gpu\": " + std::to_string(gpu) + ", \"mp_rank\": " + std::to_string(rank) +
         ", \"peak_bytes\": " + std::to_string(b.total().count());
  for (std::size_t p = 0; p < workloads::kMemoryPartCount; ++p) {
    out += ", ";
    append_json_string(
        out, std::string(workloads::memory_part_key(static_cast<workloads::MemoryPart>(p))) + "_bytes");
    out += ": " + std::to_string(b.bytes[p].count());
  }
  out += "}";
}

}  // namespace

std::string_view memory_table_key(std::string_view key) {
  return key == kLargestPeakKey ? std::string_view("peak memory") : key;
}

int gpu_of_mp_rank(const workloads::WorkerMapping& mapping, int k) {
  if (mapping.gpu_rank.empty() || k < 0 || k >= static_cast<int>(mapping.gpu_rank.front().size())) return k;
  return mapping.gpu_rank.front()[static_cast<std::size_t>(k)];
}

int mp_rank_of_gpu(const workloads::WorkerMapping& mapping, int gpu) {
  for (const auto& worker : mapping.gpu_rank)
    for (std::size_t k = 0; k < worker.size(); ++k)
      if (worker[k] == gpu) return static_cast<int>(k);
  return 0;
}

std::string memory_peak_text(const MemoryBreakdown& peak,
                             const std::optional<workloads::MemoryCapacity>& capacity) {
  std::string out = format_gib(peak.total());
  if (!capacity) {
    out += " (capacity unknown)";
  } else {
    out += " of " + format_gib(capacity->bytes);
    out += peak.total() <= capacity->bytes ? " (headroom " + format_gib(capacity->bytes - peak.total()) + ")"
                                           : " (" + format_gib(peak.total() - capacity->bytes) + " too much)";
  }
  return out + ": " + workloads::describe_parts(peak);
}

std::string does_not_fit_text(const std::vector<MemoryBreakdown>& peaks,
                              const workloads::WorkerMapping& mapping,
                              const std::optional<workloads::MemoryCapacity>& capacity,
                              std::optional<int> critical_gpu) {
  if (!capacity || workloads::fits_in(peaks, capacity->bytes)) return "";
  const Largest l = largest_of(peaks, mapping, critical_gpu);
  return "does not fit: GPU " + std::to_string(l.gpu) + " needs " + format_gib(l.bytes) + " of " +
         format_gib(capacity->bytes) + ": " +
         workloads::describe_parts(peaks[static_cast<std::size_t>(l.rank)]);
}

LargestNeed largest_need(const std::vector<MemoryBreakdown>& peaks, const workloads::WorkerMapping& mapping) {
  if (peaks.empty()) return {};
  const Largest l = largest_of(peaks, mapping, std::nullopt);
  return {l.bytes, format_gib(l.bytes) + " on GPU " + std::to_string(l.gpu) + " (" +
                       workloads::describe_parts(peaks[static_cast<std::size_t>(l.rank)]) + ")"};
}

std::vector<std::pair<std::string, std::string>> memory_lines(
    const workloads::StepMemory& memory, const workloads::WorkerMapping& mapping,
    const std::optional<workloads::MemoryCapacity>& capacity, int critical_gpu) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::vector<MemoryBreakdown> peaks = memory.peaks();
  if (peaks.empty()) return out;
  const int critical_rank = mp_rank_of_gpu(mapping, critical_gpu);
  const Largest l = largest_of(peaks, mapping, critical_gpu);
  const bool same = peaks[static_cast<std::size_t>(critical_rank)].total() == l.bytes;
  out.emplace_back("peak memory",
                   "GPU " + std::to_string(critical_gpu) +
                       (same ? " (critical, largest): " : " (critical): ") +
                       memory_peak_text(peaks[static_cast<std::size_t>(critical_rank)], capacity));
  if (!same)
    out.emplace_back(kLargestPeakKey, "GPU " + std::to_string(l.gpu) + " (largest): " +
                                        memory_peak_text(peaks[static_cast<std::size_t>(l.rank)], capacity));
  std::string verdict;
  if (!capacity)
    verdict = "capacity unknown (set cluster.gpu_memory)";
  else if (workloads::fits_in(peaks, capacity->bytes))
    verdict = "fits: every GPU within " + format_gib(capacity->bytes) + " (" + capacity->source + ")";
  else
    verdict = "does not fit: GPU " + std::to_string(l.gpu) + " needs " + format_gib(l.bytes) + " of " +
              format_gib(capacity->bytes) + " (" + capacity->source + "); simulated anyway";
  out.emplace_back("memory", verdict);
  if (!memory.rule.optimizer_known)
    out.emplace_back("memory note", "optimizer state unknown for this optimizer: counted as none");
  return out;
}

std::string memory_json(const workloads::StepMemory& memory, const workloads::WorkerMapping& mapping,
                        const std::optional<workloads::MemoryCapacity>& capacity, int critical_gpu) {
  const std::vector<MemoryBreakdown> peaks = memory.peaks();
  std::string out = "{\"capacity_bytes\": ";
  out += capacity ? std::to_string(capacity->bytes.count()) : "null";
  out += ", \"capacity_source\": ";
  if (capacity) append_json_string(out, capacity->source);
  else out += "null";
  out += ", \"fits\": ";
  out += !capacity ? "null" : workloads::fits_in(peaks, capacity->bytes) ? "true" : "false";
  out += ", \"mixed_precision\": ";
  out += memory.rule.mixed_precision ? "true" : "false";
  out += ", \"optimizer_states_per_parameter\": " + std::to_string(memory.rule.optimizer_states);
  if (peaks.empty()) return out + "}";
  const int critical_rank = mp_rank_of_gpu(mapping, critical_gpu);
  const Largest l = largest_of(peaks, mapping, critical_gpu);
  out += ",\n    \"critical\": ";
  rank_json(out, peaks[static_cast<std::size_t>(critical_rank)], critical_gpu, critical_rank);
  out += ",\n    \"largest\": ";
  rank_json(out, peaks[static_cast<std::size_t>(l.rank)], l.gpu, l.rank);
  out += ",\n    \"per_mp_rank\": [";
  for (std::size_t k = 0; k < peaks.size(); ++k) {
    out += k ? ",\n      " : "\n      ";
    rank_json(out, peaks[k], gpu_of_mp_rank(mapping, static_cast<int>(k)), static_cast<int>(k));
  }
  return out + "\n    ]}";
}

}  // namespace hybridsim::analysis

#include "analysis/step/step_footprint.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "analysis/step/step_bound.h"
#include "sim/collective.h"
#include "sim/execution_record.h"
#include "sim/heap_bytes.h"
#include "sim/network.h"
#include "sim/stream_executor.h"

namespace hybridsim::analysis {

namespace {

using sim::heap_array;
using sim::heap_block;

// The sizes of the executor's, the record's and the network's private entries, as sim/ exports them
// beside the static_asserts that hold them to the structs.
using Executor = sim::StreamExecutor;
constexpr std::int64_t kStreamState = Executor::kStreamStateBytes;  // StreamState, one cache line
constexpr std::int64_t kStreamInfo = Executor::kStreamInfoBytes;    // its program, index, work left, when
constexpr std::int64_t kMemberCheck = Executor::kMemberCheckBytes;  // a folded step's comparisons
constexpr std::int64_t kGpuState = Executor::kGpuStateBytes;        // GpuState, one cache line
constexpr std::int64_t kEventState = Executor::kEventStateBytes;    // recorded, its first and last waiter
constexpr std::int64_t kRecordEntry = sim::ExecutionRecord::kEntryBytes;  // per task simulated
// LinkServer (one cache line), its watch's end, its LinkQueue (a vector and its head).
constexpr std::int64_t kNetworkLink = sim::Network::kBytesPerLink;
// A shared task list's own block: std::make_shared's control block and the vector in it.
constexpr std::int64_t kSharedListBlock = 16 + 24;

constexpr auto kVector = static_cast<std::int64_t>(sizeof(std::vector<std::uint32_t>));
constexpr auto kPointer = static_cast<std::int64_t>(sizeof(void*));

}  // namespace

std::int64_t program_bytes(const workloads::StepProgram& program) {
  std::int64_t bytes = heap_array<sim::GpuProgram>(program.gpus.size());
  // A list shared by many streams (sim::TaskList::shifted_from) is one block, whoever holds it.
  std::vector<std::pair<const void*, std::size_t>> shared;
  for (const sim::GpuProgram& gpu : program.gpus) {
    bytes += heap_array<sim::StreamProgram>(gpu.streams.size());
    for (const sim::StreamProgram& stream : gpu.streams) {
      if (stream.tasks.is_shared()) {
        shared.emplace_back(stream.tasks.same_tasks(), stream.tasks.size());
        // Its own collectives but the first, its own (ZeRO's gather of experts apart from the rest).
        if (const std::size_t beside = stream.tasks.own_collectives_beside(); beside > 0)
          bytes += heap_array<sim::Task>(beside);
      } else
        bytes += heap_array<sim::Task>(stream.tasks.size());
    }
  }
  std::sort(shared.begin(), shared.end());
  shared.erase(std::unique(shared.begin(), shared.end()), shared.end());
  for (const auto& list : shared) bytes += heap_block(kSharedListBlock) + heap_array<sim::Task>(list.second);
  bytes += heap_array<workloads::CollectiveSpec>(program.collectives.size());
  for (const workloads::CollectiveSpec& spec : program.collectives)
    bytes += heap_array<int>(spec.members.size());
  bytes += heap_array<workloads::KernelLabel>(program.labels.size()) +
           heap_array<int>(program.worker_of_gpu.size()) + heap_array<int>(program.mp_rank_of_gpu.size());
  return bytes;
}

std::int64_t attempt_bytes(const workloads::StepProgram& program, const sim::StepFold& fold,
                           const AttemptShape& shape) {
  const bool folded = !fold.representative.empty();
  const auto load = static_cast<std::int64_t>(sizeof(sim::CollectiveLoad));
  // Per collective, built or a shadow: the attempt's owner and pointer, the executor's pointer, its
  // ranks' streams (a vector), ranks joined and ranks running (a vector of bits), a load where kept,
  // and a folded step's shadow flags and the collective each repeats.
  const std::int64_t per_collective = 3 * kPointer + kVector + 4 +
                                      static_cast<std::int64_t>(sizeof(std::vector<bool>)) +
                                      (shape.loads ? load : 0) + (folded ? 4 + 1 + 1 : 0);
  const std::size_t n = program.collectives.size();
  std::int64_t bytes = static_cast<std::int64_t>(n) * per_collective;
  for (std::size_t c = 0; c < n; ++c) {
    if (folded && fold.shadow[c] != 0) continue;
    // A collective built: its ranks' streams, and its ranks running (bits) where loads are kept.
    const std::size_t ranks = program.collectives[c].members.size();
    bytes +=
        heap_array<std::uint32_t>(ranks) + (shape.loads ? heap_array<std::uint64_t>((ranks + 63) / 64) : 0);
  }
  std::int64_t streams = 0, tasks = 0;
  for (std::size_t g = 0; g < program.gpus.size(); ++g) {
    const bool simulated = !folded || fold.representative[g] == g;
    for (const sim::StreamProgram& stream : program.gpus[g].streams) {
      ++streams;
      if (simulated) tasks += static_cast<std::int64_t>(stream.tasks.size());
    }
  }
  // Per stream: its state and info, the record's offset and GPU, a folded step's member check; per
  // GPU: its state, finish time and members, a folded step's representative; per event its state;
  // per task simulated the record's entry; per link the network's.
  const auto gpus = static_cast<std::int64_t>(program.gpus.size());
  bytes += streams * (kStreamState + kStreamInfo + 4 + 4 + (folded ? kMemberCheck : 0));
  bytes += gpus * (kGpuState + 8 + kVector + (folded ? 4 : 0));
  bytes += static_cast<std::int64_t>(program.event_count) * kEventState;
  bytes += tasks * kRecordEntry;
  bytes += static_cast<std::int64_t>(shape.links) * kNetworkLink;
  // The step bound's walk over the record, after the run and while the record and executor live.
  if (shape.bounds) bytes += step_bound_bytes(program, fold);
  return bytes;
}

}  // namespace hybridsim::analysis

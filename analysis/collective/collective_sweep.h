// nccl-tests for the simulator: one collective over a set of GPUs at a range of sizes, reporting
// what users know from nccl-tests — size, count (float elements per rank, as nccl-tests counts them
// for a reduce-scatter, an all-gather and an all-to-all), time, algbw and busbw (GB/s of
// 10^9 bytes; busbw = algbw × 2(n−1)/n for all-reduce, × (n−1)/n for reduce-scatter and all-gather,
// × 1 for broadcast), so the table can be held next to a real run.
//   auto rows = run_collective_sweep(topology, {.op = CollectiveOp::AllReduce, .gpus = {0,...,7}});
#pragma once
#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/output/option_spelling.h"
#include "analysis/output/progress_estimate.h"
#include "sim/collective.h"
#include "sim/limits.h"
#include "topology/topology.h"
#include "workloads/comm/comm_plan.h"

namespace hybridsim::analysis {

class SimulationProgress;  // analysis/step/step_progress.h

// How a refusal names the options it is about, every option of a request: the collective
// command's by default (for_language: the Python module's keywords, "algorithm='tree'"); validate's
// case file names its keys instead, each refusal starting where its key was written.
struct CollectiveOptionNames {
  std::string algorithm = "--algorithm", protocol = "--protocol", op = "--op", gpus = "--gpus",
              nodes = "--nodes", channels = "--channels", min_bytes = "--min-bytes",
              max_bytes = "--max-bytes", step_factor = "--step-factor", message_size = "--message-size",
              reduction = "--reduction-bandwidth", fast_path = "--fast-path", max_events = "--max-events",
              max_sim_memory = "--max-sim-memory";
  std::string algorithm_at{}, protocol_at{};  // "cases.yaml:9:7: " before them; empty on the command line
  std::string separator = " ";                // between a name and its value: ": " for a file's keys
  bool python = false;                        // text values quoted as Python writes them
  // "--algorithm ring", "algorithm='ring'", "cases[0].collective.algorithm: ring".
  std::string said(const std::string& name, std::string_view value) const {
    return name + separator + (python ? python_repr(value) : std::string(value));
  }
  // "--channels 3", "channels=3".
  std::string said_number(const std::string& name, std::string_view value) const {
    return name + separator + std::string(value);
  }
  // An option of the command or keyword of the module with what it takes, joined as its language joins
  // them, whatever the separator of a file's keys: "--max-events N" (validate's too), "max_events=N".
  std::string takes(const std::string& name, std::string_view value) const {
    return name + (python ? "=" : " ") + std::string(value);
  }
  // Every name in `spelling`'s language: the command line's (the defaults) or Python's.
  static CollectiveOptionNames for_language(const OptionSpelling& spelling);
};

struct CollectiveSweepOptions {
  sim::CollectiveOp op = sim::CollectiveOp::AllReduce;
  std::vector<int> gpus;  // global GPU ranks, in communicator order
  workloads::CommOptions comm;
  sim::CollectiveConfig collective;
  sim::Bytes min_bytes = sim::Bytes::of(8);
  sim::Bytes max_bytes = sim::Bytes::mib(256);
  double step_factor = 2.0;  // sizes min, min·f, min·f², ... up to max (rounded to whole floats)
  // Caps on each size's simulation (sim/budget.h): checked for every size before the first runs,
  // and again as a ring that might have folded starts in full.
  sim::SimulationLimits limits = {};
  // Progress lines with an estimated end (analysis/output/progress_estimate.h), the sizes weighted by
  // the events each would take in full; null: none.
  std::ostream* progress = nullptr;
  // The lines' clock (a test's hand clock; the command's: steady time).
  ProgressClock clock = steady_progress_clock();
  CollectiveOptionNames names{};
};

struct CollectiveSweepRow {
  sim::Bytes size;
  std::int64_t count = 0;  // float elements, as nccl-tests counts them: nccl_tests_count
  sim::Time time;          // the last rank's finish, all ranks starting together
  double algbw_gb_per_s = 0;
  double busbw_gb_per_s = 0;
  std::uint64_t messages = 0;
  std::uint64_t events = 0;  // its queue's and those of a folded ring's own model (private_events)
  std::array<sim::Bytes, sim::kLinkKindCount> bytes_by_link_kind{};
  // What ran (NCCL's choice under --algorithm/--protocol auto): ring, tree or hierarchical; LL,
  // LL128, Simple or ideal; and its channels. An all-to-all (`op`) runs as direct sends between
  // every pair, on no ring or channel: its rows say "point-to-point" and 0 channels (they said
  // "ring" and NCCL's ring count).
  sim::CollectiveOp op = sim::CollectiveOp::AllReduce;
  workloads::AllReduceAlgorithm algorithm = workloads::AllReduceAlgorithm::Ring;
  sim::Protocol protocol = sim::Protocol::Ideal;
  int channels = 0;
  // NCCL's own model of that algorithm × protocol (sim/nccl_model.h): time and busbw; none for
  // the ideal protocol.
  std::optional<sim::NcclEstimate> nccl;
  // How it was simulated (sim/README.md, "Folding"); rerun: another ring crossed a folded one's
  // links, so it was simulated again in full.
  sim::SimulationPath path;
  bool rerun = false;
};

// Simulates one collective of each size; throws InputError on bad options (among them
// AllReduceAlgorithm::Tree or Hierarchical with any op but all-reduce).
// The limits of a sweep, checked before anything runs: a rank's buffer of at most 1 TiB (no GPU holds
// more; H200: 141 GB), at most 1,000 sizes, at most 64 channels (as scenarios).
inline constexpr sim::Bytes kMaxCollectiveBytes = sim::Bytes::of(sim::limits::kCollectiveSize.value);
inline constexpr std::size_t kMaxCollectiveRows = sim::limits::kCollectiveRows.value;
inline constexpr int kMaxChannels = sim::limits::kChannels.value;

std::vector<CollectiveSweepRow> run_collective_sweep(const topology::Topology& topology,
                                                     const CollectiveSweepOptions& options);
// The rules on what a collective is, for every command that runs one (`collective`, `validate`):
// at least 2 GPUs (one GPU's "collective" took no time: a busbw of 0, a time of NaN), and a size that
// is a whole number of 4 B floats (nccl-tests' element). Each returns "" where the input is right,
// else the refusal after the name of what was given: "1 GPU; a collective needs at least 2 GPUs, such
// as --gpus 0-1" (the example where the GPUs were `listed`, not a topology's all),
// " is not a whole number of 4 B floats ...; expected a multiple of 4 B, such as 4 B".
std::string too_few_gpus(std::size_t gpus, bool listed, const CollectiveOptionNames& names);
std::string not_whole_floats(sim::Bytes size);
// The sizes a sweep runs (min, min·f, ... up to max, in whole floats) and, for an all-to-all, what
// became of them: each rank's buffer is one part a GPU of whole floats (nccl-tests' count per peer,
// count / n), so a size rounds down to a multiple of n × 4 B, and one under n × 4 B has less than
// one element for each (it ran as parts of 0 to 3 B, 0 B in 0 us): left out, and `note` says so.
// Throws InputError where the range, the factor or (for an all-to-all) every size is refused.
struct CollectiveSizes {
  std::vector<sim::Bytes> sizes;
  std::string note;  // "" where every size ran as asked
};
CollectiveSizes collective_sizes(const CollectiveSweepOptions& options);
// nccl-tests' count column for `size` bytes of floats over `gpus` GPUs: the count it passes NCCL,
// so each rank's part for a reduce-scatter, an all-gather and an all-to-all (size / (4 n): its
// all_gather.cu and the others print the count per rank), the whole buffer's floats for an all-reduce
// and a broadcast (size / 4).
std::int64_t nccl_tests_count(sim::CollectiveOp op, sim::Bytes size, int gpus);
// "point-to-point" for an all-to-all's row, else the algorithm that ran ("ring", "tree", ...).
std::string row_algorithm_name(const CollectiveSweepRow& row);
// One collective of one size (the building block; also used by tests); throws InputError for
// the tree or hierarchical algorithm with any op but all-reduce. `ticks` (null: none) hears of its
// events every SimulationProgress::kTickEvents, against its events in full (validate's cases).
CollectiveSweepRow run_one_collective(const topology::Topology& topology,
                                      const CollectiveSweepOptions& options, sim::Bytes size,
                                      SimulationProgress* ticks = nullptr);

}  // namespace hybridsim::analysis

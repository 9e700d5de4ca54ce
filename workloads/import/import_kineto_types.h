// The Kineto importer's options and results: import_kineto.h reads and imports, its internals
// build these.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"
#include "workloads/import/import_kineto_trace.h"
#include "workloads/profile/profile.h"

namespace hybridsim::workloads {

struct KinetoImportOptions {
  int steps = 0;                  // how many iterations to average, the last ones; 0: all complete
  // Keep CPU launch gaps (GPU idle while nothing runs) as idle time before the activity that follows
  // each gap (Kernel::idle_before; OptimizerCost::idle_before for the optimizer phase), so that
  // replay on one GPU reproduces the measured span exactly, with the gaps as idle time.
  bool keep_gaps = false;
  std::optional<int> device{};    // which GPU's activities; default: the lowest device id seen
  std::string network{};          // default: the file name without directories and extensions
  std::int64_t batch = 1;         // samples per GPU per iteration (a trace does not record it)
  std::string throughput_unit = "samples";
  std::int64_t units_per_step = 0;  // 0: batch
  // Told once, after the first read, how many times a streamed import will read the file in all when
  // that is more than kineto_import_passes' 3: a trace of more ProfilerStep windows than a segment
  // holds is read once more a segment (import_kineto_stream.h), and progress lines' estimated end
  // must count those reads. Empty: nobody asks.
  std::function<void(int passes)> passes_known{};
};

// What one iteration measured on the imported device. The span is what replay must reproduce:
//   span = busy + launch_gaps + exposed_communication
struct KinetoIterationStats {
  std::string name;                    // "ProfilerStep#7", or "whole trace"
  sim::Time cpu_duration;              // the ProfilerStep annotation's CPU duration
  sim::Time span;                      // first GPU activity's start to the last one's end
  sim::Time busy;                      // union of the compute activities (kernels, copies, memsets)
  sim::Time launch_gaps;               // nothing running on the GPU
  std::int64_t gap_count = 0;
  sim::Time largest_gap;
  sim::Time stream_overlap;            // compute activities running at once on several streams
  sim::Time exposed_communication;     // only NCCL kernels running
  sim::Time communication;             // sum of NCCL kernel durations
  sim::Time forward, backward, optimizer;  // the profile's phases (clipped; never the gaps)
  std::int64_t activities = 0;         // GPU activities launched in the iteration
};

// One recorded NCCL all-reduce over the whole world, as a data-parallel gradient bucket.
struct KinetoGradientBucket {
  std::uint32_t op = 0;                // profile op whose backward ran last before its launch
  sim::Bytes bytes;                    // In msg nelems × dtype size
  std::string dtype;
  int group_size = 0;
  sim::Time duration;                  // the NCCL kernel's measured time
  std::string group_name{};            // "Process Group Name" ("0"); empty when not recorded
  std::string group_ranks{};           // "Process Group Ranks" ("[0, 1]"); empty when not recorded
};

inline constexpr std::size_t kListedIterations = 64;

struct KinetoImportReport {
  std::string source;
  int device = 0;
  std::string gpu;
  std::optional<int> rank, world_size;
  // The averaged iterations in trace order: all of them when there are at most kListedIterations,
  // else the first and the last kListedIterations - 1 (so that a long trace's report stays small).
  std::vector<KinetoIterationStats> iterations;
  std::int64_t iteration_count = 0;              // how many were averaged
  KinetoIterationStats average;                  // their mean
  std::vector<KinetoGradientBucket> buckets;     // of the last averaged iteration (Op::buckets)
  std::string gradient_source;   // "nccl all-reduce", "AccumulateGrad shapes" or "none"
  sim::Bytes accumulate_grad_bytes;              // parameters seen through AccumulateGrad
  std::int64_t events_read = 0, events_kept = 0, bytes_read = 0;
  std::vector<std::string> skipped;  // what was left out, and why
  std::vector<std::string> notes;    // choices made
};

struct KinetoImport {
  Profile profile;
  KinetoImportReport report;
};

}  // namespace hybridsim::workloads

// The PipeDream importer's graph, options and results: import_pipedream.h parses and imports, its
// internals build these.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"
#include "workloads/profile/profile.h"

namespace hybridsim::workloads {

struct PipeDreamNode {
  int id = 0;              // N of "nodeN": PipeDream numbers nodes in forward execution order
  std::string module;      // "Conv2d(3, 32, kernel_size=(3, 3), stride=(2, 2), bias=False)"
  sim::Time forward;       // forward_compute_time (ms in the file)
  sim::Time backward;      // backward_compute_time
  sim::Bytes activation;   // activation_size; a list "[a; b; c]" (several outputs) is summed
  sim::Bytes parameters;   // parameter_size
  int line = 0;            // 1-based line in the file

  // The module's class: "Conv2d", "ReLU", "Input0".
  std::string module_type() const;
  // PipeDream's data-source nodes ("Input", "Input0", ...): they read the batch, not compute.
  bool is_input() const;
};

struct PipeDreamGraph {
  std::string source;                        // path or "<memory>", for messages
  std::vector<PipeDreamNode> nodes;          // in file order (any order)
  std::vector<std::pair<int, int>> edges;    // (producer id, consumer id), duplicates removed
};

// The correction of PipeDream's artefacts (see workloads/README.md).
struct PipeDreamCorrection {
  // Subtracted from every forward time: the synchronize PipeDream's profiler puts around each module.
  sim::Time sync_overhead = sim::Time::us(250);
  // Floor after the subtraction; a time already below it is left as it is (never raised).
  sim::Time min_forward = sim::Time::us(10);
  // Within each run of neighbours (a chain: one consumer, whose only producer it is), spread the
  // run's backward total in proportion to the (corrected) forward times; the total is preserved.
  bool redistribute_backward = true;
};

struct PipeDreamOptions {
  std::string network{};           // default: the file name without "_graph.txt"
  std::int64_t batch = 1;          // samples per GPU the graph was profiled with (not in the file)
  std::string throughput_unit = "samples";
  std::int64_t units_per_step = 0; // 0: batch
  std::string gpu = "unknown";     // PipeDream does not record it
  std::string precision = "fp32";
  OptimizerCost optimizer{"none", sim::Time::zero()};  // PipeDream does not profile the optimizer
  std::optional<PipeDreamCorrection> correction{};
};

struct PipeDreamImportReport {
  int nodes = 0, edges = 0;
  int input_nodes = 0;
  sim::Time input_time;                  // forward time of input nodes (data loading): dropped
  sim::Time forward_recorded, backward_recorded;  // the other nodes, as recorded
  sim::Time forward, backward;           // in the profile
  sim::Time overhead_removed;            // forward_recorded - forward
  int floored = 0;                       // forward times stopped by min_forward
  int runs = 0, longest_run = 0;         // runs of neighbours with more than one node
  std::vector<std::string> notes;
};

struct PipeDreamImport {
  Profile profile;
  PipeDreamImportReport report;
};

}  // namespace hybridsim::workloads

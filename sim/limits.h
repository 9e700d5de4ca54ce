// sim::limits — every limit hybridsim applies to its inputs and its work, once: its value, its unit,
// what it limits, the option or key that raises it (if any) and the commands that apply it. The
// rooms that check a limit take its value from here (sim/yaml, topology, workloads/import, the
// scenario schema, analysis' collective and budget checks), README's Limits table is this table
// (markdown_table(); tests/unit/sim_limits_test.cpp compares them), and every command listed for a
// limit has a case of tests/bad_inputs/catalogue.txt named "<command>-limit-<name>".
//   if (bytes > sim::limits::kInputFile.value) throw InputError(... + std::string(kInputFile.shown));
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace hybridsim::sim::limits {

struct Limit {
  std::string_view name;       // the catalogue's key: "input-file"
  std::int64_t value;          // in `unit`
  std::string_view unit;       // "bytes", "ps", "machines", ...
  std::string_view shown;      // as errors and README write it: "16 MiB"
  std::string_view what;       // what it limits
  std::string_view raised_by;  // the option or key that raises it; empty: fixed
  std::string_view commands;   // the commands that apply it, ", "-separated
};

// 16 MiB, 120 times the largest shipped input (the gnmt profile, 136 KB); a YAML document that size
// would hold more nodes than kYamlNodes anyway. A Kineto trace is streamed and has no size limit.
inline constexpr Limit kInputFile{"input-file", std::int64_t{16} << 20, "bytes", "16 MiB",
                                  "an input file (scenario, topology, study, profile, PipeDream graph, "
                                  "validate cases): a regular file or a pipe",
                                  "", "run, sweep, study, validate, topology, collective, import"};
// Nodes once aliases are expanded: an alias bomb is refused before it fills memory.
inline constexpr Limit kYamlNodes{"yaml-nodes", 250'000, "nodes", "250,000 nodes",
                                  "a YAML document, aliases expanded", "",
                                  "run, sweep, study, validate, topology, collective"};
inline constexpr Limit kYamlDepth{"yaml-depth", 64, "levels", "64 levels", "a YAML document's nesting", "",
                                  "run, sweep, study, validate, topology, collective"};
// 8,192 DGX H100 are 65,536 GPUs (issue 30: past the largest published validation, 54,000 GPUs).
inline constexpr Limit kMachines{"machines", 8192, "machines", "8,192 machines",
                                 "machines in a cluster (cluster.nodes, --nodes; plan --gpus and a study's "
                                 "gpus in GPUs: 8,192 × the preset's GPUs a machine)",
                                 "", "run, sweep, study, plan, collective, topology, validate"};
// No GPU holds more than 1 TiB (H200: 141 GB).
inline constexpr Limit kCollectiveSize{"collective-size", std::int64_t{1} << 40, "bytes", "1 TiB",
                                       "a collective's size per rank (collective, a validate case's "
                                       "collective.size)",
                                       "", "collective, validate"};
inline constexpr Limit kCollectiveRows{"collective-rows", 1000, "rows", "1,000 rows",
                                       "sizes in one collective table", "", "collective"};
inline constexpr Limit kChannels{"channels", 64, "channels", "64 channels",
                                 "rings per collective (communication.channels, --channels)", "",
                                 "run, sweep, collective"};
// Far beyond any real link, and far inside 64-bit picoseconds even summed over a step's hops.
inline constexpr Limit kLinkLatency{"link-latency", 1'000'000'000'000, "ps", "1 s",
                                    "a link's latency (cluster.links.*.latency)", "", "run, sweep"};
// From a thousandth to a thousand times the profiled GPU's: kernel times stay inside 64-bit ps.
inline constexpr Limit kSpeed{"speed", 1000, "times", "0.001 to 1000",
                              "a GPU's speed (workload.compute_speed, workload.gpu_speeds)", "",
                              "run, sweep"};
// sim::Time's range: past it the error names the fields that lengthen the step.
inline constexpr Limit kStepTime{"step-time",       std::numeric_limits<std::int64_t>::max(),
                                 "ps",              "2^63 ps (106 days)",
                                 "a simulated step", "",
                                 "run, sweep"};
// Imported events lie within 2^62 ps of a trace's first timestamp, so any two sums of them still add
// up within sim::Time's 2^63 ps. Real profiles cover seconds to minutes.
inline constexpr Limit kImportedTime{"imported-time", std::int64_t{1} << 62, "ps", "2^62 ps (53.4 days)",
                                     "an imported kernel time, and a device's or graph's sum of them", "",
                                     "import"};
// More than 1 TiB in one tensor is not a measurement: no GPU holds that much.
inline constexpr Limit kTensorSize{"tensor-size", std::int64_t{1} << 40, "bytes", "1 TiB",
                                   "an imported tensor (activations, parameters, a message)", "", "import"};
// 2×10^9 events: about 7 minutes at the 5 million events a second measured on a 1,024-GPU step of
// GNMT with every ring in full (sim/README.md, "Budgets").
inline constexpr Limit kEvents{"events", 2'000'000'000, "events", "2×10⁹ events (about 7 minutes)",
                               "what one step (one size of collective, one validate case; a variability "
                               "run's steps together) may simulate",
                               "--max-events or simulation.max_events (0 = no limit)",
                               "run, sweep, study, plan, collective, validate"};
// Far past any published run (ImageNet about 90 epochs, LM1B about 25): past it is a typo or a fit
// extrapolated beyond sense, whose time to train printed "inf h" or a number of 301 digits with
// exit 0. Held on a curve as written (the schemas' e_min and table epochs,
// scenarios/loader/efficiency_points.h) and on what it gives at each global batch projected
// (analysis/training/epochs_limit.h).
inline constexpr Limit kEpochs{"epochs", 1'000'000, "epochs", "1,000,000 epochs",
                               "the epochs to the quality target a statistical-efficiency curve gives "
                               "(training.efficiency, a study's networks[].curve), as written and at each "
                               "global batch projected",
                               "", "run, sweep, study"};
// A transformer layer's forward FLOPs (its attention 4·b·s²·h among them), or its LM head's, for one
// micro-batch: about 20 minutes of one layer at 1 PFLOP/s, so no real model reaches it; below it the
// backward's multiples and the memory's s² terms stay within int64 (sequence 1e8 overflowed them:
// "internal error: transformer cost: negative work", exit 3).
inline constexpr Limit kLayerFlop{"layer-flop",
                                  std::int64_t{1} << 60,
                                  "FLOPs",
                                  "2^60 FLOPs (1.2e18)",
                                  "a transformer layer's or LM head's forward FLOPs for one micro-batch "
                                  "(workload.model.sequence, hidden, vocab, training.micro_batch)",
                                  "",
                                  "run, sweep"};
// 4 GiB of simulation state: the process stays under a few GB.
inline constexpr Limit kSimMemory{"sim-memory", std::int64_t{4} << 30, "bytes", "4 GiB",
                                  "the simulation state one step (one size of collective, one validate "
                                  "case) may hold",
                                  "--max-sim-memory or simulation.max_memory (0 B or unlimited = no limit)",
                                  "run, sweep, study, plan, collective, validate"};

inline constexpr std::array<const Limit*, 16> kAll{
    &kInputFile, &kYamlNodes,   &kYamlDepth, &kMachines, &kCollectiveSize, &kCollectiveRows,
    &kChannels,  &kLinkLatency, &kSpeed,     &kStepTime, &kImportedTime,   &kTensorSize,
    &kEvents,    &kEpochs,      &kLayerFlop, &kSimMemory};

// The table as README.md's "Limits" section has it, one row a limit:
// "| name | shown | what | raised by (or —) | commands |".
std::string markdown_table();

}  // namespace hybridsim::sim::limits

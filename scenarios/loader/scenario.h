// A scenario: one validated scenario file (cluster, workload, parallelism, communication, training,
// outputs, sweep) as plain typed fields — units as sim types, std::nullopt where the file says
// "auto". Every key is declared once in scenarios/schema_table.cpp; the reference is
// scenarios/README.md. Errors are InputError "file:line:col: field.path: what; expected ...".
//   Scenario s = load_scenario("scenarios/examples/dgx1-gnmt-dp8.yaml", {{"cluster.nodes=2"}});
//   s.parallelism.dp == 8;  s.communication.message_size == sim::Bytes::kib(512)
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/loader/override_origin.h"
#include "scenarios/loader/trace_settings.h"
#include "sim/budget.h"
#include "sim/collective.h"
#include "sim/network.h"
#include "sim/time.h"
#include "sim/units.h"
#include "topology/cluster_spec.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/program/step_program.h"
#include "workloads/program/variability.h"

namespace hybridsim::scenarios {

using topology::LinkOverride;
using topology::LinkOverrides;

// A preset cluster (topology::ClusterSpec: preset, nodes, fabric, link overrides), or a custom
// topology file, in which case `preset` is empty and the other fields keep their defaults.
struct ClusterSettings : topology::ClusterSpec {
  ClusterSettings() { preset.clear(); }
  std::filesystem::path topology;  // custom topology file as written (relative to base_dir)
  std::optional<sim::Bytes> gpu_memory;  // nullopt (auto): the GPU's own, workloads/gpu/gpu.h
  bool operator==(const ClusterSettings&) const = default;
};

struct GpuSpeedSetting {
  int gpu = 0;         // global GPU rank
  double speed = 1.0;  // on top of compute_speed
  bool operator==(const GpuSpeedSetting&) const = default;
};

// A transformer's architecture and how it is run (workload.model; workloads/generators/
// transformer_gen.h). Sizes left unset are the named model's (workload.network: llama3-8b, ...);
// with network: transformer every size must be given.
struct TransformerSettings {
  std::optional<std::int64_t> layers, hidden, heads, kv_heads, ffn_hidden, vocab, sequence;
  std::string ffn = "auto";           // "gelu", "swiglu"; auto: the named model's
  std::string attention = "flash";    // "flash" or "unfused"
  std::int64_t layers_simulated = 0;  // a layer-slice of the model; 0: every layer
  std::optional<std::int64_t> experts, top_k;  // a mixture of experts; unset: the named model's
  double capacity_factor = 1.0;                // tokens an expert takes / its even share
  bool operator==(const TransformerSettings&) const = default;
};

struct WorkloadSettings {
  std::string network;             // built-in profile name; empty when `profile` is set
  std::filesystem::path profile;   // profile file as written (relative to base_dir)
  std::optional<std::int64_t> batch_per_worker;  // nullopt: the profile's batch
  // The GPU and precision a built-in network is priced for (nullopt: auto, the cluster's GPU; fp32);
  // a profile file must agree with what is given.
  workloads::GpuChoice gpu_choice = {};
  double compute_speed = 1.0;      // kernel durations are divided by this
  std::vector<GpuSpeedSetting> gpu_speeds;  // and on these GPUs also by their speed
  TransformerSettings model;       // only for transformer networks
  bool operator==(const WorkloadSettings&) const = default;
};

struct PlacementRuleSetting {
  std::string match;  // glob against op names and layers
  int gpu = 0;
  bool operator==(const PlacementRuleSetting&) const = default;
};

struct PlacementSettings {
  enum class Kind : unsigned char { Auto, Layers, Stacks, Branches, Rules };
  Kind kind = Kind::Auto;
  std::vector<PlacementRuleSetting> rules;  // Kind::Rules only
  bool operator==(const PlacementSettings&) const = default;
};

// pipeline.*: how parallelism.pp's stages run (workloads/program/pipeline_schedule.h).
struct PipelineSettings {
  workloads::PipelineSchedule schedule = workloads::PipelineSchedule::OneFOneB;
  int virtual_stages = 1;   // interleaved 1F1B: model chunks per stage
  std::vector<int> stages;  // layers per stage (per model chunk, interleaved); empty: balanced
  bool operator==(const PipelineSettings&) const = default;
};

struct ParallelismSettings {
  int dp = 1;
  int mp = 1;
  PlacementSettings placement;
  std::optional<std::vector<std::vector<int>>> mapping;  // [worker][mp rank] → global GPU rank
  int tp = 1;                      // tensor parallel (transformers): GPUs per replica
  bool sequence_parallel = false;  // with tp: reduce-scatter + all-gather, norms and dropout on s/t
  std::string zero = "0";          // ZeRO stage over dp (transformers): 0, 1, 2, 3 or fsdp (= 3)
  int ep = 1;                      // expert parallel (mixtures of experts): replicas per EP group
  int pp = 1;                      // pipeline stages (transformers)
  PipelineSettings pipeline;
  bool operator==(const ParallelismSettings&) const = default;
};

// The fast path a scenario, study or validation case gets when it names none (and `collective
// --fast-path`'s default): bounded, so that rings whose chunks differ by a byte, the rule at scale,
// fold within 0.1% and say by how much instead of running message by message (sim/README.md,
// "Folding"). sim::CollectiveConfig's own default stays auto: exact or in full.
inline constexpr sim::FastPath kDefaultFastPath = sim::FastPath::Bounded;

struct CommunicationSettings {
  workloads::AllReduceAlgorithm algorithm = workloads::AllReduceAlgorithm::Auto;
  std::optional<sim::Protocol> protocol;  // nullopt: auto (NCCL's choice per call)
  std::optional<int> channels;  // nullopt: auto
  sim::Bytes message_size = sim::CollectiveConfig{}.message_size;
  sim::Bytes bucket_size = workloads::StepOptions{}.bucket_size;
  // nullopt: auto, a quarter of the simulated GPU's HBM peak (workloads::reduction_bandwidth); zero: off.
  std::optional<sim::Bandwidth> reduction_bandwidth;
  sim::Switching switching = sim::Switching::CutThrough;
  bool compute_contention = true;  // collectives take SMs and memory bandwidth from kernels
  bool gradient_copies = true;     // DP gradients copied into and out of flat buffers
  workloads::Ddp ddp = workloads::Ddp::Torch;  // whose DDP: its copy passes and default buckets
  bool exchange_every_micro_batch = true;      // false: only after a step's last micro-batch
  bool pcie_only = false;
  sim::FastPath fast_path = kDefaultFastPath;
  bool operator==(const CommunicationSettings&) const = default;
};

// Statistical efficiency, kept as plain names and numbers (analysis/ builds the curve).
struct EfficiencySettings {
  enum class Kind : unsigned char { Named, Parametric, Table };
  Kind kind = Kind::Named;
  std::string variant = "default";                       // Named
  double e_min = 0, b_noise = 0;                         // Parametric
  std::vector<std::pair<std::int64_t, double>> table;    // Table: (global batch, epochs)
  std::optional<std::int64_t> min_batch, max_batch;      // supported range, when given
  bool operator==(const EfficiencySettings&) const = default;
};

// training.global_batch's largest value, and plan --global-batch's: a billion samples a step.
inline constexpr std::int64_t kMaxGlobalBatch = 1'000'000'000;

struct TrainingSettings {
  std::optional<std::string> network;  // nullopt: the workload's network
  EfficiencySettings efficiency;
  std::optional<std::int64_t> dataset_samples;  // nullopt: the built-in dataset's
  std::optional<std::int64_t> global_batch;     // samples per step; nullopt: batch × dp
  std::string recompute = "none";               // transformers: none, selective or full
  std::int64_t micro_batch = 1;                 // transformers: sequences per micro-batch per replica
  bool operator==(const TrainingSettings&) const = default;
};

enum class OutputFormat : unsigned char { Table, Json, Csv };
std::string_view output_format_name(OutputFormat f);  // "table", "json", "csv"

struct OutputSettings {
  std::filesystem::path directory;  // "auto" becomes out/<scenario file stem>
  std::vector<OutputFormat> formats = {OutputFormat::Table};  // unique, in the order written
  std::optional<TraceSettings> trace;
  bool operator==(const OutputSettings&) const = default;
};

struct SweepParameter {
  std::string path;                 // a schema path, as for --set
  std::vector<std::string> values;  // each a YAML value in flow style ("25 GB/s", "{dp: 4, mp: 2}")
  bool operator==(const SweepParameter&) const = default;
};

struct SweepSettings {
  enum class Mode : unsigned char { Product, Zip };
  Mode mode = Mode::Product;
  std::vector<SweepParameter> parameters;  // empty: no sweep
  bool operator==(const SweepSettings&) const = default;
};

// Where fields were written, and the overrides applied: for messages, not part of the value
// (operator== ignores it, so a scenario equals its round trip through YAML).
struct Provenance {
  std::map<std::string, std::string> where;  // field path → "file:line:col" or "--set ..."
  std::vector<std::string> overrides;        // "path=value", in the order applied
  bool operator==(const Provenance&) const { return true; }
};

struct Scenario {
  std::string name;
  std::string description;
  ClusterSettings cluster;
  WorkloadSettings workload;
  ParallelismSettings parallelism;
  CommunicationSettings communication;
  TrainingSettings training;
  workloads::Variability variability;
  int trace_step = 1;                // variability.trace_step: 1 first, kSlowestTraceStep slowest
  sim::SimulationLimits simulation;  // caps on one step's events and memory (sim/budget.h)
  OutputSettings outputs;
  SweepSettings sweep;
  std::string source;                // the file (or the name given to parse_scenario)
  std::filesystem::path base_dir;    // relative input paths start here
  Provenance provenance;
  bool operator==(const Scenario&) const = default;
};

// Reads and validates a scenario file; `overrides` are "path=value" texts (as `--set`) applied
// before validation, the value parsed as YAML ("cluster.nodes=4", "parallelism={dp: 4, mp: 2}",
// "cluster.nodes=" removes the key, restoring its default). base_dir is the file's directory.
// Refusals of an override quote it as `origin` says it was written (the command line's --set).
Scenario load_scenario(const std::string& path, std::span<const std::string> overrides = {},
                       const OverrideOrigin& origin = {});
// A scenario file's text as read once, with what parsing it needs: a sweep reads its file once and
// builds every point from this text (parse_scenario, parse_sweep_point), so editing the file while
// the sweep runs cannot mix two versions in one result.
struct ScenarioSource {
  std::string text;
  std::string path;
  std::filesystem::path base_dir;  // the file's directory
};
ScenarioSource read_scenario_source(const std::string& path);
Scenario parse_scenario(std::string_view yaml, const std::string& source_name,
                        std::span<const std::string> overrides = {},
                        std::filesystem::path base_dir = ".", const OverrideOrigin& origin = {});

// Refuses `--set` overrides that would be ignored: the same field set twice (also inside a
// section's value: parallelism={dp: 4} then parallelism.dp=2), a section set whole after a field
// inside it (parallelism.dp=2 then parallelism={dp: 4}, which replaces the field), and, for a sweep
// (hybridsim sweep; a run leaves the sweep block out), a field the sweep sets at every point. Each
// is named as `origin` says it was written.
// lost_override is the first rule for one pair, shared with validate's case files: the field whose
// value in `earlier` would count for nothing once `later` is applied, none when both count.
struct LostOverride {
  std::string field;      // the field whose earlier value is lost
  bool replaced = false;  // false: set again; true: `later` sets the whole section it is inside
};
std::optional<LostOverride> lost_override(std::string_view earlier, std::string_view later);
void check_overrides_once(std::span<const std::string> overrides, const OverrideOrigin& origin = {});
void check_overrides_outside_sweep(std::span<const std::string> overrides, const Scenario& s,
                                   const OverrideOrigin& origin = {});

// Where a field was written ("file:line:col", "--set text"); for a field left at its default, the
// location of its closest written parent section, else "source".
std::string location_of(const Scenario& scenario, std::string_view path);

// The canonical YAML of a scenario: every field, in schema order, explicit units.
// parse_scenario(scenario_to_yaml(s), s.source, {}, s.base_dir) == s.
std::string scenario_to_yaml(const Scenario& scenario);

}  // namespace hybridsim::scenarios

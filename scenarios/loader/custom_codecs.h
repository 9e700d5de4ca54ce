// The named codecs of the scenario keys that need more than a plain value (key_codecs.h, Value):
// cross-field checks, polymorphic blocks (parallelism.placement, training.efficiency), lists of
// records, optional sections and defaults that depend on the file name. Each is named in the
// table entry of its key (schema_table.cpp) and used nowhere else. Internal to scenarios/.
//   {{.path = "parallelism.placement", ...}, Binding{.read = read_placement, .write = write_placement}}
#pragma once
#include <optional>
#include <vector>

#include "scenarios/loader/key_codecs.h"

namespace hybridsim::scenarios {

// A custom reader and writer of the whole scenario (the key's path is spec.path).
using ReadFn = void(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s);
using WriteFn = std::optional<TreeNode>(const Scenario& s, const FieldSpec& spec);

// ---- custom_codecs_setup.cpp: name, cluster, workload, parallelism.
ReadFn read_name;            // absent: the file name without .yaml
ReadFn read_topology_file;   // either cluster.preset or cluster.topology
ReadFn read_if_present;      // a section whose keys, when it is absent, keep their members' values
ReadFn read_preset_links;    // cluster.links: only with a preset (and when present)
void check_cluster(FieldReader& r, const TreeNode* cluster, Scenario& s);  // preset limits
ReadFn read_profile_file;    // either workload.network or workload.profile
ReadFn read_gpu_name;        // workload.gpu: auto is nullopt
ReadFn read_placement;       // a word or a list of rules (GPUs within parallelism.mp)
WriteFn write_placement;
ReadFn read_mapping;         // auto or dp lists of mp distinct GPU ranks
WriteFn write_mapping;
ReadFn read_pipeline_stages;  // auto or a list of layers per stage (custom_codecs_pipeline.cpp)
WriteFn write_pipeline_stages;

struct GpuSpeedsCodec {  // workload.gpu_speeds: [{gpu, speed}], each GPU once
  static void read(FieldReader& r, const TreeNode* map, const FieldSpec& spec,
                   std::vector<GpuSpeedSetting>& out);
  static std::optional<TreeNode> write(const FieldSpec& spec, const std::vector<GpuSpeedSetting>& v);
};

// ---- custom_codecs_run.cpp: training, outputs, sweep.
struct EfficiencyCodec {  // training.efficiency: a name, {e_min, b_noise} or {table}
  static void read(FieldReader& r, const TreeNode* map, const FieldSpec& spec, EfficiencySettings& out);
  static std::optional<TreeNode> write(const FieldSpec& spec, const EfficiencySettings& e);
};
ReadFn read_output_directory;  // auto: out/<file name>
struct FormatsCodec {          // outputs.formats: each format once
  static void read(FieldReader& r, const TreeNode* map, const FieldSpec& spec,
                   std::vector<OutputFormat>& out);
  static std::optional<TreeNode> write(const FieldSpec& spec, const std::vector<OutputFormat>& v);
};
ReadFn read_trace_section;     // outputs.trace: absent means no trace
struct GpuListCodec {          // outputs.trace.gpus: classes, all, or "0-7", "0,2,4-7"
  static void read(FieldReader& r, const TreeNode* map, const FieldSpec& spec, TraceGpus& out);
  static std::optional<TreeNode> write(const FieldSpec& spec, const TraceGpus& v);
};
struct ReductionBandwidthCodec {  // communication.reduction_bandwidth: auto, off or a rate
  static void read(FieldReader& r, const TreeNode* map, const FieldSpec& spec,
                   std::optional<sim::Bandwidth>& out);
  static std::optional<TreeNode> write(const FieldSpec& spec, const std::optional<sim::Bandwidth>& v);
};
struct TraceStepCodec {        // variability.trace_step: first, slowest or a step number
  static void read(FieldReader& r, const TreeNode* map, const FieldSpec& spec, int& out);
  static std::optional<TreeNode> write(const FieldSpec& spec, int v);
};
struct WindowCodec {           // outputs.trace.window: all, or "START:END"
  static void read(FieldReader& r, const TreeNode* map, const FieldSpec& spec,
                   std::optional<sim::TimeWindow>& out);
  static std::optional<TreeNode> write(const FieldSpec& spec, const std::optional<sim::TimeWindow>& v);
};
ReadFn read_sweep_parameters;  // settable, non-overlapping paths; zip lengths; at most 1e6 points
WriteFn write_sweep_parameters;

}  // namespace hybridsim::scenarios

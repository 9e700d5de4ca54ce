// Resolution: a validated Scenario becomes the objects a run needs — the built topology (preset with
// link overrides, a cluster of them, or a custom file), the profile (built-in or loaded, scaled to
// batch_per_worker), the placement and worker mapping, and the step, communication, collective,
// switching and executor options (everything analysis::StepSetup takes). Errors name the scenario
// location of the offending field: "s.yaml:7:7: parallelism.dp: dp × mp = 16 GPUs, but ...".
//   ResolvedScenario r = resolve(load_scenario("scenarios/examples/dgx1-gnmt-dp8.yaml"));
//   r.topology.gpus().size() == 8;  r.mapping.dp == 8;  describe(r) → a short summary
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/loader/model_slice.h"
#include "scenarios/loader/scenario.h"
#include "sim/collective.h"
#include "sim/network.h"
#include "sim/stream_executor.h"
#include "sim/work_progress.h"
#include "topology/topology.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/memory/memory_model.h"
#include "workloads/profile/profile.h"
#include "workloads/program/mapping.h"
#include "workloads/program/placement.h"
#include "workloads/program/step_program.h"
#include "workloads/step/step_config.h"

namespace hybridsim::scenarios {

// What a transformer's results are counted with (analysis/run: model TFLOP/s per GPU and MFU).
struct TransformerFacts {
  double model_flop_per_micro_batch = 0;        // Narayanan et al.'s count, the simulated layers' (double:
  double mfu_flop_per_micro_batch = 0;          // the same without recomputation; past int64 at 1e19)
  std::int64_t peak_flop_per_second = 0;        // the preset GPU's dense peak at the precision
  int tp = 1;
  bool estimate = true;                         // kernel times not calibrated for this GPU
  workloads::StepMemory memory;  // one GPU's (transformer_memory.h): Korthikanti's, TP's and ZeRO's divisions
  std::string memory_rule;       // what divides what (transformer_memory_rule)
  int pp = 1;                                   // pipeline stages: a replica's GPUs are tp × pp
  // What each pipeline stage's GPUs hold, one rank per stage (pp 1: `memory`): a trace's memory
  // counter of each GPU follows its stage's, as the run's peak line follows the largest.
  workloads::StepMemory memory_by_stage;
  // A layer-slice's whole model (model_slice.h): what one GPU would hold at every layer, so the run
  // can say whether the model it stands for fits; none when every layer is simulated.
  std::optional<ModelSlice> slice;
  // The step's GPUs' mean speed (workload.compute_speed, times gpu_speeds where given): the GPUs
  // simulated have the peak above times it (a product kept in double: speeds up to 1000 × 1000 times
  // an H100's 1e15 pass int64).
  double speed = 1;
  // A mixture of experts' routed tokens that skip their experts at capacity_factor < 1
  // (workloads::dropped_token_share): the run says so, as model FLOPs leave their experts out.
  double dropped_token_share = 0;
};

// The step's configuration (placement, mapping, options; compute_scale = 1 / compute_speed) with
// the scenario it came from and the topology and profile it runs on.
struct ResolvedScenario : workloads::StepConfig {
  Scenario scenario;
  topology::Topology topology;
  workloads::Profile profile;  // already scaled to the batch per worker
  std::optional<workloads::MemoryCapacity> gpu_capacity;  // gpu_memory_capacity(scenario, profile)
  std::optional<TransformerFacts> transformer;            // transformer networks only
  // MemoryFit::Report only: the refusal `hybridsim run` gives a transformer that does not fit its
  // GPUs' memory (one line, located at workload.model); empty when it fits.
  std::string does_not_fit;
  // The cluster.topology file's notes (links machines rarely have, topology/yaml_loader.h) from the
  // load that built `topology`, for run and sweep to say; none for a preset.
  std::vector<std::string> topology_notes;
};

// What resolve() does with a transformer whose GPUs cannot hold it (weights, gradients, optimizer
// state and activations over the capacity): refuse it, as `hybridsim run` does by design (its step
// is not simulated: workloads/README.md), or resolve it all the same with the refusal kept in
// ResolvedScenario::does_not_fit, for a sweep that lists such a point as a row it did not simulate.
// A 2017 network is simulated either way and its peak checked after the step.
enum class MemoryFit { Refuse, Report };

// Each step on its own (resolve() calls them in this order).
// `progress` (null: none) is told as a cluster of machines is built (seconds at 8,192 machines);
// `notes` (null: none) gets a cluster.topology file's notes, in the file's order.
topology::Topology build_topology(const Scenario& scenario, sim::WorkProgress* progress = nullptr,
                                  std::vector<std::string>* notes = nullptr);
workloads::Profile load_workload_profile(const Scenario& scenario);  // scaled to batch_per_worker
workloads::MpPlacement build_placement(const Scenario& scenario, const workloads::Profile& profile);
workloads::WorkerMapping build_mapping(const Scenario& scenario, const topology::Topology& topology);
// Each GPU's memory: cluster.gpu_memory when written, else the GPU workload.gpu names when it is
// not the preset's part (a100-40gb on dgx-a100), else the preset's GPU (topology/
// preset_registry.h through workloads/gpu/gpu.h), else, for a topology file, the profile's GPU;
// none when none of them is known.
std::optional<workloads::MemoryCapacity> gpu_memory_capacity(const Scenario& scenario,
                                                             const workloads::Profile& profile);

// The profile at another per-GPU batch: every kernel duration and activation size × batch / the
// profile's batch (rounded to the nearest ps and byte), units_per_step likewise (at least 1);
// gradient sizes, sparse-gradient sizes and the optimizer are kept. A linear model: kernels near
// their launch floor do not really shrink. Throws InputError when a time would overflow.
workloads::Profile scale_profile_batch(const workloads::Profile& profile, std::int64_t batch);

// The step's configuration on a topology and profile already built: mapping, placement (in that
// order, as errors are reported), then the step, communication, collective, switching, executor,
// variability and limits options. The one way from scenario keys to a StepConfig: resolve() calls
// it, and so do the study and planner (analysis/study/study_steps.h), with their own profile.
workloads::StepConfig resolve_step_config(const Scenario& scenario, const topology::Topology& topology,
                                          const workloads::Profile& profile);
// A path the scenario names (a profile or topology file) as it is opened: relative to its base_dir.
std::filesystem::path input_path(const Scenario& s, const std::filesystem::path& p);
// The files resolve() reads besides the scenario: its cluster.topology and workload.profile (none for
// a preset and a named network). A sweep's fingerprint reads them: a profile edited between a sweep
// and its --resume kept the old profile's rows beside the new one's.
std::vector<std::filesystem::path> input_files(const Scenario& s);

ResolvedScenario resolve(const Scenario& scenario, sim::WorkProgress* progress = nullptr,
                         MemoryFit fit = MemoryFit::Refuse);

// The key settings of a resolved scenario as (key, value) pairs, for run summaries and a trace's
// otherData: scenario, source, cluster, link overrides, workload, parallelism, placement, mapping,
// communication, executor, overrides.
std::vector<std::pair<std::string, std::string>> key_settings(const ResolvedScenario& resolved);
// What the run prices its kernels with ("GPU, precision": "H100 (H100-SXM5-80GB), amp: kernel times
// are an ESTIMATE ..."), when the scenario sets workload.gpu or workload.precision or its built-in
// network runs on another GPU than the V100 (a newer preset); nullopt otherwise, so the summaries of
// V100 scenarios that name neither stay as they were.
std::optional<std::pair<std::string, std::string>> kernel_times_setting(const ResolvedScenario& resolved);
// The same as aligned "key: value" lines.
std::string describe(const ResolvedScenario& resolved);

}  // namespace hybridsim::scenarios

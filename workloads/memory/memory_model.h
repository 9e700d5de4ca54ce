// What each GPU of a dp × mp strategy holds in memory during one training step, in bytes, from the
// profile, the MP placement, the op order (workloads/program/op_order.h) and the data-parallel width alone
// (never from a simulation, so it does not depend on how a step is simulated): weights, gradients,
// optimizer state, FP32 master weights under mixed precision, activations kept for backward (a
// lifetime rule followed through the program order; the PEAK over the step, not a sum), sparse
// gradients, data-parallel bucket copies, NCCL's buffers and an allowance for the framework. All
// workers are alike, so the answer is per MP rank; workloads/README.md states every rule and
// assumption.
//   StepMemory m = model_step_memory(profile, config, topology);  // config: a StepConfig
//   m.ranks[0].peak.total();  m.ranks[0].peak[MemoryPart::Activations];  m.largest_rank();
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/units.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/gpu/gpu.h"
#include "workloads/profile/profile.h"
#include "workloads/program/op_order.h"
#include "workloads/program/placement.h"
#include "workloads/step/step_config.h"

namespace hybridsim::workloads {

// The parts of a GPU's memory, in the order reports list them.
enum class MemoryPart : std::uint8_t {
  Weights,          // the parameters in the model's precision (16-bit under amp, fp16, bf16)
  Gradients,        // dense parameter gradients (persistent) and a sparse op's own rows
  OptimizerState,   // per parameter, FP32: momentum (1), Adam's two moments (2), Adagrad's sum (1)
  MasterWeights,    // mixed precision only: the FP32 copy the optimizer updates
  Activations,      // op outputs kept for backward, received copies, activation gradients
  SparseGathered,   // data-parallel: every worker's rows of a sparse gradient, all-gathered
  GradientBuckets,  // data-parallel: DDP's flat bucket copies (gradient_copies on)
  CommBuffers,      // data-parallel: NCCL's per-channel buffers
  Framework,        // CUDA context, cuBLAS/cuDNN workspace: an allowance
};
inline constexpr std::size_t kMemoryPartCount = 9;
// "weights", "gradients", "optimizer", "master weights", "activations", "sparse gathers",
// "gradient buckets", "NCCL buffers", "framework".
std::string_view memory_part_name(MemoryPart part);
// The same as a key for JSON and CSV: "weights", "gradients", "optimizer", "master_weights", ...
std::string_view memory_part_key(MemoryPart part);

struct MemoryBreakdown {
  std::array<sim::Bytes, kMemoryPartCount> bytes{};
  sim::Bytes& operator[](MemoryPart p) { return bytes[static_cast<std::size_t>(p)]; }
  sim::Bytes operator[](MemoryPart p) const { return bytes[static_cast<std::size_t>(p)]; }
  sim::Bytes total() const;
  bool operator==(const MemoryBreakdown&) const = default;
};

// What the precision and the optimizer keep, per parameter (the rule of model_step_memory).
struct ParameterRule {
  bool mixed_precision = false;   // FP32 master weights: metadata.precision amp, mixed, fp16, bf16 or fp8
  int bytes_per_parameter = 4;    // of weights and gradients: 4 (FP32, TF32), 2 (16-bit, fp8), 8 (FP64)
  int optimizer_states = 0;       // optimizer values per parameter
  int state_bytes = 4;            // of each optimizer value and master weight: FP32, FP64's own 8
  bool optimizer_known = true;    // false: an optimizer name the rule does not know (counted as 0)
};
// By metadata.precision (amp, mixed, fp16, bf16, fp8: mixed precision, 2-byte weights and gradients;
// fp64: 8 bytes for weights, gradients and optimizer values; fp32, tf32, unknown: 4) and
// optimizer.name (case, '-', '_' and spaces ignored): sgd-momentum, sgd, momentum, nesterov, lars, adagrad,
// rmsprop → 1; adam, adamw, lamb → 2.
ParameterRule parameter_rule(const Profile& profile);

// NCCL's buffers per connection (one peer, one channel), all three protocols: Simple 4 MiB
// (NCCL_BUFFSIZE's documented default), LL128 4,915,200 B and LL 524,288 B (NCCL's defaults,
// src/include/device.h: 120 × 640 × 8 steps × 8 B and 8 × 512 × 8 steps × 16 B).
inline constexpr sim::Bytes kNcclConnectionBuffers = sim::Bytes::of(4'194'304 + 4'915'200 + 524'288);
// Channels per communicator when the scenario does not fix communication.channels: the 6 rings
// hybridsim's ring search finds on one DGX-1 (an assumption for other machines).
inline constexpr int kAssumedNcclChannels = 6;
// CUDA context with the framework's kernels loaded (768 MiB) and cuBLAS/cuDNN workspace (256 MiB):
// an assumption, not measured (users report 0.3 to 1 GiB for the context alone, by CUDA version).
inline constexpr sim::Bytes kFrameworkAllowance = sim::Bytes::mib(1024);

struct MemoryOptions {
  int dp = 1;                    // data-parallel workers: gathers, buckets and NCCL need dp > 1
  bool gradient_copies = true;   // DDP's flat bucket copies (StepOptions::gradient_copies)
  int nccl_channels = kAssumedNcclChannels;
  // Connections per channel a GPU receives on: a ring 1, a double binary tree up to 3 (parent and
  // two children), NCCL's auto both (4), the hierarchical all-reduce two rings (2).
  int nccl_connections_per_channel = 4;
  // By MP rank, 1 where the rank's all-reduces run as the ring although hierarchical was asked (its
  // data-parallel group is hierarchical_unfit: the planner's own fallback), so 1 connection a
  // channel there; empty: every rank at nccl_connections_per_channel.
  std::vector<std::uint8_t> ring_by_rank = {};
  sim::Bytes framework = kFrameworkAllowance;
};
// The options of a step's configuration on `topology`: dp, gradient copies, channels
// (communication.channels or kAssumedNcclChannels) and connections by the algorithm that will run,
// which under hierarchical is the ring for an MP rank whose data-parallel group cannot run it
// (hierarchical_unfit, the rule CommPlanner::plan falls back by).
MemoryOptions memory_options(const StepConfig& config, const topology::Topology& topology);

// One point of an MP rank's compute stream: an op's forward or backward, or the end of the step
// (copies out of gradient buckets and the optimizer), with everything live while it runs.
enum class MemoryPhase : std::uint8_t { Forward, Backward, Optimizer };
struct MemoryPoint {
  MemoryPhase phase = MemoryPhase::Forward;
  std::uint32_t op = 0;  // the op (unused for Optimizer)
  sim::Bytes live;       // every part, persistent ones included
  bool operator==(const MemoryPoint&) const = default;
};

struct RankMemory {
  int mp_rank = 0;
  MemoryBreakdown peak;               // the parts at the peak point
  std::size_t peak_point = 0;         // index into timeline (the first point at the peak)
  std::vector<MemoryPoint> timeline;  // forward order, backward order, then Optimizer
  sim::Bytes after_step;              // what stays between steps (the persistent parts)
};

struct StepMemory {
  ParameterRule rule;
  MemoryOptions options;
  std::vector<RankMemory> ranks;  // [mp rank]
  // Each rank's peak breakdown (what studies and plans keep: no timelines).
  std::vector<MemoryBreakdown> peaks() const;
};

// The rank with the largest peak total (the first of equals); 0 for none.
int largest_rank(const std::vector<MemoryBreakdown>& peaks);
// The largest rank's peak total; 0 B for none.
sim::Bytes largest_peak(const std::vector<MemoryBreakdown>& peaks);
// True when every rank's peak is at most `capacity`.
bool fits_in(const std::vector<MemoryBreakdown>& peaks, sim::Bytes capacity);

// A GPU's memory capacity and where it comes from ("V100-SXM2-16GB of dgx1-v100", "cluster.gpu_memory").
struct MemoryCapacity {
  // Where the figure came from: a GPU's part (a preset's, one named), the scenario's
  // cluster.gpu_memory, or a command's option (--memory, Python's memory=: analysis's
  // memory_what_if), which the planner's refusal when nothing fits then leads with.
  enum class Origin : std::uint8_t { Gpu, Scenario, Option };
  sim::Bytes bytes;
  std::string source;
  Origin origin = Origin::Gpu;
  bool operator==(const MemoryCapacity&) const = default;
};
// The capacity of the GPU a name describes (find_gpu), none for an unknown GPU.
std::optional<MemoryCapacity> gpu_capacity(std::string_view gpu, std::string_view where = {});
// The capacity of the GPU a machine preset carries (topology/preset_registry.h), none for an
// unknown preset or GPU.
std::optional<MemoryCapacity> preset_gpu_capacity(std::string_view preset);
// The capacity of the GPU a workload runs on: a GPU named apart from the machine (workload.gpu:
// a100-40gb on dgx-a100; `named_gpu` as the profile records it or as workload.gpu says it) counts
// with its own memory, since the preset only says what machine it sits in; else the preset's GPU.
// `named_gpu` empty: workload.gpu auto. None for an unknown preset and no named GPU.
std::optional<MemoryCapacity> workload_gpu_capacity(std::string_view preset, std::string_view named_gpu);

// The model (every rule in workloads/README.md, "Memory per GPU").
StepMemory model_step_memory(const Profile& profile, const MpPlacement& placement, const OpOrder& order,
                             const MemoryOptions& options);
// The same with the op order a step program uses (order_ops at config.step.mp_transfer_estimate).
StepMemory model_step_memory(const Profile& profile, const StepConfig& config,
                             const topology::Topology& topology);

// "15.2 GiB", with two decimals below 10 GiB ("6.62 GiB") and none for whole GiB ("16 GiB"), for
// memory figures everywhere.
std::string format_gib(sim::Bytes b);
// The parts of a breakdown that are not zero, as "weights 6.62, optimizer 6.62, ..." in GiB.
std::string describe_parts(const MemoryBreakdown& b);

}  // namespace hybridsim::workloads

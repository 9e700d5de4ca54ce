// One training step of a dp × mp strategy as per-GPU programs (sim/gpu_program.h): every GPU of
// every worker gets a compute stream (its ops' forward kernels in dataflow order, then backward, then
// the optimizer), a communication stream (the data-parallel gradient collectives, bucket by bucket,
// each launched as soon as backward has produced its gradients; or the profile's recorded buckets)
// and one send and one receive stream
// per model-parallel peer (activations forward, activation gradients backward). Collectives are
// described here (who, what, how large); their ring plans come from workloads/comm_plan.h.
//   StepProgram s = build_step_program(profile, placement, mapping, {.bucket_size = Bytes::mib(25)});
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/collective.h"
#include "sim/gpu_program.h"
#include "workloads/mapping.h"
#include "workloads/op_order.h"
#include "workloads/placement.h"
#include "workloads/profile.h"

namespace hybridsim::workloads {

// GradientCopyIn / GradientCopyOut: what data parallelism adds on each GPU around a gradient
// collective — the copy of its gradients into one flat buffer before it (with the 1/dp scaling
// fused, as PyTorch DDP's reducer and Horovod's fusion buffer do) and back out after it.
enum class Phase : std::uint8_t { Forward, Backward, Optimizer, GradientCopyIn, GradientCopyOut };
// "forward", "backward", "optimizer", "gradient-copy-in", "gradient-copy-out"
std::string_view phase_name(Phase phase);
bool is_gradient_copy(Phase phase);

// What a kernel task is, for metrics and traces (Task::kernel's label indexes StepProgram::labels).
struct KernelLabel {
  std::uint32_t op = 0;  // index into the profile's ops (copies: the collective's last op); unused for the optimizer
  Phase phase = Phase::Forward;
  std::uint32_t kernel = 0;  // index into the op's forward or backward kernels; copies: into StepProgram::collectives
};

enum class CollectiveRole : std::uint8_t {
  GradientAllReduce,  // a dense gradient bucket, all-reduced over a data-parallel group
  GradientAllGather,  // a sparse gradient, all-gathered over a data-parallel group
  Activation,         // model parallel: an op's output sent to a consumer's GPU (forward)
  ActivationGradient, // model parallel: the gradient of that output sent back (backward)
};

struct CollectiveSpec {
  CollectiveRole role = CollectiveRole::GradientAllReduce;
  sim::CollectiveOp op = sim::CollectiveOp::AllReduce;
  sim::Bytes size;
  std::vector<int> members;  // global GPU ranks, in collective-rank order
  std::uint32_t op_index = 0;  // the op whose data it moves (for buckets: the last op in it)
  int bucket = -1;             // gradient buckets: index within the MP rank's buckets
  int mp_rank = 0;             // which model-parallel rank's group (gradients) or sender's rank
};

struct StepOptions {
  sim::Bytes bucket_size = sim::Bytes::of(25'000'000);  // PyTorch DDP's default bucket_cap_mb = 25
  // When the profile records its all-reduce buckets (Op::buckets, from an imported trace), issue
  // exactly those instead of packing dense gradients into bucket_size. Scenarios set this when
  // communication.bucket_size is not written; code that chooses a bucket size leaves it false.
  bool recorded_buckets = false;
  // For ordering ops only (workloads/op_order.h); zero ignores transfer time.
  sim::Bandwidth mp_transfer_estimate = sim::Bandwidth::gb_per_second(25);
  // Kernel durations are multiplied by this on every GPU (0.5 = a GPU twice as fast), and on GPU g
  // also by gpu_compute_scale[g] when g is inside that list (stragglers, mixed GPU generations).
  double compute_scale = 1.0;
  std::vector<double> gpu_compute_scale;
  // Copy each data-parallel gradient collective's gradients into a flat buffer before it and back
  // after it (Phase::GradientCopyIn/Out): 2 passes over the bytes each way (read + write) at the
  // GPU's memory-kernel bandwidth, at least its shortest kernel (workloads/gpu_spec.h). Not for GPUs
  // without a spec, nor for profiles with recorded buckets (an imported data-parallel trace already
  // holds its copies). False: gradients are the buckets (DDP's gradient_as_bucket_view).
  bool gradient_copies = true;
};

struct StepProgram {
  std::vector<sim::GpuProgram> gpus;  // by global GPU rank; GPUs outside the strategy are empty
  std::vector<CollectiveSpec> collectives;
  std::uint32_t event_count = 0;
  std::vector<KernelLabel> labels;
  std::vector<int> worker_of_gpu;   // -1 for unused GPUs
  std::vector<int> mp_rank_of_gpu;  // -1 for unused GPUs
  int dp = 1;
  int mp = 1;
  std::int64_t global_batch = 0;  // samples per step over all workers

  // Whether a kernel task is one of the data-parallel gradient copies (false for unlabelled ones).
  bool is_gradient_copy(const sim::Task& t) const {
    return t.kind == sim::TaskKind::Kernel && t.id < labels.size() && workloads::is_gradient_copy(labels[t.id].phase);
  }
};

// GPU g's kernel-duration factor: options.compute_scale × options.gpu_compute_scale[g] (if listed).
double gpu_compute_scale(const StepOptions& options, std::size_t gpu);

// `gpu_count` is the cluster's GPU count (programs are indexed by global GPU rank).
StepProgram build_step_program(const Profile& profile, const MpPlacement& placement,
                               const WorkerMapping& mapping, int gpu_count,
                               const StepOptions& options);

}  // namespace hybridsim::workloads

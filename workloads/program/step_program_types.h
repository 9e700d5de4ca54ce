// A step program's types: per-GPU programs, kernel labels, collective specs and options
// (step_program.h builds one; its parts, step_program_parts.h, fill them in).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/collective.h"
#include "sim/gpu_program.h"
#include "workloads/profile/profile.h"
#include "workloads/program/mapping.h"
#include "workloads/program/op_order.h"
#include "workloads/program/pipeline_schedule.h"
#include "workloads/program/placement.h"
#include "workloads/profile/tp_sync.h"

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
  std::uint32_t op =
      0;  // index into the profile's ops (copies: the collective's last op); unused for the optimizer
  Phase phase = Phase::Forward;
  std::uint32_t kernel =
      0;  // index into the op's forward or backward kernels; copies: StepProgram::copy_bucket's
  std::int32_t micro_batch = -1;  // pipelines (pipeline_program.h): the micro-batch; -1 elsewhere
};

enum class CollectiveRole : std::uint8_t {
  GradientAllReduce,          // a dense gradient bucket, all-reduced over a data-parallel group
  GradientAllGather,          // a sparse gradient, all-gathered over a data-parallel group
  Activation,                 // model parallel: an op's output sent to a consumer's GPU (forward)
  ActivationGradient,         // model parallel: the gradient of that output sent back (backward)
  TensorParallel,             // tensor parallel: a layer's all-reduce (or reduce-scatter, all-gather) of
                              // activations on its TP group, between kernels of the compute stream
  ParameterAllGather,         // ZeRO-3/FSDP: one op's parameters, gathered before its forward or backward
  UpdatedParameterAllGather,  // ZeRO-1/2: every updated parameter, gathered after the sharded optimizer
  ExpertParallel,             // expert parallel: a MoE layer's dispatch or combine all-to-all on its EP
                              // group, between kernels of the compute stream
  NormGradientAllReduce,      // sequence parallel: the norms' (and routers') gradients, whole on every
                              // TP rank, all-reduced on its TP group before the optimizer (TpGradient)
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

// Whose data-parallel wrapper a step models (the scenario key communication.ddp): PyTorch's DDP
// (25 MB buckets, copy in and out) or apex's (10 M-element buckets, flatten, divide, copy back).
enum class Ddp : std::uint8_t { Torch, Apex };
std::string_view ddp_name(Ddp ddp);  // "torch", "apex"
Ddp ddp_by_name(std::string_view name);  // InternalError for anything else (the schema checks it)
// apex DDP's default bucket: 10 M elements of `value_bytes` bytes (apex
// parallel/distributed.py, message_size = 10,000,000).
sim::Bytes apex_bucket_size(std::int64_t value_bytes);
// The copy passes of a DDP (StepOptions::copy_passes).
int ddp_copy_passes(Ddp ddp);

// Expert parallelism (workloads/program/expert_parallel.h): EP groups of `ep` consecutive
// data-parallel replicas (one machine under the default mapping), the all-to-alls of the transformer
// generator between kernels, and the ops whose gradients are the experts' (each its own bucket,
// all-reduced over dp / ep replicas only).
struct ExpertParallelOptions {
  int ep = 1;
  std::vector<TpSync> syncs = {};
  std::vector<std::uint32_t> expert_ops = {};
};

struct StepOptions {
  sim::Bytes bucket_size = sim::Bytes::of(25'000'000);  // PyTorch DDP's default bucket_cap_mb = 25
  // When the profile records its all-reduce buckets (Op::buckets, from an imported trace), issue
  // exactly those instead of packing dense gradients into bucket_size. Scenarios set this when
  // communication.bucket_size is not written; code that chooses a bucket size leaves it false.
  bool recorded_buckets = false;
  // For ordering ops only (workloads/program/op_order.h); zero ignores transfer time.
  sim::Bandwidth mp_transfer_estimate = sim::Bandwidth::gb_per_second(25);
  // Kernel durations are multiplied by this on every GPU (0.5 = a GPU twice as fast), and on GPU g
  // also by gpu_compute_scale[g] when g is inside that list (stragglers, mixed GPU generations).
  double compute_scale = 1.0;
  std::vector<double> gpu_compute_scale;
  // Copy each data-parallel gradient collective's gradients into a flat buffer before it and back
  // after it (Phase::GradientCopyIn/Out): 2 passes over the bytes each way (read + write) at the
  // GPU's memory-kernel bandwidth, at least its shortest kernel (workloads/gpu/gpu.h). Not for GPUs
  // without a spec, nor for profiles with recorded buckets (an imported data-parallel trace already
  // holds its copies). False: gradients are the buckets (DDP's gradient_as_bucket_view).
  bool gradient_copies = true;
  // Passes over a bucket's bytes (each a read and a write) around its collective, the copy back
  // out included: 2 for PyTorch DDP (copy in with the 1/dp scaling fused, copy out), 3 for apex DDP
  // (flatten, divide by the world size, copy back: ../shared/reference/gnmt_training_loop.md §2).
  int copy_passes = 2;
  // Micro-batches per step (gradient accumulation): forward and backward run this many times, the
  // optimizer once. More than 1 only with mp = 1.
  int accumulation = 1;
  // Whether data-parallel gradients are exchanged after every micro-batch (apex DDP, and PyTorch
  // DDP without no_sync) or once, after the last (PyTorch DDP's no_sync on the others).
  bool exchange_every_micro_batch = true;
  // Tensor parallelism (workloads/program/tensor_parallel.h): the mapping's workers are dp × tp, each
  // TP group tp consecutive workers, and these collectives run between the kernels that issue them.
  int tp = 1;
  std::vector<TpSync> tp_syncs = {};
  std::vector<TpGradient> tp_gradients = {};  // sequence parallelism's, all-reduced before the optimizer
  // Sharded data parallelism (workloads/program/sharded_data_parallel.h): ZeRO stage 0..3 over
  // the data-parallel replicas (3: FSDP).
  int zero = 0;
  ExpertParallelOptions ep = {};
  // Pipeline parallelism (pipeline_program.h): the mapping's mp ranks are its stages, and
  // `accumulation` its micro-batches per step. pp = 1: none.
  PipelineOptions pipeline = {};
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
  int accumulation = 1;           // micro-batches per step (StepOptions::accumulation)
  int tp = 1;                     // GPUs per data-parallel replica's TP group (dp × mp × tp GPUs)
  std::int64_t global_batch = 0;  // samples per step over all workers and micro-batches

  // Buckets whose collective had one member and was dropped (lone_collectives.h): their copies stay,
  // labelled kUnexchanged − j for the j-th.
  std::vector<CollectiveSpec> unexchanged_buckets;
  static constexpr std::uint32_t kUnexchanged = UINT32_MAX;

  // The bucket a gradient copy's label names: a collective, or one of unexchanged_buckets.
  const CollectiveSpec& copy_bucket(const KernelLabel& copy) const {
    return copy.kernel < collectives.size() ? collectives[copy.kernel]
                                            : unexchanged_buckets.at(kUnexchanged - copy.kernel);
  }

  // Whether a kernel task is one of the data-parallel gradient copies (false for unlabelled ones).
  bool is_gradient_copy(const sim::Task& t) const {
    return t.kind == sim::TaskKind::Kernel && t.id < labels.size() &&
           workloads::is_gradient_copy(labels[t.id].phase);
  }
};

}  // namespace hybridsim::workloads

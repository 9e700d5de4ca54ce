// The named steps build_step_program (workloads/program/step_program.h) is made of, each tested on its own
// (tests/unit/workloads_step_program_parts.cpp). Worker-independent steps first — kernel labels,
// model-parallel edges, gradient collectives per MP rank, optimizer time per MP rank, together a
// StepLayout — then, per worker, its events and each GPU's streams.
//   StepLayout layout = lay_out_step(profile, placement, dp, options);
//   WorkerEvents e = allocate_worker_events(layout, next_event);
//   sim::StreamProgram compute = compute_stream(profile, layout, e, /*mp rank=*/0);
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "workloads/gpu/gpu.h"
#include "workloads/program/step_program_types.h"

namespace hybridsim::workloads::step_parts {

// Every kernel's label: op v's forward kernels from first_of_op[v], then its backward kernels; the
// optimizer's label after all ops' kernels.
struct KernelLabels {
  std::vector<KernelLabel> labels;
  std::vector<std::uint32_t> first_of_op;
  std::uint32_t optimizer = 0;
};
KernelLabels label_kernels(const Profile& profile);

// A model-parallel edge of one worker: op `op`'s output is needed on MP rank `to` (≠ its own rank
// `from`); the gradient goes back after the backward of `last_backward_consumer` (on `to`, the
// consumer whose backward runs last there).
struct MpEdge {
  std::uint32_t op = 0;
  int from = 0;
  int to = 0;
  std::uint32_t last_backward_consumer = 0;
  bool operator==(const MpEdge&) const = default;
};
struct MpEdges {
  std::vector<MpEdge> edges;                      // in order of first consumer, then input order
  std::vector<std::vector<std::size_t>> of_op;    // op → edges it produces
  std::vector<std::vector<std::size_t>>
      gradient_after;  // op → edges whose gradient is ready after its backward
  std::map<std::pair<std::uint32_t, int>, std::size_t> index;  // (op, to) → edge
};
MpEdges model_parallel_edges(const Profile& profile, const MpPlacement& placement, const OpOrder& order);

// A data-parallel gradient collective of one MP rank, launched after `trigger`'s backward.
struct GradientCollective {
  CollectiveRole role = CollectiveRole::GradientAllReduce;
  sim::Bytes size;  // per worker: bucket bytes, or the sparse bytes one worker contributes
  std::uint32_t trigger = 0;
  int bucket = -1;  // dense buckets: 0, 1, ... in the order backward fills them; -1 for sparse
  bool operator==(const GradientCollective&) const = default;
};
// The collectives of the ops run in `backward_order` (one MP rank): dense gradients packed into
// buckets of options.bucket_size in backward order (a bucket closes once it reaches the size), or
// the profile's recorded buckets; each sparse gradient all-gathered on its own.
std::vector<GradientCollective> gradient_collectives(const Profile& profile,
                                                     std::span<const std::uint32_t> backward_order,
                                                     const StepOptions& options);

// The optimizer's time on each MP rank: the parameters it updates after `dp` workers exchanged
// gradients, each op rounded as Profile::optimizer_time does.
std::vector<sim::Time> optimizer_times(const Profile& profile, const MpPlacement& placement, int dp);

// The copies around one gradient collective (StepOptions::gradient_copies): into the flat buffer
// after its gradients are ready, out of it after every collective is done; with their labels.
struct GradientCopy {
  sim::Time in, out;
  std::uint32_t in_label = 0, out_label = 0;
  bool operator==(const GradientCopy&) const = default;
};
// Per MP rank, per gradient collective; `first_collective[k]` is the global index of rank k's first
// (they are numbered rank by rank). Copy in: (passes − 1) × 2 × the bytes one worker contributes;
// copy out: 2 × the bytes it gets back (a bucket; all workers' rows of a gather), each at `gpu`'s
// memory-kernel bandwidth and at least its shortest kernel. Labels are appended to `labels`.
std::vector<std::vector<GradientCopy>> gradient_copies(
    const std::vector<std::vector<GradientCollective>>& gradients,
    const std::vector<std::uint32_t>& first_collective, int dp, const Gpu& gpu, KernelLabels& labels,
    int passes = 2);

// Everything about the step that is the same for every worker.
struct StepLayout {
  int dp = 1;
  int mp = 1;
  OpOrder order;
  std::vector<std::vector<std::size_t>> forward_position;   // [mp rank][op] → position in its order
  std::vector<std::vector<std::size_t>> backward_position;
  KernelLabels labels;
  MpEdges edges;
  std::vector<std::vector<GradientCollective>> gradients;   // [mp rank], empty for dp = 1
  std::vector<std::vector<std::vector<std::size_t>>> gradients_after;  // [mp rank][op] → indices
  std::vector<sim::Time> optimizer;                         // [mp rank]
  std::vector<std::vector<GradientCopy>> copies;            // [mp rank][gradient collective]; empty: none
  // Micro-batches (StepOptions::accumulation) and how many of them exchange gradients: all of
  // them, or only the last (`rounds` = 1). `gradients` and `copies` hold `rounds` × the ones of a
  // micro-batch, round by round; gradients_after indexes round 0's.
  int micro_batches = 1;
  int rounds = 1;
};
StepLayout lay_out_step(const Profile& profile, const MpPlacement& placement, int dp,
                        const StepOptions& options);

// The events of one worker, numbered from `next_event` on (which is advanced): per op that feeds
// another GPU its forward_done; per edge the activation's arrival, the gradient's readiness and its
// arrival; per MP rank one event per gradient collective (its gradients are ready) and one when
// all of them are done.
struct WorkerEvents {
  std::vector<std::uint32_t> forward_done;  // [op]; meaningful for ops with edges
  std::vector<std::uint32_t> activation_received, gradient_ready, gradient_received;  // [edge]
  std::vector<std::vector<std::uint32_t>> gradients_ready;  // [mp rank][gradient collective]
  std::vector<std::uint32_t> gradients_done;                // [mp rank]
  std::vector<std::vector<std::uint32_t>> round_done;       // [mp rank][round < rounds − 1]
};
WorkerEvents allocate_worker_events(const StepLayout& layout, std::uint32_t& next_event);

// MP rank k's compute stream: forward kernels in its forward order (waiting for activations from
// other GPUs, recording when an output another GPU needs is done), backward in its backward order
// (waiting for gradients from consumers elsewhere, recording gradients ready to send back and —
// after copying their gradients in — gradient collectives ready to launch), then, after every
// gradient collective, the copies out and the optimizer. With micro-batches, forward and backward
// repeat; a micro-batch that exchanges gradients waits for its round and copies out before the next.
sim::StreamProgram compute_stream(const Profile& profile, const StepLayout& layout,
                                  const WorkerEvents& events, int k);
// MP rank k's gradient collectives in order, each after its gradients are ready (`collective[i]`
// is the global index of collective i); nothing for dp = 1.
std::optional<sim::StreamProgram> communication_stream(const StepLayout& layout, const WorkerEvents& events,
                                                       int k, std::uint32_t worker,
                                                       std::span<const std::uint32_t> collective);
// The transfers of this worker's edges: `activation[e]` and `gradient[e]` are the global indices of
// edge e's two point-to-point collectives; `gpu_of_rank[k]` the worker's global GPU ranks. One send
// stream per peer MP rank k sends to, and one receive stream per peer it receives from, each in the
// order the data becomes ready (activations in the sender's forward order, then gradients in its
// backward order).
std::vector<sim::StreamProgram> send_streams(const StepLayout& layout, const WorkerEvents& events, int k,
                                             std::span<const std::uint32_t> activation,
                                             std::span<const std::uint32_t> gradient,
                                             std::span<const int> gpu_of_rank);
std::vector<sim::StreamProgram> receive_streams(const StepLayout& layout, const WorkerEvents& events, int k,
                                                std::span<const std::uint32_t> activation,
                                                std::span<const std::uint32_t> gradient,
                                                std::span<const int> gpu_of_rank);

}  // namespace hybridsim::workloads::step_parts

// A training-step profile: the dataflow graph of ONE training step of a network on ONE GPU — ops with
// their forward and backward kernels (durations, sim::Time), output activation and gradient sizes
// (sim::Bytes) and how each gradient is exchanged under data parallelism — plus the optimizer's cost
// per byte of parameters updated. A plain value type; ops are topologically ordered (inputs first).
//   const Profile p = builtin_profile("gnmt");                 // profile_gen.h
//   p.step_time_1gpu();  p.throughput_1gpu();  // 21,4xx tokens/s;  p.ops[p.op_by_name("enc.L2.t3")]
// The YAML form (format hybridsim-profile/1) is documented field by field in workloads/README.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/gpu_program.h"
#include "sim/time.h"
#include "sim/units.h"

namespace hybridsim::workloads {

// One GPU kernel (or a fused group of them) and how long it runs alone on the profiled GPU.
struct Kernel {
  std::string name;  // "conv", "gemm_recurrent", "lstm_pointwise" (not unique)
  sim::Time duration;
  // Idle time before the kernel starts: a CPU launch gap measured in a trace and kept (hybridsim
  // import kineto --keep-gaps). Replay waits this long, as idle time, not compute; zero: none.
  sim::Time idle_before{};
  // What limits it: SMs (GEMMs, convolutions: the default) or memory bandwidth (element-wise,
  // normalization, pooling). Decides how communication on its GPU slows it (sim/stream_executor.h).
  sim::KernelBound bound = sim::KernelBound::Compute;
  bool operator==(const Kernel&) const = default;
};

// How an op's parameter gradient is combined across data-parallel workers.
enum class GradientExchange : std::uint8_t {
  None,             // the op has no parameters
  DenseAllReduce,   // every worker all-reduces gradient_bytes
  SparseAllGather,  // every worker contributes sparse_bytes_per_worker (the touched rows and their
                    // indices, as TensorFlow's IndexedSlices) and gathers everyone else's
};
// "none", "dense-allreduce", "sparse-allgather" (the YAML spellings).
std::string_view gradient_exchange_name(GradientExchange exchange);
// The inverse of gradient_exchange_name; nullopt for anything else.
std::optional<GradientExchange> find_gradient_exchange(std::string_view name);

// One node of the step's dataflow graph: a layer (or one time step of a recurrent layer).
struct Op {
  std::string name;               // unique in the profile: "Mixed_5b.branch5x5_2", "enc.L2.t3"
  std::string layer;              // what placements match: "Mixed_5b", "enc.L2" (defaults to name)
  std::optional<int> step;        // token position t of an unrolled recurrent op; nullopt otherwise
  std::vector<Kernel> forward;    // run in order in the forward pass
  std::vector<Kernel> backward;   // run in order in the backward pass (data and weight gradients)
  sim::Bytes activation_bytes;    // the op's output for the whole per-GPU batch: what another GPU
                                  // holding consumers receives (once), and the size of the gradient
                                  // it sends back in backward
  sim::Bytes gradient_bytes;      // parameter gradient, ready when this op's backward finishes
  GradientExchange exchange = GradientExchange::None;
  sim::Bytes sparse_bytes_per_worker;  // only for SparseAllGather: what one worker sends
  // Only for DenseAllReduce, in profiles imported from traces: the recorded all-reduce buckets
  // launched after this op's backward, in order, summing to gradient_bytes. Empty: not recorded.
  // A profile has them on every dense op or on none (Profile::has_recorded_buckets).
  std::vector<sim::Bytes> buckets{};
  std::vector<std::uint32_t> inputs;   // indices of earlier ops whose outputs this op reads

  sim::Time forward_time() const;
  sim::Time backward_time() const;
  bool has_gradient() const { return exchange != GradientExchange::None; }
  // Parameter bytes the optimizer rewrites on each worker after `workers` workers exchanged
  // gradients: all of gradient_bytes for a dense op; for a sparse op the gathered rows,
  // workers × sparse_bytes_per_worker, at most gradient_bytes; zero without parameters.
  sim::Bytes update_bytes(std::int64_t workers) const;
  bool operator==(const Op&) const = default;
};

// What the profile describes and where its numbers come from.
struct ProfileMetadata {
  std::string network;          // "inception-v3", "gnmt", "biglstm"
  std::string gpu;              // "V100-SXM2-16GB"
  std::string precision;        // "fp32"
  std::int64_t batch_per_gpu = 0;    // samples per GPU per step: images, sentence pairs, sequences
  std::int64_t sequence_length = 0;  // unrolled time steps (the source side of an encoder-decoder);
                                     // 0 for networks without time steps
  std::int64_t target_length = 0;    // decoder time steps of an encoder-decoder; 0 otherwise
  std::string throughput_unit;       // what throughput counts: "images", "tokens", "words"
  std::int64_t units_per_step = 0;   // throughput units one GPU processes per step
  // The recipe of the one-GPU figure the kernels were calibrated to: micro-batches per optimizer
  // update (GNMT: 8, a global batch of 1,024 at 128 per GPU); step_time_1gpu() follows it.
  std::int64_t measured_micro_batches = 1;
  std::string source;                // where the numbers come from
  std::string notes;                 // choices and caveats
  bool operator==(const ProfileMetadata&) const = default;
};

// The optimizer update, memory-bound and proportional to the parameter bytes a GPU holds, so a
// placement can split it by which GPU holds which parameters.
struct OptimizerCost {
  std::string name;         // "sgd-momentum", "adam", "adagrad"
  sim::Time time_per_gib;   // to update 2^30 bytes of parameters (reads and writes included)
  sim::Time idle_before{};  // kept CPU launch gaps of the optimizer phase (as Kernel::idle_before)

  // ceil(bytes × time_per_gib / 2^30), exact.
  sim::Time update_time(sim::Bytes parameter_bytes) const;
  bool operator==(const OptimizerCost&) const = default;
};

struct Profile {
  ProfileMetadata meta;
  OptimizerCost optimizer;
  std::vector<Op> ops;  // topologically ordered: every input index is smaller than the op's own

  std::optional<std::uint32_t> find_op(std::string_view name) const;
  std::uint32_t op_by_name(std::string_view name) const;  // throws InputError naming the op

  sim::Time forward_time() const;   // sum of all forward kernels
  sim::Time backward_time() const;  // sum of all backward kernels
  // The optimizer over every op's update_bytes(workers) (each op rounded up separately).
  sim::Time optimizer_time(std::int64_t workers = 1) const;
  // One GPU runs the whole step serially under the measured recipe: meta.measured_micro_batches ×
  // (forward + backward + the kernels' idle_before) + the optimizer (and its idle_before).
  sim::Time step_time_1gpu() const;
  // meta.units_per_step × micro-batches / step_time_1gpu(), in throughput units per second.
  double throughput_1gpu() const;
  // Sum of gradient_bytes over all ops (all parameters, in the profile's precision).
  sim::Bytes parameter_bytes() const;
  // Kept launch gaps: every kernel's idle_before plus the optimizer's (zero unless imported so).
  sim::Time idle_time() const;
  // True when dense gradients carry their recorded all-reduce buckets (Op::buckets).
  bool has_recorded_buckets() const;

  bool operator==(const Profile&) const = default;
};

// Checks the invariants the loader guarantees (unique non-empty names, inputs pointing to earlier
// ops, gradient fields consistent with the exchange, recorded buckets on every dense op or none and
// summing to its bytes, no negative times, positive batch and units); throws InputError naming the
// profile's network and the op. For profiles built in code.
void validate_profile(const Profile& profile);

}  // namespace hybridsim::workloads

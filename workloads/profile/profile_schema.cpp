// The one declaration of every key of a profile file (format hybridsim-profile/1; the field
// reference in workloads/README.md is generated from this table). Order matters: it is the order
// of the reference and of "expected one of" lists. Parents come before their children.
#include "workloads/profile/profile_io.h"

namespace hybridsim::workloads {
namespace {

using K = yaml::FieldKind;
constexpr double kMaxCount = 1099511627776.0;  // 2^40

constexpr yaml::FieldSpec kFields[] = {
    {.path = "format", .kind = K::Text, .required = true,
     .type_doc = "hybridsim-profile/1 (the only version this code reads)",
     .help = "The format and its version."},
    {.path = "metadata", .kind = K::Section, .required = true, .help = "What was profiled."},
    {.path = "metadata.network", .kind = K::Text, .required = true,
     .help = "The network's name: inception-v3, gnmt, biglstm or your own."},
    {.path = "metadata.gpu", .kind = K::Text, .required = true,
     .help = "The GPU the durations describe, e.g. V100-SXM2-16GB."},
    {.path = "metadata.precision", .kind = K::Text, .required = true, .help = "fp32, fp16/mixed, ..."},
    {.path = "metadata.batch_per_gpu", .kind = K::Integer, .required = true, .min = 1, .max = kMaxCount,
     .help = "Samples per GPU per step (images, sentence pairs, sequences)."},
    {.path = "metadata.sequence_length", .kind = K::Integer, .default_text = "0", .min = 0, .max = kMaxCount,
     .help = "Unrolled time steps (the source side of an encoder-decoder); 0: none."},
    {.path = "metadata.target_length", .kind = K::Integer, .default_text = "0", .min = 0, .max = kMaxCount,
     .help = "Decoder time steps of an encoder-decoder; 0: none."},
    {.path = "metadata.throughput_unit", .kind = K::Text, .required = true,
     .help = "What throughput counts: images, tokens, words."},
    {.path = "metadata.units_per_step", .kind = K::Integer, .required = true, .min = 1, .max = kMaxCount,
     .help = "Throughput units one GPU processes per step."},
    {.path = "metadata.source", .kind = K::Text, .default_doc = "empty", .help = "Where the numbers come from."},
    {.path = "metadata.notes", .kind = K::Text, .default_doc = "empty", .help = "Choices and caveats."},
    {.path = "optimizer", .kind = K::Section, .required = true,
     .help = "The update, memory-bound: ceil(bytes × time_per_gib / 2^30) per op with a gradient."},
    {.path = "optimizer.name", .kind = K::Text, .required = true, .help = "sgd-momentum, adam, adagrad, ..."},
    {.path = "optimizer.time_per_gib", .kind = K::Duration, .required = true,
     .help = "The time to update 2^30 bytes of parameters (reads and writes included)."},
    {.path = "optimizer.idle_before", .kind = K::Duration, .default_text = "0 s",
     .help = "Kept launch gaps of the optimizer phase, waited (as idle time) before each GPU's "
             "optimizer kernel."},
    {.path = "ops", .kind = K::List, .required = true, .type_doc = "a non-empty list of ops",
     .help = "The ops, topologically ordered: every op after the ops it reads."},
    {.path = "ops[]", .kind = K::Section, .help = "One op."},
    {.path = "ops[].name", .kind = K::Text, .required = true, .help = "Unique in the profile, e.g. enc.L2.t3."},
    {.path = "ops[].layer", .kind = K::Text, .default_doc = "the op's name",
     .help = "What placements match: ops of an unrolled layer share it (enc.L2)."},
    {.path = "ops[].step", .kind = K::Integer, .default_doc = "none", .min = 0, .max = 1e9,
     .help = "The time step t of an unrolled recurrent op."},
    {.path = "ops[].inputs", .kind = K::List, .default_text = "[]", .type_doc = "a list of names of earlier ops",
     .help = "The dataflow edges: the ops whose outputs this op reads, each listed before it."},
    {.path = "ops[].inputs[]", .kind = K::Text, .help = "The name of an earlier op."},
    {.path = "ops[].activation", .kind = K::Size, .default_text = "0 B",
     .help = "The op's output for the whole per-GPU batch: what a consumer on another GPU receives."},
    {.path = "ops[].forward", .kind = K::List, .required = true,
     .type_doc = "a list of kernels {name, duration, idle_before, bound}, [] for none",
     .help = "The kernels of the forward pass, in the order they run."},
    {.path = "ops[].forward[]", .kind = K::Section, .help = "One kernel."},
    {.path = "ops[].forward[].name", .kind = K::Text, .required = true, .help = "Descriptive; need not be unique."},
    {.path = "ops[].forward[].duration", .kind = K::Duration, .required = true,
     .help = "The kernel running alone on the profiled GPU."},
    {.path = "ops[].forward[].idle_before", .kind = K::Duration, .default_text = "0 s",
     .help = "Idle time before the kernel starts: a CPU launch gap kept from a trace (hybridsim "
             "import kineto --keep-gaps), waited as idle time; compute_speed does not scale it."},
    {.path = "ops[].forward[].bound", .kind = K::Choice, .default_text = "compute", .choices = "compute|memory",
     .help = "What limits the kernel: compute (SMs) or memory (HBM bandwidth); a collective on the same "
             "GPU slows it by the SMs or the HBM bandwidth it takes (communication.compute_contention)."},
    {.path = "ops[].backward", .kind = K::List, .required = true,
     .type_doc = "a list of kernels {name, duration, idle_before, bound}, [] for none",
     .help = "The kernels of the backward (data and weight gradients) pass, in the order they run."},
    {.path = "ops[].backward[]", .kind = K::Section, .help = "One kernel."},
    {.path = "ops[].backward[].name", .kind = K::Text, .required = true, .help = "Descriptive; need not be unique."},
    {.path = "ops[].backward[].duration", .kind = K::Duration, .required = true,
     .help = "The kernel running alone on the profiled GPU."},
    {.path = "ops[].backward[].idle_before", .kind = K::Duration, .default_text = "0 s",
     .help = "Idle time before the kernel starts: a CPU launch gap kept from a trace (hybridsim "
             "import kineto --keep-gaps), waited as idle time; compute_speed does not scale it."},
    {.path = "ops[].backward[].bound", .kind = K::Choice, .default_text = "compute", .choices = "compute|memory",
     .help = "What limits the kernel: compute (SMs) or memory (HBM bandwidth); a collective on the same "
             "GPU slows it by the SMs or the HBM bandwidth it takes (communication.compute_contention)."},
    {.path = "ops[].gradient", .kind = K::Section, .default_doc = "none: no parameters",
     .help = "The op's parameter gradient, ready when its backward kernels finish."},
    {.path = "ops[].gradient.bytes", .kind = K::Size, .required = true, .min = 0, .min_exclusive = true,
     .help = "The gradient in the profile's precision (parameters × 4 in FP32)."},
    {.path = "ops[].gradient.exchange", .kind = K::Choice, .required = true,
     .choices = "dense-allreduce|sparse-allgather",
     .help = "dense-allreduce: every worker all-reduces bytes; sparse-allgather: every worker sends "
             "sparse_bytes_per_worker and gathers everyone else's."},
    {.path = "ops[].gradient.sparse_bytes_per_worker", .kind = K::Size, .default_doc = "required for sparse-allgather",
     .min = 0, .min_exclusive = true,
     .help = "The rows one worker touched, with an int64 index each; only for sparse-allgather."},
    {.path = "ops[].gradient.buckets", .kind = K::List, .default_doc = "not recorded",
     .type_doc = "a non-empty list of sizes summing to bytes",
     .help = "The all-reduces recorded for this gradient in a trace (dense only); given for every "
             "dense gradient or for none."},
    {.path = "ops[].gradient.buckets[]", .kind = K::Size, .min = 0, .min_exclusive = true,
     .help = "One recorded all-reduce."},
};

constexpr yaml::Schema kSchema{"profile", kFields};

}  // namespace

const yaml::Schema& profile_schema() { return kSchema; }

}  // namespace hybridsim::workloads

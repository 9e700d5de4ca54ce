// The keys several file types share — scenarios (schema_table.cpp), studies
// (analysis/study/study_schema.cpp) and validation cases (analysis/validate/validate_cases.cpp) —
// each declared once here and included by every table that reads it, so that a key means the same
// in every file: the same values, the same default, the same help.
//   constexpr yaml::FieldSpec kFields[] = {..., shared_keys::kAlgorithm, ...};
//   shared_keys::at(shared_keys::kAlgorithm, "cases[].collective.algorithm")   // the same key elsewhere
#pragma once
#include <string>
#include <string_view>

#include "scenarios/loader/scenario.h"
#include "sim/collective.h"
#include "sim/units.h"
#include "sim/yaml/schema.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/program/step_program.h"

namespace hybridsim::scenarios::shared_keys {

// A shared declaration under another path (a key nested in another file type's section).
constexpr yaml::FieldSpec at(yaml::FieldSpec spec, std::string_view path) {
  spec.path = path;
  return spec;
}

inline constexpr yaml::FieldSpec kFabric{
    .path = "cluster.fabric", .kind = yaml::FieldKind::Choice, .default_text = "fat-tree",
    .choices = "fat-tree|rail-optimized",
    .help = "The InfiniBand fabric between machines: a two-level fat tree, or rails (NIC k of "
            "every machine on rail k)."};
inline constexpr yaml::FieldSpec kOversubscription{
    .path = "cluster.oversubscription",
    .kind = yaml::FieldKind::Number,
    .default_text = "1",
    .min = 1,
    .help =
        "Leaf downlink / uplink bandwidth of the fabric; 1 is non-blocking. Where every NIC "
        "plugs into one leaf switch (2 DGX H100, 4 DGX-1 at leaf_radix 16) nothing crosses a spine: "
        "a scenario's run notes it, a study refuses it."};

inline constexpr yaml::FieldSpec kPrecision{
    .path = "workload.precision",
    .kind = yaml::FieldKind::Choice,
    .default_doc = "fp32; a transformer: amp; a profile file: its own",
    .choices = "fp32|tf32|fp16|bf16|amp|fp8",
    .help =
        "The math of every network. fp32 (TF32 Tensor Cores from the A100 on) or tf32; fp16, bf16 or "
        "amp: 16-bit Tensor Cores with FP32 master weights (16-bit activations and gradients: half the "
        "bytes exchanged; amp is BF16 for a transformer from the A100 on, else FP16); fp8: H100/H200, "
        "transformers only, an estimate. Calibrated on one V100 for GNMT (fp32, amp) and on "
        "transformers.md's one-GPU figures; the rest are estimates. A profile file must have this "
        "precision."};
inline constexpr yaml::FieldSpec kGpu{
    .path = "workload.gpu", .kind = yaml::FieldKind::Choice, .default_text = "auto",
    .dynamic_choices = workloads::gpu_choice_names,
    .help = "The GPU whose cost model prices a built-in network: v100 (calibrated), a100, a100-40gb, "
            "h100, h200 (derived from the V100 by peak ratios: estimates); auto: the GPU of "
            "cluster.preset (dgx-a100: a100, dgx-h100: h100, hgx-h200: h200, the others: v100), "
            "v100 for a custom topology. A profile file must be for this GPU."};

inline constexpr yaml::FieldSpec kAlgorithm{
    .path = "communication.algorithm", .kind = yaml::FieldKind::Choice, .default_text = "auto",
    .choices = "auto|ring|tree|hierarchical",
    .help = "All-reduce algorithm: auto, NCCL's choice of ring or tree per call by its own cost "
            "model (sim/README.md); ring: rings over all members; tree: NCCL's double binary "
            "tree; hierarchical: reduce-scatter inside machines, all-reduce across them, "
            "all-gather inside. Other collectives run as rings."};
inline constexpr yaml::FieldSpec kMessageSize{
    .path = "communication.message_size", .kind = yaml::FieldKind::Size,
    .default_fn = [] { return sim::format_bytes(sim::CollectiveConfig{}.message_size); }, .min = 0,
    .min_exclusive = true, .help = "A ring step's chunk travels in messages of at most this size."};
inline constexpr yaml::FieldSpec kBucketSize{
    .path = "communication.bucket_size", .kind = yaml::FieldKind::Size,
    .default_fn = [] { return sim::format_bytes(workloads::StepOptions{}.bucket_size); }, .min = 0,
    .min_exclusive = true,
    .help = "Gradients are all-reduced in buckets of about this size (PyTorch DDP's 25 MB)."};
inline constexpr yaml::FieldSpec kDdp{
    .path = "communication.ddp", .kind = yaml::FieldKind::Choice, .default_text = "torch",
    .choices = "torch|apex",
    .help = "Whose data-parallel wrapper: torch (PyTorch DDP: buckets of 25 MB, copy in with the "
            "1/dp scaling fused and copy out, 2 passes) or apex (apex DDP, NVIDIA's GNMT: buckets of "
            "10 M elements unless communication.bucket_size is written, flatten, divide and copy "
            "back, 3 passes; gnmt_training_loop.md section 2)."};
inline constexpr yaml::FieldSpec kFastPath{
    .path = "communication.fast_path",
    .kind = yaml::FieldKind::Choice,
    .default_fn = [] { return std::string(sim::fast_path_name(kDefaultFastPath)); },
    .choices = "auto|bounded|off",
    .help =
        "auto: a ring whose ranks repeat a pattern (same links, same join time) and whose links "
        "nothing else crosses is simulated on representative ranks only, exactly (sim/README.md, "
        "Folding), else in full, and the run says which (and, where chunks of unequal size kept it "
        "from folding, what bounded would fold it within); bounded: also when chunks of unequal "
        "size keep it within 0.1% of the collective's time (reports the upper bound), and trees in "
        "a folded step, every rank given the latest finish, within a bound the run states (each "
        "folded collective's own, carried through what waits on it: sim/README.md, Trees in a "
        "step: bounded, and The bound, carried through the step); off: every rank message by "
        "message."};

}  // namespace hybridsim::scenarios::shared_keys

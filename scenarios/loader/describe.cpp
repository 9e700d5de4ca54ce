// The short text summary of a resolved scenario: what a run summary prints and a trace records.
// Each scenario key's value is shown as its binding writes it back (key_text, key_binding.h).
#include <algorithm>
#include <cstdio>

#include "scenarios/loader/key_binding.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/resolve_transformer.h"
#include "topology/cluster.h"
#include "topology/preset_registry.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/gpu/gpu.h"
#include "workloads/gpu/gpu_part_note.h"
#include "workloads/program/step_program.h"
#include "workloads/program/strategy_label.h"

namespace hybridsim::scenarios {
namespace {

// "nvlink 50 GB/s; pcie 600 ns": the link kinds overridden, from the keys under cluster.links.
std::string link_overrides(const Scenario& s) {
  std::string out;
  for (const FieldSpec* kind : scenario_schema().children_of("cluster.links")) {
    std::string values;
    for (const FieldSpec* value : scenario_schema().children_of(kind->path))
      if (const std::string text = key_text(s, value->path); !text.empty()) values += " " + text;
    if (!values.empty()) out += (out.empty() ? "" : "; ") + std::string(yaml::leaf_name(kind->path)) + values;
  }
  return out;
}

// DDP's bucket copies are priced at the recorded GPU's memory bandwidth (step_program_layout.cpp):
// a GPU the table does not know leaves them out, which the step said nothing of.
bool gradient_copies_left_out(const ResolvedScenario& r) {
  const Scenario& s = r.scenario;
  return workloads::find_gpu(r.profile.meta.gpu) == nullptr && s.communication.gradient_copies &&
         s.parallelism.dp > 1 && !r.profile.has_recorded_buckets();
}

std::string copies_left_out_text(const ResolvedScenario& r) {
  return "its gradient copies are left out: " + r.profile.meta.gpu +
         " is not in the GPU table, whose memory bandwidth prices them (communication.gradient_copies)";
}

// Kernel times for another GPU than the preset's: a preset of another part of the chip whose kernels
// run (pcie-server's V100-PCIE-16GB, dgx2's V100-SXM3-32GB: the V100-SXM2-16GB's kernels, under
// workload.gpu auto or v100 alike, as plan and study say it) ran them unscaled without a word; and
// under workload.gpu: auto (the preset's GPU for a built-in network) a profile file recorded on
// another GPU is replayed as recorded. Say so, for a transformer too (its cost model prices the
// V100-SXM2-16GB there, "calibrated on one GPU of this kind"). A GPU named by workload.gpu that is not
// the preset's says so too (named_gpu_note). A custom topology names no GPU, so nothing mismatches,
// but a profile recorded on a GPU the table does not know loses its gradient copies there too: the
// early return for it said nothing of them (moecap).
std::optional<std::pair<std::string, std::string>> profile_gpu_note(const ResolvedScenario& r) {
  const Scenario& s = r.scenario;
  if (s.cluster.preset.empty()) {
    if (!gradient_copies_left_out(r)) return std::nullopt;
    return std::pair<std::string, std::string>{
        "GPU mismatch", "the profile was recorded on " + r.profile.meta.gpu +
                            ", on a custom topology (which names no GPU): its kernel times are replayed as "
                            "recorded; " +
                            copies_left_out_text(r)};
  }
  if (auto note = workloads::preset_part_note(s.cluster.preset, r.profile.meta.gpu, s.workload.compute_speed))
    return std::pair<std::string, std::string>{"GPU mismatch", std::move(*note)};
  if (s.workload.gpu_choice.gpu) {
    if (auto note = workloads::named_gpu_note(s.cluster.preset, r.profile.meta.gpu, "workload.gpu"))
      return std::pair<std::string, std::string>{"GPU mismatch", std::move(*note)};
    return std::nullopt;
  }
  const topology::PresetInfo* preset = topology::find_preset(s.cluster.preset);
  if (preset == nullptr || preset->gpu == r.profile.meta.gpu) return std::nullopt;
  if (s.workload.profile.empty() ||
      workloads::find_gpu(preset->gpu) == workloads::find_gpu(r.profile.meta.gpu))
    return std::nullopt;
  return std::pair<std::string, std::string>{
      "GPU mismatch", "the profile was recorded on " + r.profile.meta.gpu + ", but " + s.cluster.preset +
                          " has " + std::string(preset->gpu) +
                          ": its kernel times are replayed as recorded " +
                          "(workload.gpu: auto does not convert a profile file), and memory is checked " +
                          "against " + (r.gpu_capacity ? r.gpu_capacity->source : std::string("nothing")) +
                          (gradient_copies_left_out(r) ? "; " + copies_left_out_text(r) : std::string())};
}

// A capacity_factor below 1 drops tokens (every expert gets its even share, so each drops the same
// share); the run's tokens/s counts them as trained and its MFU leaves their experts' FLOPs out
// (workloads::layer_forward_flop), which the output did not say.
std::optional<std::string> token_dropping_note(const ResolvedScenario& r) {
  if (!r.transformer || r.transformer->dropped_token_share <= 0) return std::nullopt;
  char share[64], kept[64];
  std::snprintf(share, sizeof share, "%.3g%%", r.transformer->dropped_token_share * 100);
  std::snprintf(kept, sizeof kept, "%.3g%%", (1 - r.transformer->dropped_token_share) * 100);
  return "capacity_factor " + key_text(r.scenario, "workload.model.capacity_factor") + ": " + share +
         " of the tokens routed to each MoE layer's experts are dropped (they skip their experts, the "
         "residual carries them); tokens/s counts them, model FLOPs and MFU count only the " +
         kept + " of the experts' FLOPs that run";
}

}  // namespace

std::optional<std::pair<std::string, std::string>> kernel_times_setting(const ResolvedScenario& r) {
  const WorkloadSettings& w = r.scenario.workload;
  // Transformers say how their own cost model (workloads/gpu/transformer_cost.h) priced them.
  if (r.transformer)
    return std::pair<std::string, std::string>{
        "GPU, precision",
        r.profile.meta.gpu + ", " + r.profile.meta.precision +
            (r.transformer->estimate ? ": kernel times are an ESTIMATE (transformer cost model "
                                       "derived from the A100 calibration; workloads/README.md)"
                                     : ": kernel times calibrated on one GPU of this kind "
                                       "(transformers.md; workloads/README.md)")};
  const bool other_gpu = w.profile.empty() && r.profile.meta.gpu != workloads::gpu_table().front().model;
  if (!w.gpu_choice.gpu && !w.gpu_choice.precision && !other_gpu) return std::nullopt;
  return std::pair<std::string, std::string>{"GPU, precision", workloads::kernel_times_note(r.profile)};
}

// The rate written, or auto's with the GPU it follows: "509.75 GB/s (auto: A100 80GB's HBM / 4)".
std::string reduction_text(const ResolvedScenario& r) {
  const Scenario& s = r.scenario;
  if (s.communication.reduction_bandwidth) return key_text(s, "communication.reduction_bandwidth");
  const workloads::Gpu* gpu = workloads::find_gpu(r.profile.meta.gpu);
  return sim::format_bandwidth(r.collective.reduction_bandwidth) + " (auto: " +
         (gpu ? std::string(gpu->name) + "'s HBM / 4"
              : "the V100's, GPU \"" + r.profile.meta.gpu + "\" unknown") +
         ")";
}

std::vector<std::pair<std::string, std::string>> key_settings(const ResolvedScenario& r) {
  const Scenario& s = r.scenario;
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("scenario", s.name);
  out.emplace_back("source", s.source);
  std::string cluster =
      r.topology.name() + ", " + workloads::gpus_text(static_cast<std::int64_t>(r.topology.gpus().size()));
  if (s.cluster.topology.empty() && s.cluster.nodes > 1)
    cluster += ", " + std::to_string(s.cluster.nodes) + " nodes, " + key_text(s, "cluster.fabric") +
               ", oversubscription " + key_text(s, "cluster.oversubscription");
  out.emplace_back("cluster", cluster);
  if (const std::string links = link_overrides(s); !links.empty())
    out.emplace_back("links", links);
  const auto& meta = r.profile.meta;
  out.emplace_back("workload", meta.network + " (" + meta.gpu + ", " + meta.precision + "), batch " +
                                   std::to_string(meta.batch_per_gpu) + " per worker" +
                                   (s.workload.compute_speed != 1.0
                                        ? ", compute speed ×" + key_text(s, "workload.compute_speed")
                                        : std::string()));
  if (auto note = kernel_times_setting(r)) out.push_back(std::move(*note));
  if (auto note = profile_gpu_note(r)) out.push_back(std::move(*note));
  // As the run's strategy line says it: the mapping's workers are dp × tp one-GPU workers (and its mp
  // a pipeline's stages), and the global batch counts the micro-batches. The line said "dp 16 × mp 1
  // ..., global batch 16" beside summary.json's own "dp": 2, "global_batch": 2 (gpt3-175b's slice,
  // tp 8), and "global batch 1024" beside 4096 under training.global_batch: 4096.
  const workloads::StepOptions& step = r.step;
  const int replicas = r.mapping.dp / std::max(step.tp, 1);
  const std::string strategy = workloads::strategy_label(
      {.dp = replicas, .mp = r.mapping.mp, .tp = step.tp, .pp = step.pipeline.pp, .ep = step.ep.ep,
       .zero = step.zero, .gpus = r.mapping.gpu_count(), .transformer = is_transformer(s)});
  out.emplace_back("parallelism",
                   strategy + ", global batch " +
                       std::to_string(workloads::step_global_batch(r.profile, r.mapping, step)));
  out.emplace_back("placement", r.placement.description);
  out.emplace_back("mapping", r.mapping.description);
  const CommunicationSettings& c = s.communication;
  out.emplace_back("communication",
                   key_text(s, "communication.algorithm") + "/" + key_text(s, "communication.protocol") +
                       ", channels " + key_text(s, "communication.channels") + ", messages " +
                       key_text(s, "communication.message_size") + ", buckets " +
                       (r.step.recorded_buckets && r.profile.has_recorded_buckets()
                            ? std::string("as recorded in the profile")
                            : key_text(s, "communication.bucket_size")) +
                       ", reduction " + reduction_text(r) + ", " + key_text(s, "communication.switching") +
                       (c.pcie_only ? ", PCIe only" : ""));
  // A fixed LL or LL128 labelled the expert all-to-alls too, which ran Simple (NCCL's point-to-point).
  if (step.ep.ep > 1)
    if (std::string note = workloads::all_to_all_protocol_note(c.protocol); !note.empty())
      out.emplace_back("expert all-to-alls", std::move(note));
  if (auto note = token_dropping_note(r)) out.emplace_back("token dropping", std::move(*note));
  if (const workloads::Gpu* gpu = workloads::find_gpu(meta.gpu))
    out.emplace_back("GPU sharing", std::string(gpu->name) + ": " + std::to_string(gpu->sms) + " SMs, " +
                                        sim::format_bandwidth(gpu->memory_bandwidth) + "; contention " +
                                        key_text(s, "communication.compute_contention") +
                                        ", gradient copies " + key_text(s, "communication.gradient_copies"));
  else
    out.emplace_back("GPU sharing", "GPU \"" + meta.gpu + "\" unknown: no contention, no gradient copies");
  const workloads::Variability& v = s.variability;
  if (v.steps > 1 || v.varies()) {
    std::string text = key_text(s, "variability.steps") + (v.steps == 1 ? " step" : " steps") + ", seed " +
                       key_text(s, "variability.seed") + ", kernel jitter " +
                       (v.kernel_jitter > 0 ? key_text(s, "variability.kernel_jitter") : std::string("off")) +
                       ", sequence lengths " + key_text(s, "variability.sequence_lengths");
    if (v.lengths != workloads::LengthDistribution::Fixed)
      text += " " + key_text(s, "variability.batching") +
              (v.batching == workloads::Batching::Bucketed
                   ? " (" + key_text(s, "variability.length_buckets") + " bins)"
                   : "");
    out.emplace_back("variability", text);
  }
  if (!s.provenance.overrides.empty()) {
    std::string o;
    for (const auto& text : s.provenance.overrides) o += (o.empty() ? "" : "; ") + text;
    out.emplace_back("overrides", o);
  }
  return out;
}

std::string describe(const ResolvedScenario& r) {
  const auto settings = key_settings(r);
  std::size_t width = 0;
  for (const auto& [k, v] : settings) width = std::max(width, k.size());
  std::string out;
  for (const auto& [k, v] : settings) out += k + ":" + std::string(width + 1 - k.size(), ' ') + v + "\n";
  return out;
}

}  // namespace hybridsim::scenarios

// The short text summary of a resolved scenario: what a run summary prints and a trace records.
#include <charconv>

#include "scenarios/loader/resolve.h"
#include "topology/cluster.h"
#include "workloads/generators/gpu_choice.h"
#include "workloads/gpu/gpu.h"

namespace hybridsim::scenarios {
namespace {

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string link_overrides(const LinkOverrides& l) {
  std::string out;
  for (int k = 0; k < sim::kLinkKindCount; ++k) {
    const auto kind = static_cast<sim::LinkKind>(k);
    const LinkOverride& o = l[kind];
    if (o.empty()) continue;
    out += (out.empty() ? "" : "; ") + std::string(sim::link_kind_key(kind));
    if (o.bandwidth) out += " " + sim::format_bandwidth(*o.bandwidth);
    if (o.latency) out += " " + sim::format_time(*o.latency);
  }
  return out;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> kernel_times_setting(const ResolvedScenario& r) {
  const WorkloadSettings& w = r.scenario.workload;
  const bool other_gpu = w.profile.empty() && r.profile.meta.gpu != workloads::gpu_table().front().model;
  if (!w.gpu_choice.gpu && !w.gpu_choice.precision && !other_gpu) return std::nullopt;
  return std::pair<std::string, std::string>{"GPU, precision", workloads::kernel_times_note(r.profile)};
}

std::vector<std::pair<std::string, std::string>> key_settings(const ResolvedScenario& r) {
  const Scenario& s = r.scenario;
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("scenario", s.name);
  out.emplace_back("source", s.source);
  std::string cluster = r.topology.name() + ", " + std::to_string(r.topology.gpus().size()) + " GPUs";
  if (s.cluster.topology.empty() && s.cluster.nodes > 1)
    cluster += ", " + std::to_string(s.cluster.nodes) + " nodes, " +
               std::string(topology::presets::fabric_name(s.cluster.fabric)) + ", oversubscription " +
               number(s.cluster.oversubscription);
  out.emplace_back("cluster", cluster);
  if (const std::string links = link_overrides(s.cluster.links); !links.empty())
    out.emplace_back("links", links);
  const auto& meta = r.profile.meta;
  out.emplace_back("workload", meta.network + " (" + meta.gpu + ", " + meta.precision + "), batch " +
                                   std::to_string(meta.batch_per_gpu) + " per worker" +
                                   (s.workload.compute_speed != 1.0
                                        ? ", compute speed ×" + number(s.workload.compute_speed)
                                        : std::string()));
  if (auto note = kernel_times_setting(r)) out.push_back(std::move(*note));
  out.emplace_back("parallelism", "dp " + std::to_string(r.mapping.dp) + " × mp " +
                                      std::to_string(r.mapping.mp) + " = " +
                                      std::to_string(r.mapping.gpu_count()) + " GPUs, global batch " +
                                      std::to_string(meta.batch_per_gpu * r.mapping.dp));
  out.emplace_back("placement", r.placement.description);
  out.emplace_back("mapping", r.mapping.description);
  const CommunicationSettings& c = s.communication;
  out.emplace_back(
      "communication",
      std::string(workloads::algorithm_name(c.algorithm)) + "/" +
          workloads::protocol_option_name(c.protocol) + ", channels " +
          (c.channels ? std::to_string(*c.channels) : "auto") + ", messages " +
          sim::format_bytes(c.message_size) + ", buckets " +
          (r.step.recorded_buckets && r.profile.has_recorded_buckets()
               ? std::string("as recorded in the profile")
               : sim::format_bytes(c.bucket_size)) +
          ", reduction " +
          (c.reduction_bandwidth.bytes_per_second() == 0 ? "off"
                                                         : sim::format_bandwidth(c.reduction_bandwidth)) +
          ", " + (c.switching == sim::Switching::StoreAndForward ? "store-and-forward" : "cut-through") +
          (c.pcie_only ? ", PCIe only" : ""));
  if (const workloads::Gpu* gpu = workloads::find_gpu(meta.gpu))
    out.emplace_back("GPU sharing", std::string(gpu->name) + ": " + std::to_string(gpu->sms) + " SMs, " +
                                        sim::format_bandwidth(gpu->memory_bandwidth) + "; contention " +
                                        (c.compute_contention ? "on" : "off") + ", gradient copies " +
                                        (c.gradient_copies ? "on" : "off"));
  else
    out.emplace_back("GPU sharing", "GPU \"" + meta.gpu + "\" unknown: no contention, no gradient copies");
  const workloads::Variability& v = s.variability;
  if (v.steps > 1 || v.varies()) {
    std::string text = std::to_string(v.steps) + (v.steps == 1 ? " step" : " steps") + ", seed " +
                       std::to_string(v.seed) + ", kernel jitter " +
                       (v.kernel_jitter > 0 ? number(v.kernel_jitter) : std::string("off")) +
                       ", sequence lengths " + std::string(workloads::length_distribution_name(v.lengths));
    if (v.lengths != workloads::LengthDistribution::Fixed)
      text +=
          " " + std::string(workloads::batching_name(v.batching)) +
          (v.batching == workloads::Batching::Bucketed ? " (" + std::to_string(v.length_buckets) + " bins)"
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

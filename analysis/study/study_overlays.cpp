// The scenario overlays a study or a plan asks its steps with (the `--set path=value` texts of
// study_steps.h: cluster, workload, limits, parallelism, communication), and the cluster they name.
// A file of their own, moved out of study_steps.cpp, which is about resolving and simulating steps:
// these only write keys, and read nothing but their arguments.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/study/study_steps.h"
#include "sim/budget.h"
#include "sim/error.h"
#include "sim/text.h"
#include "sim/units.h"
#include "topology/builder.h"
#include "workloads/generators/profile_gen.h"

namespace hybridsim::analysis {
namespace {

// The shortest text that reads back as the same double (as study_steps.cpp's cluster fingerprint).
std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

topology::Topology build_cluster(const ClusterSpec& cluster, int gpus, sim::Bandwidth ib_bandwidth) {
  const topology::PresetInfo* preset = topology::find_preset(cluster.preset);
  if (preset == nullptr || !preset->forms_clusters)
    throw InputError(
        "cluster preset \"" + cluster.preset +
        "\": expected a machine preset that can form a cluster: " + topology::cluster_preset_name_list());
  ClusterSpec spec = topology::cluster_for_gpus(cluster, gpus);
  spec.links[sim::LinkKind::InfiniBand].bandwidth = ib_bandwidth;
  return topology::build_cluster(spec);
}

std::vector<std::string> cluster_overlay(const ClusterSpec& cluster, int gpus, sim::Bandwidth ib_bandwidth) {
  const ClusterSpec spec = topology::cluster_for_gpus(cluster, gpus);
  return {"cluster.preset=" + spec.preset, "cluster.nodes=" + std::to_string(spec.nodes),
          "cluster.fabric=" + std::string(topology::presets::fabric_name(spec.fabric)),
          "cluster.oversubscription=" + number(spec.oversubscription),
          "cluster.links.infiniband.bandwidth=" + sim::format_bandwidth(ib_bandwidth)};
}

std::vector<std::string> workload_overlay(const std::string& network, const std::string& profile_file,
                                          const workloads::GpuChoice& choice) {
  const auto builtins = workloads::builtin_profile_names();
  const bool builtin =
      profile_file.empty() && std::find(builtins.begin(), builtins.end(), network) != builtins.end();
  // A profile made in memory has no file: its network's name stands in for one (the profile the
  // step runs is always the context's).
  const std::string& file = profile_file.empty() ? network : profile_file;
  std::string quoted = "\"";  // a path is any text: quoted, so that YAML reads it as written
  for (const char c : file) quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  quoted += '"';
  std::vector<std::string> out{builtin ? "workload.network=" + network : "workload.profile=" + quoted};
  if (choice.gpu) out.push_back("workload.gpu=" + *choice.gpu);
  if (choice.precision)
    out.push_back("workload.precision=" + std::string(workloads::precision_name(*choice.precision)));
  return out;
}

std::vector<std::string> limit_overlay(const std::string& max_events, const std::string& max_sim_memory,
                                       const OptionSpelling& spelling) {
  std::vector<std::string> out;
  if (!max_events.empty()) {
    try {
      sim::parse_events_cap(max_events);
    } catch (const InputError& e) {
      throw InputError(spelling.quoted("max-events", max_events) + ": " + e.what());
    }
    out.push_back("simulation.max_events=" + max_events);
  }
  if (!max_sim_memory.empty()) {
    try {
      sim::parse_memory_cap(max_sim_memory);
    } catch (const InputError& e) {
      throw InputError(spelling.quoted("max-sim-memory", max_sim_memory) + ": " + e.what());
    }
    out.push_back("simulation.max_memory=" + max_sim_memory);
  }
  return out;
}

std::vector<std::string> parallelism_overlay(int dp, int mp, const std::string& placement) {
  return {"parallelism.dp=" + std::to_string(dp), "parallelism.mp=" + std::to_string(mp),
          "parallelism.placement=" + placement};
}

std::vector<std::string> communication_overlay(workloads::AllReduceAlgorithm algorithm,
                                               std::optional<sim::Bytes> bucket_size, sim::Bytes message_size,
                                               sim::FastPath fast_path) {
  std::vector<std::string> out{"communication.algorithm=" +
                               std::string(workloads::algorithm_name(algorithm))};
  if (bucket_size) out.push_back("communication.bucket_size=" + sim::format_bytes(*bucket_size));
  out.push_back("communication.message_size=" + sim::format_bytes(message_size));
  out.push_back("communication.fast_path=" + std::string(sim::fast_path_name(fast_path)));
  return out;
}

}  // namespace hybridsim::analysis

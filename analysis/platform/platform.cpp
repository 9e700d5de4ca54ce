#include "analysis/platform/platform.h"

#include <filesystem>

#include "sim/error.h"
#include "topology/preset_registry.h"
#include "topology/yaml_loader.h"
#include "workloads/gpu/gpu.h"

namespace hybridsim::analysis {

bool names_topology_file(std::string_view argument) {
  return argument.ends_with(".yaml") || argument.ends_with(".yml") ||
         argument.find('/') != std::string_view::npos ||
         std::filesystem::exists(std::filesystem::path(argument));
}

topology::Topology load_platform(const std::string& argument, topology::ClusterSpec spec,
                                 const OptionSpelling& spelling, std::string_view option,
                                 std::vector<std::string>* notes) {
  if (names_topology_file(argument)) {
    topology::ClusterSpec plain;
    plain.preset = spec.preset;
    if (!(spec == plain))
      throw InputError(spelling.name("nodes") + " and " + spelling.name("gpus-per-node") +
                       " apply to presets, not to topology files");
    return topology::load_topology_yaml(argument, notes);
  }
  look_up_named(spelling, option, argument,
                [](const std::string& name) { return topology::preset_by_name(name); });
  spec.preset = argument;
  // The registry's check names the spec's field ("nodes: got 16384 machines"); the user gave an
  // option: "--nodes 16384: got 16384 machines; ...", Python's "nodes=16384: ...".
  if (const auto problem = topology::find_cluster_spec_problem(spec)) {
    std::string said = problem->field;
    if (problem->field == "nodes")
      said = spelling.said_number("nodes", std::to_string(spec.nodes));
    else if (problem->field == "gpus_per_node" && spec.gpus_per_node)
      said = spelling.said_number("gpus-per-node", std::to_string(*spec.gpus_per_node));
    throw InputError(said + ": " + problem->what + "; expected " + problem->expected);
  }
  return topology::build_cluster(spec);
}

sim::Bandwidth platform_reduction_bandwidth(const std::string& argument) {
  const topology::PresetInfo* preset =
      names_topology_file(argument) ? nullptr : topology::find_preset(argument);
  return workloads::reduction_bandwidth(preset ? workloads::find_gpu(preset->gpu) : nullptr);
}

}  // namespace hybridsim::analysis

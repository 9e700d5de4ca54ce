#include "analysis/platform/platform.h"

#include <filesystem>

#include "sim/error.h"
#include "topology/preset_registry.h"
#include "topology/yaml_loader.h"

namespace hybridsim::analysis {

bool names_topology_file(std::string_view argument) {
  return argument.ends_with(".yaml") || argument.ends_with(".yml") ||
         argument.find('/') != std::string_view::npos ||
         std::filesystem::exists(std::filesystem::path(argument));
}

topology::Topology load_platform(const std::string& argument, topology::ClusterSpec spec,
                                 const OptionSpelling& spelling, std::string_view option) {
  if (names_topology_file(argument)) {
    topology::ClusterSpec plain;
    plain.preset = spec.preset;
    if (!(spec == plain))
      throw InputError(spelling.name("nodes") + " and " + spelling.name("gpus-per-node") +
                       " apply to presets, not to topology files");
    return topology::load_topology_yaml(argument);
  }
  look_up_named(spelling, option, argument,
                [](const std::string& name) { return topology::preset_by_name(name); });
  spec.preset = argument;
  return topology::build_cluster(spec);
}

}  // namespace hybridsim::analysis

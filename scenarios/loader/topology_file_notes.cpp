#include "scenarios/loader/topology_file_notes.h"

#include "scenarios/loader/resolve.h"
#include "sim/error.h"
#include "topology/yaml_loader.h"

namespace hybridsim::scenarios {

std::vector<std::string> topology_file_notes(const Scenario& scenario) {
  std::vector<std::string> notes;
  if (scenario.cluster.topology.empty()) return notes;
  try {
    topology::load_topology_yaml(input_path(scenario, scenario.cluster.topology).string(), &notes);
  } catch (const InputError&) {
    return {};  // resolve's build_topology refuses the file, located at cluster.topology
  }
  return notes;
}

}  // namespace hybridsim::scenarios

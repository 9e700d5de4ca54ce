// The notes of a scenario's cluster.topology file: each link machines rarely have, taken as written
// (topology/yaml_loader.h), for `run` to say with the scenario's own notes; none for a preset.
//   for (const std::string& note : topology_file_notes(scenario)) std::cerr << "note: " << note;
#pragma once
#include <string>
#include <vector>

#include "scenarios/loader/scenario.h"

namespace hybridsim::scenarios {

// The file is read again (resolve's build_topology keeps only the topology): a parse of the file,
// small beside the step it runs. None for a file that does not load: resolve refuses it, located.
std::vector<std::string> topology_file_notes(const Scenario& scenario);

}  // namespace hybridsim::scenarios

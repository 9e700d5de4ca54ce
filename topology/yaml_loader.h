// Custom topologies from YAML: `nodes:` lists devices (name, kind, optional machine index `node`),
// `links:` lists cables (a, b, kind, bandwidth per link per direction, latency, count, duplex).
// Every error names file:line:col, the field and what was expected. Format: topology/README.md.
//   Topology t = parse_topology_yaml("nodes: [{name: GPU0, kind: gpu}, {name: GPU1, kind: gpu}]\n"
//                                    "links: [{a: GPU0, b: GPU1, kind: nvlink, bandwidth: 25
//                                    GB/s}]");
#pragma once
#include <string>
#include <string_view>

#include "topology/topology.h"

namespace hybridsim::topology {

// Reads and parses a file; errors start with "path:line:col:".
Topology load_topology_yaml(const std::string& path);
// Parses YAML text; `source` names it in error messages (a file name, or "<string>").
Topology parse_topology_yaml(std::string_view text, std::string_view source = "<string>");

}  // namespace hybridsim::topology

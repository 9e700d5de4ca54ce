// Graphviz export of a Topology: one vertex per device (shaped by kind), one edge per directed link
// labelled with its kind, bandwidth per direction and physical link count.
//   write_dot_file(topo, "dgx1.dot");   // then: dot -Tsvg dgx1.dot > dgx1.svg
#pragma once
#include <ostream>
#include <string>

#include "topology/topology.h"

namespace hybridsim::topology {

void write_dot(const Topology& topology, std::ostream& out);
// Writes to "<path>.tmp" then renames it onto `path`, so readers never see half a file. Throws
// InputError when the file cannot be written.
void write_dot_file(const Topology& topology, const std::string& path);

}  // namespace hybridsim::topology

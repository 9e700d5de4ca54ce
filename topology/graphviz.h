// Graphviz export of a Topology: one vertex per device (shaped by kind), one edge per directed link
// labelled with its kind, bandwidth per direction and physical link count.
//   write_dot(topo, std::cout);   // saved as dgx1.dot, then: dot -Tsvg dgx1.dot > dgx1.svg
// (`hybridsim topology --dot FILE` writes it whole or not at all, analysis/api/hybridsim.cpp.)
#pragma once
#include <ostream>
#include <string>

#include "topology/topology.h"

namespace hybridsim::topology {

void write_dot(const Topology& topology, std::ostream& out);

}  // namespace hybridsim::topology

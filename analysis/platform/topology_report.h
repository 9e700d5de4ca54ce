// What `hybridsim topology` prints about a platform: devices by kind, links by kind and bandwidth,
// each GPU's NVLink / NVSwitch / PCIe / network bandwidth, and on request the route between two
// GPUs and the rings a collective over all GPUs would use.
//   std::cout << topology_report(t, {.route = {{0, 5}}, .rings = true});
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "topology/topology.h"

namespace hybridsim::analysis {

struct TopologyReportOptions {
  std::optional<std::pair<int, int>> route = {};  // global GPU ranks
  bool rings = false;
  bool pcie_only = false;  // with rings: force them onto PCIe
};

std::string topology_report(const topology::Topology& t, const TopologyReportOptions& options = {});

}  // namespace hybridsim::analysis

// `hybridsim topology PRESET-or-FILE`: builds a preset (optionally a cluster of --nodes machines)
// or loads a topology YAML file and prints analysis::topology_report: devices, links, per-GPU
// bandwidth, and on request a route (--route A B, global ranks), the rings (--rings) and a Graphviz
// file (--dot FILE).
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/api/hybridsim.h"
#include "analysis/cli/commands.h"
#include "analysis/cli/parse_options.h"
#include "sim/error.h"
#include "topology/preset_registry.h"

namespace po = boost::program_options;

namespace hybridsim::cli {

int topology_command(int argc, const char* const* argv) {
  po::options_description options("hybridsim topology PRESET-or-FILE [options]");
  options.add_options()("help,h", "show this help")(
      "topology", po::value<std::string>(),
      ("a preset (" + topology::preset_name_list() + ") or a topology YAML file").c_str())(
      "nodes", po::value<int>()->default_value(1), "machines; > 1 builds a cluster of the preset")(
      "gpus-per-node", po::value<int>()->default_value(0),
      "GPUs per machine for presets that allow it (not dgx1-v100); 0 = the preset's")(
      "fabric", po::value<std::string>()->default_value("fat-tree"),
      "cluster fabric: fat-tree or rail-optimized")("oversubscription",
                                                    po::value<double>()->default_value(1.0),
                                                    "leaf downlink / uplink bandwidth")(
      "dot", po::value<std::string>(), "write the graph as Graphviz to this file")(
      "route", po::value<std::vector<int>>()->multitoken(),
      "print the route from GPU A to GPU B (global ranks)")(
      "rings", "print the collective rings over all GPUs (global ranks)")(
      "pcie-only", "with --rings: force the rings onto PCIe");
  po::positional_options_description positional;
  positional.add("topology", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv, options, positional, vm)) return 0;
  if (!vm.count("topology")) {
    std::cout << options << "\n";
    return 2;
  }
  api::TopologyRequest request{.topology = vm["topology"].as<std::string>(),
                               .nodes = vm["nodes"].as<int>(),
                               .gpus_per_node = vm["gpus-per-node"].as<int>()};
  // Only as given, so that the library can refuse one that shapes nothing (api::topology).
  if (given(vm, "fabric")) request.fabric = vm["fabric"].as<std::string>();
  if (given(vm, "oversubscription")) request.oversubscription = vm["oversubscription"].as<double>();
  if (vm.count("route")) {
    const auto ab = vm["route"].as<std::vector<int>>();
    if (ab.size() != 2) throw InputError("--route takes two GPU ranks, e.g. --route 0 5");
    request.route = {ab[0], ab[1]};
  }
  request.rings = vm.count("rings") > 0;
  request.pcie_only = vm.count("pcie-only") > 0;
  if (vm.count("dot")) request.dot = vm["dot"].as<std::string>();
  request.on_note = [](const std::string& note) {
    std::cerr << "hybridsim topology: note: " << note << "\n";
  };
  std::cout << api::topology(request).text;
  return 0;
}

}  // namespace hybridsim::cli

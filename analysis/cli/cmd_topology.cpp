// `hybridsim topology PRESET-or-FILE`: builds a preset (optionally a cluster of --nodes machines)
// or loads a topology YAML file, and prints its devices by kind, its links by kind with bandwidths,
// each GPU's NVLink / NVSwitch / PCIe / network bandwidth, and on request the route between two
// GPUs
// (--route A B, global ranks), the collective rings (--rings) and a Graphviz file (--dot FILE).
#include <boost/program_options.hpp>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/cli/commands.h"
#include "sim/error.h"
#include "topology/graphviz.h"
#include "topology/preset_factory.h"
#include "topology/rings.h"
#include "topology/yaml_loader.h"

namespace po = boost::program_options;

namespace hybridsim::cli {
namespace {

using topology::DeviceId;
using topology::DeviceKind;
using topology::Topology;

bool looks_like_file(const std::string& arg) {
  return arg.ends_with(".yaml") || arg.ends_with(".yml") || arg.find('/') != std::string::npos ||
         std::filesystem::exists(arg);
}

std::string pad(std::string text, std::size_t width) {
  // Pads by display columns: multi-byte UTF-8 characters (→, ×) count once.
  std::size_t columns = 0;
  for (const unsigned char c : text) columns += (c & 0xC0) != 0x80;
  if (columns < width) text.append(width - columns, ' ');
  return text;
}

void print_devices(const Topology& t, std::ostream& out) {
  out << "devices\n";
  for (int k = 0; k < topology::kDeviceKindCount; ++k) {
    const auto kind = static_cast<DeviceKind>(k);
    const auto ids = t.devices_of_kind(kind);
    if (ids.empty()) continue;
    out << "  " << pad(std::string(topology::device_kind_name(kind)), 16) << std::setw(6)
        << ids.size() << "  ";
    for (std::size_t i = 0; i < ids.size() && i < 8; ++i)
      out << (i ? " " : "") << t.device(ids[i]).name;
    out << (ids.size() > 8 ? " …" : "") << "\n";
  }
}

void print_links(const Topology& t, std::ostream& out) {
  out << "links (directed; bandwidth per direction × how many links have it)\n";
  for (int k = 0; k < sim::kLinkKindCount; ++k) {
    const auto kind = static_cast<sim::LinkKind>(k);
    std::map<std::int64_t, int> by_bandwidth;
    std::size_t directed = 0;
    long twice_physical = 0;  // a duplex cable is two directed links: count each half
    for (sim::LinkId l = 0; l < t.links().size(); ++l) {
      if (t.links()[l].kind != kind) continue;
      ++directed;
      const auto& ends = t.link_ends(l);
      twice_physical += ends.count * (t.link_between(ends.to, ends.from) ? 1 : 2);
      ++by_bandwidth[t.links()[l].bandwidth.bytes_per_second()];
    }
    if (directed == 0) continue;
    out << "  " << pad(std::string(sim::link_kind_name(kind)), 12) << std::setw(6) << directed
        << " directed, " << twice_physical / 2 << " physical:";
    for (const auto& [bps, n] : by_bandwidth)
      out << "  " << sim::format_bandwidth(sim::Bandwidth::bytes_per_second(bps)) << " ×" << n;
    out << "\n";
  }
}

// Sum of the bandwidths of a GPU's outgoing links by kind, and its machine's network share.
void print_gpu_bandwidth(const Topology& t, std::ostream& out) {
  const auto gpus = t.gpus();
  if (gpus.empty()) return;
  const auto node = t.device(gpus.front()).node;
  int node_gpus = 0;
  for (const DeviceId g : gpus) node_gpus += t.device(g).node == node;
  // Network: bandwidth out of this machine's NICs into the fabric, shared by its GPUs.
  std::int64_t network = 0;
  for (const DeviceId nic : t.devices_of_kind(DeviceKind::Nic)) {
    if (t.device(nic).node != node) continue;
    for (const sim::LinkId l : t.out_links(nic))
      if (t.device(t.link_ends(l).to).kind == DeviceKind::NetworkSwitch)
        network += t.links()[l].bandwidth.bytes_per_second();
  }
  auto cell = [](std::int64_t bps) {
    return bps == 0 ? std::string("-")
                    : sim::format_bandwidth(sim::Bandwidth::bytes_per_second(bps));
  };
  out << "per-GPU bandwidth out of each GPU, per direction";
  if (t.node_count() > 1) out << " (machine " << node.value_or(0) << " shown)";
  out << "\n  " << pad("GPU", 14) << pad("NVLink", 14) << pad("NVSwitch", 14) << pad("PCIe", 14)
      << "network (share of the machine's NICs)\n";
  int shown = 0;
  for (const DeviceId g : gpus) {
    if (t.device(g).node != node) break;
    if (++shown > 16) {
      out << "  …\n";
      break;
    }
    std::int64_t by_kind[sim::kLinkKindCount] = {};
    for (const sim::LinkId l : t.out_links(g))
      by_kind[static_cast<int>(t.links()[l].kind)] += t.links()[l].bandwidth.bytes_per_second();
    out << "  " << pad(t.device(g).name, 14)
        << pad(cell(by_kind[static_cast<int>(sim::LinkKind::NVLink)] +
                    by_kind[static_cast<int>(sim::LinkKind::Generic)]),
               14)
        << pad(cell(by_kind[static_cast<int>(sim::LinkKind::NVSwitch)]), 14)
        << pad(cell(by_kind[static_cast<int>(sim::LinkKind::PCIe)]), 14)
        << cell(node_gpus ? network / node_gpus : 0) << "\n";
  }
}

void print_route(const Topology& t, int a, int b, std::ostream& out) {
  const DeviceId from = t.gpu(a), to = t.gpu(b);
  const sim::Route route = t.route(from, to);
  sim::Time latency;
  for (const sim::LinkId l : route) latency += t.links()[l].latency;
  out << "route " << t.device(from).name << " → " << t.device(to).name << " (GPU " << a << " → "
      << b << "): " << route.size() << (route.size() == 1 ? " hop" : " hops") << ", bottleneck "
      << sim::format_bandwidth(t.route_bandwidth(route)) << ", latency "
      << sim::format_time(latency) << "\n";
  for (const sim::LinkId l : route)
    out << "  " << pad(t.links()[l].name, 36)
        << pad(sim::format_bandwidth(t.links()[l].bandwidth), 14)
        << sim::format_time(t.links()[l].latency) << "\n";
}

// The rings a collective over all GPUs would use, one line per channel.
void print_rings(const Topology& t, bool pcie_only, std::ostream& out) {
  const auto plan = topology::find_rings(t, t.gpus(), {.pcie_only = pcie_only});
  out << "rings over all " << t.gpus().size() << " GPUs" << (pcie_only ? " (PCIe only)" : "")
      << ": " << plan.saturating_channels << " channels\n";
  for (std::size_t c = 0; c < plan.rings.size(); ++c) {
    sim::Bandwidth slowest = t.route_bandwidth(plan.routes[c].front());
    for (const auto& r : plan.routes[c])
      if (!r.empty()) slowest = std::min(slowest, t.route_bandwidth(r));
    out << "  channel " << std::setw(2) << c << " (slowest step " << sim::format_bandwidth(slowest)
        << "):";
    const auto& ring = plan.rings[c];
    for (std::size_t i = 0; i < ring.size() && i < 32; ++i)
      out << " " << *t.device(ring[i]).gpu_rank;
    out << (ring.size() > 32 ? " …" : "") << "\n";
  }
}

}  // namespace

int topology_command(int argc, const char* const* argv) {
  po::options_description options("hybridsim topology PRESET-or-FILE [options]");
  std::string presets;
  for (const auto name : topology::preset_names())
    presets += (presets.empty() ? "" : ", ") + std::string(name);
  options.add_options()("help,h", "show this help")(
      "topology", po::value<std::string>(),
      ("a preset (" + presets + ") or a topology YAML file").c_str())(
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
  po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help") || !vm.count("topology")) {
    std::cout << options << "\n";
    return vm.count("help") ? 0 : 2;
  }
  const std::string what = vm["topology"].as<std::string>();
  const int nodes = vm["nodes"].as<int>();
  std::optional<Topology> topo;
  if (looks_like_file(what)) {
    if (nodes != 1 || vm["gpus-per-node"].as<int>() != 0)
      throw InputError("--nodes and --gpus-per-node apply to presets, not to topology files");
    topo.emplace(topology::load_topology_yaml(what));
  } else {
    topo.emplace(topology::make_preset(
        what, {.nodes = nodes,
               .gpus = vm["gpus-per-node"].as<int>() != 0 ? std::optional<int>(vm["gpus-per-node"].as<int>())
                                                         : std::nullopt,
               .fabric = topology::presets::parse_fabric(vm["fabric"].as<std::string>()),
               .oversubscription = vm["oversubscription"].as<double>()}));
  }
  const Topology& t = *topo;
  std::ostringstream out;
  out << "topology " << t.name() << ": " << t.gpus().size() << " GPUs on " << t.node_count()
      << (t.node_count() == 1 ? " machine, " : " machines, ") << t.device_count() << " devices, "
      << t.links().size() << " directed links\n\n";
  print_devices(t, out);
  out << "\n";
  print_links(t, out);
  out << "\n";
  print_gpu_bandwidth(t, out);
  if (vm.count("route")) {
    const auto ab = vm["route"].as<std::vector<int>>();
    if (ab.size() != 2) throw InputError("--route takes two GPU ranks, e.g. --route 0 5");
    out << "\n";
    print_route(t, ab[0], ab[1], out);
  }
  if (vm.count("rings")) {
    out << "\n";
    print_rings(t, vm.count("pcie-only") > 0, out);
  }
  if (vm.count("dot")) {
    topology::write_dot_file(t, vm["dot"].as<std::string>());
    out << "\nwrote " << vm["dot"].as<std::string>() << "\n";
  }
  std::cout << out.str();
  return 0;
}

}  // namespace hybridsim::cli

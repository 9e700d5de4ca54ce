#include "analysis/platform/topology_report.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>
#include <string>

#include "analysis/output/text_table.h"
#include "sim/error.h"
#include "topology/rings.h"
#include "workloads/program/strategy_label.h"

namespace hybridsim::analysis {
namespace {

using topology::DeviceId;
using topology::DeviceKind;
using topology::Topology;

void print_devices(const Topology& t, std::ostream& out) {
  out << "devices\n";
  for (int k = 0; k < topology::kDeviceKindCount; ++k) {
    const auto kind = static_cast<DeviceKind>(k);
    const auto ids = t.devices_of_kind(kind);
    if (ids.empty()) continue;
    out << "  " << pad_columns(std::string(topology::device_kind_name(kind)), 16) << std::setw(6)
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
    out << "  " << pad_columns(std::string(sim::link_kind_name(kind)), 12) << std::setw(6) << directed
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
  // Network: what this machine's NICs carry into the fabric, each at the lesser of its port and the
  // PCIe link it sits on, shared by its GPUs: topology::ib_share_per_gpu's rule, read off the graph
  // (a topology file has no preset), so that the report, the planner and the LLM study agree.
  std::int64_t network = 0;
  for (const DeviceId nic : t.devices_of_kind(DeviceKind::Nic)) {
    if (t.device(nic).node != node) continue;
    std::int64_t port = 0, machine_side = 0;
    for (const sim::LinkId l : t.out_links(nic))
      (t.device(t.link_ends(l).to).kind == DeviceKind::NetworkSwitch ? port : machine_side) +=
          t.links()[l].bandwidth.bytes_per_second();
    network += machine_side > 0 ? std::min(port, machine_side) : port;
  }
  auto cell = [](std::int64_t bps) {
    return bps == 0 ? std::string("-")
                    : sim::format_bandwidth(sim::Bandwidth::bytes_per_second(bps));
  };
  // Generic links (ideal-ring, fully-connected, a topology file's `generic`) get a column of their own
  // where a GPU has one: they were summed under NVLink, which they are not.
  bool generic = false;
  for (const DeviceId g : gpus) {
    if (t.device(g).node != node) break;  // the rows are the shown machine's GPUs
    for (const sim::LinkId l : t.out_links(g))
      generic = generic || t.links()[l].kind == sim::LinkKind::Generic;
  }
  out << "per-GPU bandwidth out of each GPU, per direction";
  if (t.node_count() > 1) out << " (machine " << node.value_or(0) << " shown)";
  out << "\n  " << pad_columns("GPU", 14) << pad_columns("NVLink", 14) << pad_columns("NVSwitch", 14)
      << pad_columns("PCIe", 14) << (generic ? pad_columns("Generic", 14) : std::string())
      << "network (share of the machine's NICs, each capped by its PCIe link)\n";
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
    out << "  " << pad_columns(t.device(g).name, 14)
        << pad_columns(cell(by_kind[static_cast<int>(sim::LinkKind::NVLink)]), 14)
        << pad_columns(cell(by_kind[static_cast<int>(sim::LinkKind::NVSwitch)]), 14)
        << pad_columns(cell(by_kind[static_cast<int>(sim::LinkKind::PCIe)]), 14)
        << (generic ? pad_columns(cell(by_kind[static_cast<int>(sim::LinkKind::Generic)]), 14)
                    : std::string())
        << cell(node_gpus ? network / node_gpus : 0) << "\n";
  }
}

void print_route(const Topology& t, int a, int b, std::ostream& out) {
  const DeviceId from = t.gpu(a), to = t.gpu(b);
  // A GPU reaches itself without a link: "0 hops, bottleneck 0 B/s" would read as a broken route.
  if (a == b)
    throw InputError("--route " + std::to_string(a) + " " + std::to_string(b) +
                     ": both ends are the same GPU, which a route never leaves; expected two different "
                     "GPU ranks from 0 to " + std::to_string(t.gpus().size() - 1));
  const sim::Route route = t.route(from, to);
  sim::Time latency;
  for (const sim::LinkId l : route) latency += t.links()[l].latency;
  out << "route " << t.device(from).name << " → " << t.device(to).name << " (GPU " << a << " → "
      << b << "): " << route.size() << (route.size() == 1 ? " hop" : " hops") << ", bottleneck "
      << sim::format_bandwidth(t.route_bandwidth(route)) << ", latency "
      << sim::format_time(latency) << "\n";
  for (const sim::LinkId l : route)
    out << "  " << pad_columns(t.links()[l].name, 36)
        << pad_columns(sim::format_bandwidth(t.links()[l].bandwidth), 14)
        << sim::format_time(t.links()[l].latency) << "\n";
}

// The rings a collective over all GPUs would use, one line per channel.
void print_rings(const Topology& t, bool pcie_only, std::ostream& out) {
  const auto plan = topology::find_rings(t, t.gpus(), {.pcie_only = pcie_only});
  out << "rings over all " << workloads::gpus_text(static_cast<std::int64_t>(t.gpus().size()))
      << (pcie_only ? " (PCIe only)" : "") << ": " << plan.saturating_channels
      << (plan.saturating_channels == 1 ? " channel\n" : " channels\n");
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

std::string topology_report(const Topology& t, const TopologyReportOptions& options) {
  std::ostringstream out;
  out << "topology " << t.name() << ": " << workloads::gpus_text(static_cast<std::int64_t>(t.gpus().size()))
      << " on " << t.node_count() << (t.node_count() == 1 ? " machine, " : " machines, ") << t.device_count()
      << (t.device_count() == 1 ? " device, " : " devices, ") << t.links().size() << " directed links\n\n";
  print_devices(t, out);
  out << "\n";
  print_links(t, out);
  out << "\n";
  print_gpu_bandwidth(t, out);
  if (options.route) {
    out << "\n";
    print_route(t, options.route->first, options.route->second, out);
  }
  if (options.rings) {
    out << "\n";
    print_rings(t, options.pcie_only, out);
  }
  return out.str();
}

}  // namespace hybridsim::analysis

#include "topology/graphviz.h"

#include <boost/graph/graphviz.hpp>
#include <cstdio>
#include <string>

#include "topology/topology_impl.h"

namespace hybridsim::topology {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string_view shape(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Gpu: return "box";
    case DeviceKind::Cpu: return "octagon";
    case DeviceKind::PcieSwitch: return "diamond";
    case DeviceKind::NvSwitch: return "doubleoctagon";
    case DeviceKind::Nic: return "ellipse";
    case DeviceKind::NetworkSwitch: return "hexagon";
  }
  return "box";
}

struct VertexWriter {
  const Topology* topology;
  void operator()(std::ostream& out, detail::Vertex v) const {
    const DeviceInfo& d = topology->device(DeviceId{static_cast<std::uint32_t>(v)});
    out << "[label=" << quoted(d.name) << ", shape=" << shape(d.kind) << "]";
  }
};

struct EdgeWriter {
  const Topology* topology;
  void operator()(std::ostream& out, detail::Edge e) const {
    const sim::LinkId id = topology->impl().graph[e].link;
    const sim::LinkSpec& spec = topology->links()[id];
    std::string label =
        std::string(sim::link_kind_name(spec.kind)) + " " + sim::format_bandwidth(spec.bandwidth);
    const int count = topology->link_ends(id).count;
    if (count > 1) label += " (" + std::to_string(count) + " links)";
    out << "[label=" << quoted(label) << "]";
  }
};

struct GraphWriter {
  const Topology* topology;
  void operator()(std::ostream& out) const {
    out << "label=" << quoted(topology->name()) << ";\nrankdir=LR;\n";
  }
};

}  // namespace

void write_dot(const Topology& topology, std::ostream& out) {
  boost::write_graphviz(out, topology.impl().graph, VertexWriter{&topology}, EdgeWriter{&topology},
                        GraphWriter{&topology});
}

}  // namespace hybridsim::topology

// The topology file reader: the located tree checked against topology_schema(), then the devices
// and links handed to TopologyBuilder, whose own errors are located at the device or link.
#include "topology/yaml_loader.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/error.h"
#include "sim/yaml/field_reader.h"
#include "sim/yaml/input_file.h"
#include "sim/yaml/tree.h"
#include "topology/builder.h"

namespace hybridsim::topology {
namespace {

using yaml::fail_at;
using yaml::FieldReader;
using yaml::TreeNode;

// The names parse_device_kind and sim::find_link_kind accept, for "did you mean".
const std::vector<std::string> kDeviceKinds = {"gpu", "cpu", "pcie-switch", "plx", "nvswitch",
                                               "nic", "switch", "network-switch"};
const std::vector<std::string> kLinkKinds = {"nvlink", "nvswitch", "pcie", "cpu", "qpi", "upi",
                                             "infiniband", "ib", "ethernet", "generic"};

DeviceKind read_device_kind(const FieldReader& r, const TreeNode& node, const std::string& path) {
  const std::string text = r.to_text(node, path);
  try {
    return parse_device_kind(text);
  } catch (const InputError&) {
    r.fail_unknown(node, path, kDeviceKinds);
  }
}

// What the connectivity check needs of each device, in the order of nodes[].
struct DeclaredDevice {
  std::string name;
  bool gpu = false;
  std::string where;
  std::optional<int> machine;  // none: a network switch without a node (it joins machines)
};

// Reads nodes[]; `declared` maps each device name to where it was written.
void read_devices(FieldReader& r, const TreeNode& nodes, TopologyBuilder& builder,
                  std::unordered_map<std::string, std::string>& declared,
                  std::vector<DeclaredDevice>& order) {
  for (std::size_t i = 0; i < nodes.items.size(); ++i) {
    const TreeNode& d = nodes.items[i];
    const std::string path = "nodes[" + std::to_string(i) + "]";
    r.check_section(d, path);
    const TreeNode& name_node = *d.find("name");
    const std::string name = r.to_text(name_node, path + ".name");
    if (const auto it = declared.find(name); it != declared.end())
      fail_at(name_node.where, path + ".name", "duplicate device name \"" + name + "\" (first declared at " +
              it->second + ")", "a unique device name");
    DeviceSpec spec;
    spec.name = name;
    spec.kind = read_device_kind(r, *d.find("kind"), path + ".kind");
    if (const auto node = r.integer_opt(&d, path + ".node")) spec.node = static_cast<int>(*node);
    const bool gpu = spec.kind == DeviceKind::Gpu;
    const std::optional<int> machine =  // a network switch of no node joins machines: it is on none
        spec.kind == DeviceKind::NetworkSwitch && !spec.node ? std::nullopt
                                                             : std::optional(spec.node.value_or(0));
    try {
      builder.add_device(std::move(spec));
    } catch (const InputError& e) {
      fail_at(d.where, path, e.what());
    }
    declared.emplace(name, name_node.where);
    order.push_back({name, gpu, d.where, machine});
  }
}

// A link a machine rarely has, taken as written (users model odd machines; a slip of a kind or a node
// would otherwise run silently): InfiniBand between two GPUs of one machine, whose GPUs meet over
// NVLink, NVSwitch or PCIe and leave it through NICs; NVLink (or an NVSwitch port) between machines,
// which an NVLink domain across machines (GB200 NVL72) has and a cluster of DGX machines does not.
std::optional<std::string> odd_link_note(const DeclaredDevice& a, const DeclaredDevice& b,
                                         sim::LinkKind kind) {
  const std::string kind_name(sim::link_kind_key(kind));  // as the file writes it
  if (kind == sim::LinkKind::InfiniBand && a.gpu && b.gpu && a.machine == b.machine)
    return "a link of kind " + kind_name + " between GPUs \"" + a.name + "\" and \"" + b.name +
           "\" of one machine (node " + std::to_string(a.machine.value_or(0)) +
           "), taken as written; a machine's GPUs usually meet over nvlink, nvswitch or pcie, and InfiniBand "
           "joins machines through their NICs";
  if ((kind == sim::LinkKind::NVLink || kind == sim::LinkKind::NVSwitch) && a.machine && b.machine &&
      *a.machine != *b.machine)
    return "a link of kind " + kind_name + " between \"" + a.name + "\" (node " + std::to_string(*a.machine) +
           ") and \"" + b.name + "\" (node " + std::to_string(*b.machine) +
           "), two machines, taken as written (an NVLink domain across machines); machines are usually "
           "joined by infiniband through their NICs";
  return std::nullopt;
}

// Reads links[]; `ends_out` gets each direction a link carries as (from, to) device indices: a to b,
// and b to a unless the link is duplex: false. A link machines rarely have is a line of `notes`.
void read_links(FieldReader& r, const TreeNode& links, const std::vector<DeclaredDevice>& devices,
                TopologyBuilder& builder, std::vector<std::pair<std::uint32_t, std::uint32_t>>& ends_out,
                std::vector<std::string>& notes) {
  for (std::size_t i = 0; i < links.items.size(); ++i) {
    const TreeNode& l = links.items[i];
    const std::string path = "links[" + std::to_string(i) + "]";
    r.check_section(l, path);
    DeviceId ends[2];
    for (int e = 0; e < 2; ++e) {
      const std::string end = path + (e == 0 ? ".a" : ".b");
      const TreeNode& node = *l.find(e == 0 ? "a" : "b");
      const std::string name = r.to_text(node, end);
      const auto id = builder.find_device(name);
      if (!id) fail_at(node.where, end, "unknown device \"" + name + "\": declare it under nodes: first");
      ends[e] = *id;
    }
    LinkParams p;
    const TreeNode& kind = *l.find("kind");
    const auto link_kind = sim::find_link_kind(r.to_text(kind, path + ".kind"));
    if (!link_kind) r.fail_unknown(kind, path + ".kind", kLinkKinds);
    p.kind = *link_kind;
    if (const auto note = odd_link_note(devices[ends[0].value], devices[ends[1].value], p.kind))
      notes.push_back(l.where + ": " + path + ": " + *note);
    p.bandwidth = r.rate(&l, path + ".bandwidth");
    p.latency = r.duration(&l, path + ".latency");
    p.count = static_cast<int>(r.integer(&l, path + ".count"));
    p.duplex = r.boolean(&l, path + ".duplex");
    if (const auto label = r.text_opt(&l, path + ".label")) p.label = *label;
    ends_out.emplace_back(ends[0].value, ends[1].value);
    if (p.duplex) ends_out.emplace_back(ends[1].value, ends[0].value);
    try {
      builder.connect(ends[0], ends[1], p);
    } catch (const InputError& e) {
      fail_at(l.where, path, e.what());  // a self-loop or a link declared twice
    }
  }
}

// Every GPU must be joined to the first one by some chain of links; a GPU that is not is named
// where it is declared, before any run asks for a route to it (it would otherwise fail mid-run, far
// from its cause). Chains through other GPUs count here: a ring of GPUs with direct links only is a
// legitimate machine (ideal-ring is one); whether a route may relay through a GPU is the router's
// rule, checked when the route is asked for.
void check_gpus_connected(const std::vector<DeclaredDevice>& devices,
                          const std::vector<std::pair<std::uint32_t, std::uint32_t>>& links) {
  std::vector<std::uint32_t> parent(devices.size());
  for (std::uint32_t i = 0; i < parent.size(); ++i) parent[i] = i;
  auto root = [&](std::uint32_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (const auto& [a, b] : links) parent[root(a)] = root(b);
  std::uint32_t first = 0;
  while (first < devices.size() && !devices[first].gpu) ++first;
  for (std::uint32_t g = first + 1; g < devices.size(); ++g)
    if (devices[g].gpu && root(g) != root(first))
      fail_at(devices[g].where, "nodes[" + std::to_string(g) + "]",
              "GPU \"" + devices[g].name + "\" is not connected to GPU \"" + devices[first].name +
                  "\" by any chain of links",
              "every GPU connected to the others");
}

// Joined is not enough where a link is duplex: false: GPU0 -> GPU1 one way only loaded, and every
// run then stopped at its first route, "no route from GPU1 to GPU0 ...", naming neither the file nor
// a line. Every GPU must reach the first one and be reached from it along the links' directions
// (through any device: whether a route may relay through a GPU is the router's rule).
void check_gpus_reach_each_other(const std::vector<DeclaredDevice>& devices,
                                 const std::vector<std::pair<std::uint32_t, std::uint32_t>>& directed) {
  std::uint32_t first = 0;
  while (first < devices.size() && !devices[first].gpu) ++first;
  if (first == devices.size()) return;
  const auto reached = [&](bool forward) {
    std::vector<std::vector<std::uint32_t>> next(devices.size());
    for (const auto& [from, to] : directed) next[forward ? from : to].push_back(forward ? to : from);
    std::vector<bool> seen(devices.size(), false);
    std::vector<std::uint32_t> todo{first};
    seen[first] = true;
    while (!todo.empty()) {
      const std::uint32_t v = todo.back();
      todo.pop_back();
      for (const std::uint32_t w : next[v]) {
        if (seen[w]) continue;
        seen[w] = true;
        todo.push_back(w);
      }
    }
    return seen;
  };
  const std::vector<bool> from_first = reached(true), to_first = reached(false);
  for (std::uint32_t g = first + 1; g < devices.size(); ++g) {
    if (!devices[g].gpu || (from_first[g] && to_first[g])) continue;
    const std::string a = "GPU \"" + devices[g].name + "\"", b = "GPU \"" + devices[first].name + "\"";
    fail_at(devices[g].where, "nodes[" + std::to_string(g) + "]",
            (to_first[g] ? b + " cannot send to " + a : a + " cannot send to " + b) +
                " along the links' directions (a duplex: false link carries a to b only)",
            "every GPU able to send to every other");
  }
}

// A file of no GPU loaded ("0 GPUs on 0 machines", exit 0), and each command on it failed far from
// it: collective's GPUs read as the list "0--1", run's dp 1 as "expected dp × mp <= 0". Machines
// numbered with a gap (nodes 0 and 2) were counted as 3, one of them holding nothing.
void check_gpus_and_machines(const std::vector<DeclaredDevice>& devices, const TreeNode& nodes) {
  if (std::none_of(devices.begin(), devices.end(), [](const DeclaredDevice& d) { return d.gpu; }))
    fail_at(nodes.where, "nodes",
            "no GPU among " + std::string(devices.empty() ? "them (the list is empty)"
                                          : devices.size() == 1
                                              ? "its 1 device"
                                              : "its " + std::to_string(devices.size()) + " devices"),
            "at least one device of kind gpu");
  std::set<int> machines;
  for (const DeclaredDevice& d : devices)
    if (d.machine) machines.insert(*d.machine);
  int next = 0;
  for (const int m : machines) {
    if (m != next) {
      const auto first = std::find_if(devices.begin(), devices.end(),
                                      [&](const DeclaredDevice& d) { return d.machine == m; });
      const auto at = static_cast<std::size_t>(first - devices.begin());
      fail_at(first->where, "nodes[" + std::to_string(at) + "].node",
              "machine " + std::to_string(m) + ", but no device is on machine " + std::to_string(next),
              "machines numbered from 0 without a gap (a machine of no device is counted, empty)");
    }
    ++next;
  }
}

}  // namespace

namespace {
// A scenario given where a topology file is expected (`hybridsim topology SCENARIO.yaml`): said so at
// its `cluster` key, not "cluster: unknown field; expected one of: name, nodes, links".
void refuse_scenario_file(const TreeNode& tree) {
  if (!tree.is_map() || tree.find("nodes") != nullptr) return;
  for (const auto& e : tree.entries)
    if (e.key == "cluster")
      fail_at(
          e.key_where, "cluster",
          "a scenario's section: this is a scenario file, not a topology file (name, nodes, links)",
          "a topology file; for a scenario's cluster, its cluster.preset's name with --nodes in its place");
}
}  // namespace

Topology parse_topology_yaml(std::string_view text, std::string_view source,
                             std::vector<std::string>* notes) {
  const TreeNode tree = yaml::parse_yaml_tree(text, std::string(source));
  refuse_scenario_file(tree);
  FieldReader r(topology_schema(), nullptr, std::string(source));
  const TreeNode& root = r.document(tree);
  const TreeNode* nodes = root.find("nodes");  // required: present after the check
  TopologyBuilder builder(r.text(&root, "name"));
  std::unordered_map<std::string, std::string> declared;
  std::vector<DeclaredDevice> devices;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> link_ends;
  read_devices(r, r.to_list(*nodes, "nodes", 0), builder, declared, devices);
  check_gpus_and_machines(devices, *nodes);
  std::vector<std::string> odd_links;
  read_links(r, r.to_list(*r.value(&root, "links"), "links", 0), devices, builder, link_ends, odd_links);
  check_gpus_connected(devices, link_ends);
  check_gpus_reach_each_other(devices, link_ends);
  if (notes != nullptr) notes->insert(notes->end(), odd_links.begin(), odd_links.end());
  try {
    return std::move(builder).build();
  } catch (const InputError& e) {
    fail_at(nodes->where, "nodes", e.what());
  }
}

Topology load_topology_yaml(const std::string& path, std::vector<std::string>* notes) {
  return parse_topology_yaml(yaml::read_input_file(path, "topology file"), path, notes);
}

}  // namespace hybridsim::topology

#include "topology/yaml_loader.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "sim/error.h"
#include "topology/builder.h"
#include "topology/yaml_keys.h"

namespace hybridsim::topology {
namespace {

using Key = YamlKey;
constexpr Key kTopKeys[] = {
    {"name", false, "a topology name"},
    {"nodes", true, "a list of devices: {name, kind, node}"},
    {"links", false, "a list of links: {a, b, kind, bandwidth, latency, count, duplex}"},
};
constexpr Key kDeviceKeys[] = {
    {"name", true, "a unique device name, e.g. GPU0"},
    {"kind", true, "one of gpu, cpu, pcie-switch, nvswitch, nic, switch"},
    {"node", false, "the machine index, an integer >= 0"},
};
constexpr Key kLinkKeys[] = {
    {"a", true, "the name of a device declared under nodes:"},
    {"b", true, "the name of a device declared under nodes:"},
    {"kind", true,
     "one of nvlink, nvswitch, pcie, cpu (qpi, upi), infiniband (ib), ethernet, generic"},
    {"bandwidth", true, "a positive bandwidth per link per direction, e.g. \"25 GB/s\""},
    {"latency", false, "a time, e.g. \"700 ns\" (default 0 ns)"},
    {"count", false, "the number of physical links, an integer >= 1 (default 1)"},
    {"duplex", false, "true (both directions, the default) or false (a to b only)"},
    {"label", false, "a link-name prefix, e.g. QPI (default: from the kind)"},
};

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  std::string where(const YAML::Node& n) const { return yaml_where(source_, n); }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& field,
                         const std::string& message) const {
    throw InputError(where(at) + ": " + field + ": " + message);
  }

  // Checks that `map` is a map with only known keys and all required ones.
  template <std::size_t N>
  void check_keys(const YAML::Node& map, const std::string& field, const Key (&keys)[N]) const {
    if (!map.IsMap()) fail(map, field, "expected a map with keys " + yaml_key_names(keys));
    for (const auto& entry : map) {
      const std::string key = entry.first.as<std::string>();
      if (!find_yaml_key(keys, key))
        fail(entry.first, field, "unknown key \"" + key + "\"; expected one of " + yaml_key_names(keys));
    }
    for (const auto& k : keys)
      if (k.required && !map[std::string(k.name)])
        fail(map, field,
             "missing required key \"" + std::string(k.name) + "\" (" + std::string(k.expects) +
                 ")");
  }

  std::string scalar(const YAML::Node& n, const std::string& field,
                     std::string_view expects) const {
    if (!n.IsScalar()) fail(n, field, "expected " + std::string(expects));
    return n.Scalar();
  }
  template <class T>
  T as(const YAML::Node& n, const std::string& field, std::string_view expects) const {
    try {
      if (!n.IsScalar()) throw YAML::Exception(n.Mark(), "");
      return n.as<T>();
    } catch (const YAML::Exception&) {
      fail(n, field,
           "expected " + std::string(expects) + ", got \"" +
               (n.IsScalar() ? n.Scalar() : std::string("a list or map")) + "\"");
    }
  }

 private:
  std::string source_;
};

const Key& key(std::string_view name, std::span<const Key> keys) {
  if (const Key* k = find_yaml_key(keys, name)) return *k;
  throw InternalError("undeclared YAML key");
}

Topology parse(const YAML::Node& root, const Reader& r) {
  r.check_keys(root, "topology", kTopKeys);
  TopologyBuilder builder(root["name"] ? r.scalar(root["name"], "name", "a topology name")
                                       : std::string("custom"));
  const YAML::Node nodes = root["nodes"];
  if (!nodes.IsSequence()) r.fail(nodes, "nodes", std::string(key("nodes", kTopKeys).expects));
  std::unordered_map<std::string, YAML::Node> declared;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node d = nodes[i];
    const std::string field = "nodes[" + std::to_string(i) + "]";
    r.check_keys(d, field, kDeviceKeys);
    const std::string name = r.scalar(d["name"], field + ".name", key("name", kDeviceKeys).expects);
    if (const auto it = declared.find(name); it != declared.end())
      r.fail(
          d["name"], field + ".name",
          "duplicate device name \"" + name + "\" (first declared at " + r.where(it->second) + ")");
    DeviceSpec spec{name, DeviceKind::Gpu, std::nullopt, std::nullopt};
    try {
      spec.kind = parse_device_kind(r.scalar(d["kind"], field + ".kind", kDeviceKeys[1].expects));
    } catch (const InputError& e) {
      r.fail(d["kind"], field + ".kind", e.what());
    }
    if (d["node"]) {
      spec.node = r.as<int>(d["node"], field + ".node", kDeviceKeys[2].expects);
      if (*spec.node < 0)
        r.fail(d["node"], field + ".node",
               "expected " + std::string(kDeviceKeys[2].expects) + ", got " +
                   std::to_string(*spec.node));
    }
    builder.add_device(std::move(spec));
    declared.emplace(name, d["name"]);
  }
  const YAML::Node links = root["links"];
  if (links && !links.IsSequence() && !links.IsNull())
    r.fail(links, "links", std::string(key("links", kTopKeys).expects));
  for (std::size_t i = 0; links && links.IsSequence() && i < links.size(); ++i) {
    const YAML::Node l = links[i];
    const std::string field = "links[" + std::to_string(i) + "]";
    r.check_keys(l, field, kLinkKeys);
    DeviceId ends[2];
    for (int e = 0; e < 2; ++e) {
      const char* end = e == 0 ? "a" : "b";
      const std::string name = r.scalar(l[end], field + "." + end, kLinkKeys[e].expects);
      const auto id = builder.find_device(name);
      if (!id)
        r.fail(l[end], field + "." + end,
               "unknown device \"" + name + "\": declare it under nodes: first");
      ends[e] = *id;
    }
    LinkParams p;
    try {
      p.kind = sim::parse_link_kind(r.scalar(l["kind"], field + ".kind", kLinkKeys[2].expects));
    } catch (const InputError& e) {
      r.fail(l["kind"], field + ".kind", e.what());
    }
    try {
      p.bandwidth = sim::parse_bandwidth(
          r.scalar(l["bandwidth"], field + ".bandwidth", kLinkKeys[3].expects));
    } catch (const InputError& e) {
      r.fail(l["bandwidth"], field + ".bandwidth", e.what());
    }
    if (p.bandwidth.bytes_per_second() <= 0)
      r.fail(l["bandwidth"], field + ".bandwidth",
             "must be positive, got \"" + l["bandwidth"].Scalar() + "\"");
    if (l["latency"]) {
      try {
        p.latency =
            sim::parse_time(r.scalar(l["latency"], field + ".latency", kLinkKeys[4].expects));
      } catch (const InputError& e) {
        r.fail(l["latency"], field + ".latency", e.what());
      }
      if (p.latency < sim::Time::zero()) r.fail(l["latency"], field + ".latency", "must be >= 0");
    }
    if (l["count"]) {
      p.count = r.as<int>(l["count"], field + ".count", kLinkKeys[5].expects);
      if (p.count < 1)
        r.fail(
            l["count"], field + ".count",
            "expected " + std::string(kLinkKeys[5].expects) + ", got " + std::to_string(p.count));
    }
    if (l["duplex"]) p.duplex = r.as<bool>(l["duplex"], field + ".duplex", kLinkKeys[6].expects);
    if (l["label"]) p.label = r.scalar(l["label"], field + ".label", kLinkKeys[7].expects);
    try {
      builder.connect(ends[0], ends[1], p);
    } catch (const InputError& e) {
      r.fail(l, field, e.what());  // a self-loop or a link declared twice
    }
  }
  try {
    return std::move(builder).build();
  } catch (const InputError& e) {
    r.fail(nodes, "nodes", e.what());
  }
}

}  // namespace

Topology parse_topology_yaml(std::string_view text, std::string_view source) {
  const Reader reader(source);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw InputError(std::string(source) + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": invalid YAML: " + e.msg);
  }
  if (!root || root.IsNull())
    throw InputError(std::string(source) + ": empty topology file: expected nodes: and links:");
  return parse(root, reader);
}

Topology load_topology_yaml(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot open topology file \"" + path + "\"");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_topology_yaml(text.str(), path);
}

}  // namespace hybridsim::topology

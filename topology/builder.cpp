#include "topology/builder.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "sim/error.h"
#include "topology/topology_impl.h"

namespace hybridsim::topology {

DeviceId TopologyBuilder::add_device(DeviceSpec spec) {
  if (spec.name.empty()) throw InputError("a device needs a non-empty name");
  if (by_name_.count(spec.name))
    throw InputError("duplicate device name \"" + spec.name + "\": device names must be unique");
  if (spec.node && *spec.node < 0)
    throw InputError("device \"" + spec.name + "\": node index must be >= 0, got " +
                     std::to_string(*spec.node));
  if (spec.local_gpu && spec.kind != DeviceKind::Gpu)
    throw InputError("device \"" + spec.name + "\": only GPUs have a local GPU index");
  if (spec.local_gpu && *spec.local_gpu < 0)
    throw InputError("device \"" + spec.name + "\": local GPU index must be >= 0");
  if (!spec.node && spec.kind != DeviceKind::NetworkSwitch) spec.node = 0;
  const DeviceId id{static_cast<std::uint32_t>(devices_.size())};
  by_name_.emplace(spec.name, id);
  devices_.push_back(std::move(spec));
  return id;
}

std::optional<DeviceId> TopologyBuilder::find_device(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

void TopologyBuilder::connect(DeviceId from, DeviceId to, const LinkParams& params) {
  if (from.value >= devices_.size() || to.value >= devices_.size())
    throw InputError("connect: unknown device id");
  const std::string where = "link " + devices_[from.value].name + " – " + devices_[to.value].name;
  if (from == to) throw InputError(where + ": a device cannot be linked to itself");
  if (params.bandwidth.bytes_per_second() <= 0)
    throw InputError(where + ": bandwidth must be positive, got " +
                     std::to_string(params.bandwidth.bytes_per_second()) + " B/s");
  if (params.count < 1)
    throw InputError(where + ": count must be >= 1, got " + std::to_string(params.count));
  if (params.latency < sim::Time::zero()) throw InputError(where + ": latency must be >= 0");
  if (params.bandwidth.bytes_per_second() > std::numeric_limits<std::int64_t>::max() / params.count)
    throw InputError(where + ": bandwidth × count (" + sim::format_bandwidth(params.bandwidth) + " × " +
                     std::to_string(params.count) + ") does not fit in 64-bit bytes per second");
  add_one_way(from, to, params);
  if (params.duplex) add_one_way(to, from, params);
}

void TopologyBuilder::add_one_way(DeviceId from, DeviceId to, const LinkParams& params) {
  const std::uint64_t key = (std::uint64_t{from.value} << 32) | to.value;
  const std::string label(params.label.empty() ? sim::link_kind_label(params.kind) : params.label);
  const std::string name = label + " " + devices_[from.value].name + "→" + devices_[to.value].name;
  if (link_index_.count(key))
    throw InputError(name + " is declared twice: give one link a count instead");
  link_index_.emplace(key, static_cast<sim::LinkId>(links_.size()));
  links_.push_back({from,
                    to,
                    {params.kind, params.bandwidth * params.count, params.latency, name},
                    params.count});
}

namespace {

// Per device, for each NIC: the index by which fabric switches spread routes to it (D-mod-k,
// routing.cpp). On a fat tree, the NIC's global index (machine × NICs + its index). On a rail (a
// leaf whose NICs all have one index in their machines), the machine: the leaf's ports hold one NIC
// a machine, and a subnet manager spreads a leaf's destinations over the uplinks by port, so a ring
// whose edges cross from one rail to the next puts each on a link of its own.
std::vector<std::int64_t> forward_indices(const Topology::Impl& impl) {
  std::vector<std::int64_t> index(impl.devices.size(), -1);
  std::vector<int> local(impl.devices.size(), -1);  // a NIC's index in its machine
  std::vector<std::int64_t> leaf_of(impl.devices.size(), -1);
  std::unordered_map<std::int64_t, int> leaf_local;  // leaf → its NICs' one local index, -2: mixed
  std::unordered_map<std::int64_t, int> leaf_nics;
  for (std::size_t n = 0; n < impl.nics_by_node.size(); ++n)
    for (std::size_t k = 0; k < impl.nics_by_node[n].size(); ++k) {
      const std::uint32_t v = impl.nics_by_node[n][k].value;
      index[v] = static_cast<std::int64_t>(n * impl.nics_by_node[n].size() + k);
      local[v] = static_cast<int>(k);
      for (std::uint32_t o = impl.out_offsets[v]; o < impl.out_offsets[v + 1]; ++o) {
        const DeviceId to = impl.ends[impl.out_flat[o]].to;
        if (impl.devices[to.value].kind != DeviceKind::NetworkSwitch) continue;
        leaf_of[v] = to.value;
        const auto [it, fresh] = leaf_local.try_emplace(to.value, static_cast<int>(k));
        if (!fresh && it->second != static_cast<int>(k)) it->second = -2;
        ++leaf_nics[to.value];
        break;
      }
    }
  for (std::size_t n = 0; n < impl.nics_by_node.size(); ++n)
    for (const DeviceId nic : impl.nics_by_node[n]) {
      const std::int64_t leaf = leaf_of[nic.value];
      if (leaf >= 0 && leaf_local.at(leaf) >= 0 && leaf_nics.at(leaf) > 1)
        index[nic.value] = static_cast<std::int64_t>(n);
    }
  return index;
}

}  // namespace

Topology TopologyBuilder::build() && {
  auto impl = std::make_unique<Topology::Impl>();
  impl->name = name_;
  // GPU local indices: given ones are kept, the others take the next free index of their node.
  std::map<int, std::vector<int>> used;  // node → local indices taken (explicit ones first)
  for (const auto& d : devices_)
    if (d.kind == DeviceKind::Gpu && d.local_gpu) used[*d.node].push_back(*d.local_gpu);
  std::map<std::pair<int, int>, std::string> seen;
  for (auto& d : devices_) {
    if (d.kind != DeviceKind::Gpu) continue;
    if (!d.local_gpu) {
      auto& taken = used[*d.node];
      int next = 0;
      while (std::find(taken.begin(), taken.end(), next) != taken.end()) ++next;
      d.local_gpu = next;
      taken.push_back(next);
    }
    const auto [it, fresh] = seen.emplace(std::pair{*d.node, *d.local_gpu}, d.name);
    if (!fresh)
      throw InputError("GPUs \"" + it->second + "\" and \"" + d.name + "\" both have node " +
                       std::to_string(*d.node) + ", local index " + std::to_string(*d.local_gpu));
  }
  for (std::uint32_t i = 0; i < devices_.size(); ++i) {
    sim::work_tick(progress_, "sealing its devices", i, devices_.size(), "devices");
    const auto& d = devices_[i];
    DeviceInfo info{d.name, d.kind, d.node, d.local_gpu, std::nullopt};
    impl->devices.push_back(std::move(info));
    impl->by_name.emplace(d.name, DeviceId{i});
    if (d.node) impl->node_count = std::max(impl->node_count, *d.node + 1);
    const auto v = boost::add_vertex(impl->graph);
    impl->graph[v] = {d.kind, d.node.value_or(-1)};
  }
  // Global GPU ranks: node-major, then local index (the map above is already in that order).
  for (const auto& [node_local, name] : seen) {
    const DeviceId id = impl->by_name.at(name);
    impl->devices[id.value].gpu_rank = static_cast<int>(impl->gpus.size());
    impl->gpus.push_back(id);
  }
  std::vector<std::vector<sim::LinkId>> out(devices_.size());
  for (std::size_t i = 0; i < links_.size(); ++i) {
    sim::work_tick(progress_, "sealing its links", i, links_.size(), "links");
    const PendingLink& l = links_[i];
    const sim::LinkId id = impl->links.add(l.spec);
    impl->ends.push_back({l.from, l.to, l.count});
    impl->link_index.emplace(Topology::Impl::pair_key(l.from, l.to), id);
    out[l.from.value].push_back(id);
    boost::add_edge(l.from.value, l.to.value,
                    detail::EdgeProps{id, l.spec.kind, detail::link_cost(l.spec)}, impl->graph);
  }
  impl->out_offsets.push_back(0);
  for (const auto& o : out) {
    impl->out_flat.insert(impl->out_flat.end(), o.begin(), o.end());
    impl->out_offsets.push_back(static_cast<std::uint32_t>(impl->out_flat.size()));
  }
  impl->nics_by_node.resize(static_cast<std::size_t>(impl->node_count));
  for (std::uint32_t i = 0; i < devices_.size(); ++i)
    if (devices_[i].kind == DeviceKind::Nic && devices_[i].node)
      impl->nics_by_node[static_cast<std::size_t>(*devices_[i].node)].push_back(DeviceId{i});
  impl->nic_forward_index = forward_indices(*impl);
  impl->route_graph = detail::make_route_graph(impl->graph, progress_);
  impl->scratch.resize(devices_.size());
  impl->routes_from.resize(devices_.size());
  impl->nic_known.assign(devices_.size(), 0);
  impl->nic_of.assign(devices_.size(), std::nullopt);
  devices_.clear();
  links_.clear();
  by_name_.clear();
  link_index_.clear();
  return Topology(std::move(impl));
}

}  // namespace hybridsim::topology

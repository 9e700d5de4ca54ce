#include "topology/topology.h"

#include <algorithm>

#include "sim/error.h"
#include "topology/topology_impl.h"

namespace hybridsim::topology {

Topology::Topology(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

const std::string& Topology::name() const { return impl_->name; }
const sim::LinkTable& Topology::links() const { return impl_->links; }

const LinkEnds& Topology::link_ends(sim::LinkId link) const {
  if (link >= impl_->ends.size())
    throw InputError("link id " + std::to_string(link) + " out of range (topology has " +
                     std::to_string(impl_->ends.size()) + " links)");
  return impl_->ends[link];
}

std::optional<sim::LinkId> Topology::link_between(DeviceId from, DeviceId to) const {
  const auto it = impl_->link_index.find(Impl::pair_key(from, to));
  if (it == impl_->link_index.end()) return std::nullopt;
  return it->second;
}

std::span<const sim::LinkId> Topology::out_links(DeviceId device) const {
  const auto& off = impl_->out_offsets;
  if (device.value + 1 >= off.size()) return {};
  return {impl_->out_flat.data() + off[device.value], off[device.value + 1] - off[device.value]};
}

std::size_t Topology::device_count() const { return impl_->devices.size(); }

const DeviceInfo& Topology::device(DeviceId id) const {
  if (id.value >= impl_->devices.size())
    throw InputError("device id " + std::to_string(id.value) + " out of range (topology has " +
                     std::to_string(impl_->devices.size()) + " devices)");
  return impl_->devices[id.value];
}

std::vector<DeviceId> Topology::devices_of_kind(DeviceKind kind) const {
  std::vector<DeviceId> out;
  for (std::uint32_t i = 0; i < impl_->devices.size(); ++i)
    if (impl_->devices[i].kind == kind) out.push_back(DeviceId{i});
  return out;
}

std::optional<DeviceId> Topology::find_device(std::string_view name) const {
  const auto it = impl_->by_name.find(std::string(name));
  if (it == impl_->by_name.end()) return std::nullopt;
  return it->second;
}

DeviceId Topology::device_by_name(std::string_view name) const {
  if (auto id = find_device(name)) return *id;
  std::string message =
      "topology \"" + impl_->name + "\" has no device named \"" + std::string(name) + "\"";
  if (!impl_->devices.empty()) {
    message += " (devices are named like \"" + impl_->devices.front().name + "\"";
    if (!impl_->gpus.empty())
      message += ", \"" + impl_->devices[impl_->gpus.back().value].name + "\"";
    message += ")";
  }
  throw InputError(message);
}

std::span<const DeviceId> Topology::gpus() const { return impl_->gpus; }

DeviceId Topology::gpu(int rank) const {
  if (rank < 0 || static_cast<std::size_t>(rank) >= impl_->gpus.size())
    throw InputError("GPU rank " + std::to_string(rank) + " out of range: topology \"" +
                     impl_->name + "\" has " + std::to_string(impl_->gpus.size()) + " GPUs");
  return impl_->gpus[static_cast<std::size_t>(rank)];
}

int Topology::node_count() const { return impl_->node_count; }

sim::Route Topology::route(DeviceId from, DeviceId to, RouteOptions options) const {
  if (from.value >= impl_->devices.size() || to.value >= impl_->devices.size())
    throw InputError("route: device id out of range");
  std::lock_guard lock(impl_->mutex);
  return impl_->route_locked(from, to, options);
}

sim::Bandwidth Topology::route_bandwidth(sim::Route route) const {
  if (route.empty()) return sim::Bandwidth{};
  sim::Bandwidth best = impl_->links[route.front()].bandwidth;
  for (const sim::LinkId l : route) best = std::min(best, impl_->links[l].bandwidth);
  return best;
}

std::optional<DeviceId> Topology::nic_for_gpu(DeviceId gpu) const {
  const auto& info = device(gpu);
  std::lock_guard lock(impl_->mutex);
  if (impl_->nic_known[gpu.value]) return impl_->nic_of[gpu.value];
  std::optional<DeviceId> best;
  if (info.node && !impl_->nics_by_node[static_cast<std::size_t>(*info.node)].empty()) {
    const auto& nics = impl_->nics_by_node[static_cast<std::size_t>(*info.node)];
    std::vector<std::int64_t> cost;
    impl_->costs_within_node_locked(gpu, {}, nics, cost);
    std::int64_t best_cost = detail::kInfiniteCost;
    for (std::size_t i = 0; i < nics.size(); ++i) {
      if (cost[i] < best_cost) {
        best_cost = cost[i];
        best = nics[i];
      }
    }
  }
  impl_->nic_known[gpu.value] = 1;
  impl_->nic_of[gpu.value] = best;
  return best;
}

std::size_t Topology::cached_route_count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->route_count;
}

}  // namespace hybridsim::topology

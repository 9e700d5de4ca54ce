// topology::Topology — an immutable, sealed platform graph: devices, directed links (exported as
// the sim::LinkTable that sim/ runs on, LinkId == edge index) and cached shortest routes between
// devices. Bandwidths are bytes per second per direction, latencies picoseconds (sim/units.h,
// sim/time.h).
//   Topology t = presets::dgx1_v100({});
//   sim::Route r = t.route(t.gpus()[0], t.gpus()[5]);   // PCIe → CPU → QPI → CPU → PCIe
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/link.h"
#include "topology/device.h"

namespace hybridsim::topology {

// How a route may be chosen. The defaults are what a collective library does on real hardware.
struct RouteOptions {
  bool avoid_nvlink = false;  // exclude NVLink and NVSwitch links (force PCIe / the network)
  bool gpu_relay = false;     // allow routes to pass through a third GPU (NVLink forwarding)
};

class Topology {
 public:
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  const std::string& name() const;
  // The directed links sim/ runs on: links()[id] for id in [0, links().size()).
  const sim::LinkTable& links() const;
  const LinkEnds& link_ends(sim::LinkId link) const;
  // The directed link from `from` to `to`, if the two are directly connected.
  std::optional<sim::LinkId> link_between(DeviceId from, DeviceId to) const;
  std::span<const sim::LinkId> out_links(DeviceId device) const;

  std::size_t device_count() const;
  const DeviceInfo& device(DeviceId id) const;
  std::vector<DeviceId> devices_of_kind(DeviceKind kind) const;
  std::optional<DeviceId> find_device(std::string_view name) const;
  DeviceId device_by_name(std::string_view name) const;  // throws InputError
  // All GPUs in global rank order: node-major, then local index. gpus()[r] has gpu_rank r.
  std::span<const DeviceId> gpus() const;
  DeviceId gpu(int rank) const;  // throws InputError when out of range
  // Number of machines: 1 + the largest node index (0 when no device has a node).
  int node_count() const;

  // The shortest route (see topology/README.md: cost = store-and-forward time of a 1 MiB message;
  // GPUs are not relays unless options.gpu_relay; never through a third machine; equal-cost routes
  // spread by a hash of (from, to)). from == to gives an empty route. Throws InputError when `to`
  // is unreachable. The span stays valid as long as this Topology lives (moves included).
  // Routes are computed once per (from, to, options) and cached; a mutex guards the cache, so
  // concurrent calls are safe, but the intended use is one simulation at a time per Topology.
  sim::Route route(DeviceId from, DeviceId to, RouteOptions options = {}) const;
  // The bottleneck bandwidth of a route (the smallest link bandwidth on it; zero for empty).
  sim::Bandwidth route_bandwidth(sim::Route route) const;
  // The NIC a GPU's inter-node traffic leaves through: the nearest NIC of its own machine by route
  // cost (ties: lowest device id); none if its machine has no NIC.
  std::optional<DeviceId> nic_for_gpu(DeviceId gpu) const;
  std::size_t cached_route_count() const;

  struct Impl;  // Boost.Graph and the caches; defined in topology/topology_impl.h
  const Impl& impl() const { return *impl_; }

 private:
  friend class TopologyBuilder;
  explicit Topology(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hybridsim::topology

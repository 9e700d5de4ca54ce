// topology::TopologyBuilder — the mutable side of build-then-seal: add devices and (duplex or
// one-way) links, then build() seals them into an immutable Topology. Bandwidth is per physical
// link per direction (B/s); the exported link carries bandwidth × count. Latency in ps (sim::Time).
//   TopologyBuilder b("pair");
//   auto g0 = b.add_device({.name = "GPU0", .kind = DeviceKind::Gpu});
//   auto g1 = b.add_device({.name = "GPU1", .kind = DeviceKind::Gpu});
//   b.connect(g0, g1, {.kind = sim::LinkKind::NVLink, .bandwidth =
//   sim::Bandwidth::gb_per_second(25),
//                      .count = 2, .latency = sim::Time::ns(700)});
//   Topology t = std::move(b).build();   // links: "NVLink GPU0→GPU1", "NVLink GPU1→GPU0"
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/link.h"
#include "sim/work_progress.h"
#include "topology/device.h"
#include "topology/topology.h"

namespace hybridsim::topology {

struct DeviceSpec {
  std::string name = {};
  DeviceKind kind = DeviceKind::Gpu;
  std::optional<int> node = {};       // none: node 0, except network switches (which have none)
  std::optional<int> local_gpu = {};  // GPUs: none = the next free index in its node
};

struct LinkParams {
  sim::LinkKind kind = sim::LinkKind::Generic;
  sim::Bandwidth bandwidth = {};  // per physical link, per direction
  int count = 1;                  // physical links (NVLinks, cables) bundled into this one
  sim::Time latency = {};
  bool duplex = true;      // also add the reverse direction
  std::string label = {};  // name prefix, e.g. "QPI"; empty: sim::link_kind_label ("NVLink", "IB", ...)
};

class TopologyBuilder {
 public:
  explicit TopologyBuilder(std::string name = "custom") : name_(std::move(name)) {}

  // Throws InputError on an empty or duplicate name, a negative node, or a local index given for a
  // device that is not a GPU.
  DeviceId add_device(DeviceSpec spec);
  // Adds from→to (and to→from when duplex). Throws InputError on zero bandwidth, count < 1,
  // negative latency, a self-loop, unknown ids, or a directed link that already exists.
  void connect(DeviceId from, DeviceId to, const LinkParams& params);

  std::optional<DeviceId> find_device(std::string_view name) const;
  const DeviceSpec& device(DeviceId id) const { return devices_.at(id.value); }
  std::size_t device_count() const { return devices_.size(); }

  // Seals: assigns GPU local indices and global ranks, checks them, builds the graph and the link
  // table. Throws InputError on duplicate (node, local index) GPUs.
  Topology build() &&;
  // Told as build() seals the devices and links (null: nobody): seconds at 8,192 machines.
  void set_progress(sim::WorkProgress* progress) { progress_ = progress; }

 private:
  struct PendingLink {
    DeviceId from, to;
    sim::LinkSpec spec;
    int count;
  };
  void add_one_way(DeviceId from, DeviceId to, const LinkParams& params);

  std::string name_;
  std::vector<DeviceSpec> devices_;
  std::unordered_map<std::string, DeviceId> by_name_;
  std::vector<PendingLink> links_;
  std::unordered_map<std::uint64_t, sim::LinkId> link_index_;  // (from << 32 | to) → link
  sim::WorkProgress* progress_ = nullptr;
};

}  // namespace hybridsim::topology

// The devices of a platform graph (GPUs, CPU root complexes, PCIe switches, NVSwitches, NICs,
// network switches) and their typed ids. A DeviceId is an index into a Topology; it has no units.
//   DeviceId g = topo.device_by_name("n3.GPU5");   topo.device(g).gpu_rank == 29  (8 GPUs a node)
#pragma once
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace hybridsim::topology {

enum class DeviceKind : std::uint8_t {
  Gpu,
  Cpu,            // a CPU socket / PCIe root complex
  PcieSwitch,     // e.g. a PLX PEX8764
  NvSwitch,       // an NVSwitch fabric (one vertex for all the switch chips of a node)
  Nic,            // a network adapter (InfiniBand HCA)
  NetworkSwitch,  // a leaf or spine of the inter-node fabric
};
inline constexpr int kDeviceKindCount = 6;

// "GPU", "CPU", "PCIe switch", "NVSwitch", "NIC", "network switch".
std::string_view device_kind_name(DeviceKind kind);
// Accepts (case-insensitively) gpu, cpu, pcie-switch (pcie_switch, plx), nvswitch, nic,
// switch (network-switch, network_switch); throws InputError listing these otherwise.
DeviceKind parse_device_kind(std::string_view text);

// A typed index of a device in one Topology (or TopologyBuilder).
struct DeviceId {
  std::uint32_t value = 0;
  constexpr auto operator<=>(const DeviceId&) const = default;
};

struct DeviceInfo {
  std::string name;  // "GPU3", or "n3.GPU5" inside a cluster
  DeviceKind kind = DeviceKind::Gpu;
  std::optional<int> node;       // which machine; none for fabric switches
  std::optional<int> local_gpu;  // GPUs only: index inside its node
  std::optional<int> gpu_rank;   // GPUs only: global rank (node-major, then local index)
};

// The two ends of a directed link, and how many physical links (lanes, cables) it bundles.
struct LinkEnds {
  DeviceId from;
  DeviceId to;
  int count = 1;
};

}  // namespace hybridsim::topology

template <>
struct std::hash<hybridsim::topology::DeviceId> {
  std::size_t operator()(hybridsim::topology::DeviceId id) const noexcept {
    return std::hash<std::uint32_t>{}(id.value);
  }
};

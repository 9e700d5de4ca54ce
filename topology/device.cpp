#include "topology/device.h"

#include <algorithm>
#include <cctype>

#include "sim/error.h"

namespace hybridsim::topology {

std::string_view device_kind_name(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Gpu: return "GPU";
    case DeviceKind::Cpu: return "CPU";
    case DeviceKind::PcieSwitch: return "PCIe switch";
    case DeviceKind::NvSwitch: return "NVSwitch";
    case DeviceKind::Nic: return "NIC";
    case DeviceKind::NetworkSwitch: return "network switch";
  }
  return "?";
}

DeviceKind parse_device_kind(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "gpu") return DeviceKind::Gpu;
  if (lower == "cpu") return DeviceKind::Cpu;
  if (lower == "pcie-switch" || lower == "pcie_switch" || lower == "plx")
    return DeviceKind::PcieSwitch;
  if (lower == "nvswitch") return DeviceKind::NvSwitch;
  if (lower == "nic") return DeviceKind::Nic;
  if (lower == "switch" || lower == "network-switch" || lower == "network_switch")
    return DeviceKind::NetworkSwitch;
  throw InputError("unknown device kind \"" + std::string(text) +
                   "\": expected one of gpu, cpu, pcie-switch (plx), nvswitch, nic, "
                   "switch (network-switch)");
}

}  // namespace hybridsim::topology

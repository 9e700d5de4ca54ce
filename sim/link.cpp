#include "sim/link.h"

#include <algorithm>
#include <cctype>

#include "sim/error.h"

namespace hybridsim::sim {

std::string_view link_kind_name(LinkKind kind) {
  switch (kind) {
    case LinkKind::NVLink: return "NVLink";
    case LinkKind::NVSwitch: return "NVSwitch";
    case LinkKind::PCIe: return "PCIe";
    case LinkKind::CpuInterconnect: return "CPU";
    case LinkKind::InfiniBand: return "InfiniBand";
    case LinkKind::Ethernet: return "Ethernet";
    case LinkKind::Generic: return "Generic";
  }
  return "?";
}

LinkKind parse_link_kind(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "nvlink") return LinkKind::NVLink;
  if (lower == "nvswitch") return LinkKind::NVSwitch;
  if (lower == "pcie") return LinkKind::PCIe;
  if (lower == "cpu" || lower == "qpi" || lower == "upi") return LinkKind::CpuInterconnect;
  if (lower == "infiniband" || lower == "ib") return LinkKind::InfiniBand;
  if (lower == "ethernet") return LinkKind::Ethernet;
  if (lower == "generic") return LinkKind::Generic;
  throw InputError("unknown link kind \"" + std::string(text) +
                   "\": expected one of nvlink, nvswitch, pcie, cpu (qpi, upi), infiniband (ib), "
                   "ethernet, generic");
}

}  // namespace hybridsim::sim

#include "sim/link.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "sim/error.h"

namespace hybridsim::sim {

namespace {

// The one table of link-kind names: display name, scenario key, link-name prefix, and the extra
// spellings find_link_kind accepts.
struct KindNames {
  LinkKind kind;
  std::string_view name, key, label, also1, also2;
};
constexpr KindNames kNames[kLinkKindCount] = {
    {LinkKind::NVLink, "NVLink", "nvlink", "NVLink", {}, {}},
    {LinkKind::NVSwitch, "NVSwitch", "nvswitch", "NVSwitch", {}, {}},
    {LinkKind::PCIe, "PCIe", "pcie", "PCIe", {}, {}},
    {LinkKind::CpuInterconnect, "CPU", "cpu", "CPU", "qpi", "upi"},
    {LinkKind::InfiniBand, "InfiniBand", "infiniband", "IB", "ib", {}},
    {LinkKind::Ethernet, "Ethernet", "ethernet", "Ethernet", {}, {}},
    {LinkKind::Generic, "Generic", "generic", "Link", {}, {}},
};

const KindNames& names_of(LinkKind kind) { return kNames[static_cast<std::size_t>(kind)]; }

}  // namespace

std::string_view link_kind_name(LinkKind kind) { return names_of(kind).name; }
std::string_view link_kind_key(LinkKind kind) { return names_of(kind).key; }
std::string_view link_kind_label(LinkKind kind) { return names_of(kind).label; }

std::optional<LinkKind> find_link_kind(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const KindNames& n : kNames)
    if (lower == n.key || (!n.also1.empty() && lower == n.also1) || (!n.also2.empty() && lower == n.also2))
      return n.kind;
  return std::nullopt;
}

}  // namespace hybridsim::sim

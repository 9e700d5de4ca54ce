// The plain link table that sim/ runs on: one entry per *directed* link (one direction of a cable),
// with its kind, bandwidth, latency and a display name. topology/ builds it; sim/ never sees a graph.
//   sim::LinkTable links;  LinkId l = links.add({LinkKind::NVLink, Bandwidth::gb_per_second(50),
//                                                 Time::ns(700), "NVLink GPU0→GPU3"});
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"

namespace hybridsim::sim {

enum class LinkKind : std::uint8_t {
  NVLink,
  NVSwitch,         // a GPU's port into an NVSwitch fabric
  PCIe,
  CpuInterconnect,  // QPI / UPI between sockets
  InfiniBand,
  Ethernet,
  Generic,          // idealized links for validation topologies
};
inline constexpr int kLinkKindCount = 7;

// Names of a kind, all from one table: for reports ("NVLink", "InfiniBand"), as the key of scenario
// fields and CSV columns ("nvlink", "infiniband"), and as the prefix of link names ("NVLink", "IB").
std::string_view link_kind_name(LinkKind kind);
std::string_view link_kind_key(LinkKind kind);
std::string_view link_kind_label(LinkKind kind);
// Accepts the keys case-insensitively plus "ib", "qpi", "upi"; nullopt otherwise.
std::optional<LinkKind> find_link_kind(std::string_view text);

using LinkId = std::uint32_t;
// A route is the ordered list of directed links a message crosses.
using Route = std::span<const LinkId>;

struct LinkSpec {
  LinkKind kind = LinkKind::Generic;
  Bandwidth bandwidth;  // per direction; already multiplied by the lane/link count
  Time latency;         // from the tail leaving this link to its arrival at the far end
  std::string name;     // "NVLink GPU0→GPU3"
};
// Whether two links time a message alike (kind, bandwidth, latency: what a fold compares).
inline bool same_timing(const LinkSpec& a, const LinkSpec& b) {
  return a.kind == b.kind && a.bandwidth == b.bandwidth && a.latency == b.latency;
}

class LinkTable {
 public:
  LinkId add(LinkSpec spec) {
    links_.push_back(std::move(spec));
    return static_cast<LinkId>(links_.size() - 1);
  }
  const LinkSpec& operator[](LinkId id) const { return links_[id]; }
  LinkSpec& operator[](LinkId id) { return links_[id]; }
  std::size_t size() const { return links_.size(); }
  const std::vector<LinkSpec>& all() const { return links_; }

 private:
  std::vector<LinkSpec> links_;
};

}  // namespace hybridsim::sim

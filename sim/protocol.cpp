#include "sim/protocol.h"

#include <cctype>
#include <string>

#include "sim/error.h"

namespace hybridsim::sim {

std::string_view protocol_name(Protocol p) {
  switch (p) {
    case Protocol::Ideal: return "ideal";
    case Protocol::LL: return "LL";
    case Protocol::LL128: return "LL128";
    case Protocol::Simple: return "Simple";
  }
  return "?";
}

Protocol parse_protocol(std::string_view text) {
  std::string key;
  for (char c : text) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "ideal") return Protocol::Ideal;
  if (key == "ll") return Protocol::LL;
  if (key == "ll128") return Protocol::LL128;
  if (key == "simple") return Protocol::Simple;
  throw InputError("unknown protocol \"" + std::string(text) +
                   "\": expected ll, ll128, simple or ideal");
}

HopKind hop_kind(Route route, const LinkTable& links) {
  bool direct = !route.empty();
  for (const LinkId l : route) {
    const LinkKind k = links[l].kind;
    if (k == LinkKind::InfiniBand || k == LinkKind::Ethernet) return HopKind::Network;
    if (k != LinkKind::NVLink && k != LinkKind::NVSwitch) direct = false;
  }
  return direct ? HopKind::NVLink : HopKind::PCIe;
}

Time ProtocolTiming::step_delay(Route route, const LinkTable& links) const {
  if (is_ideal()) return Time::zero();
  Time own = Time::zero();
  for (const LinkId l : route) own += links[l].latency;
  const Time whole = hop_latency[static_cast<std::size_t>(hop_kind(route, links))];
  return whole > own ? whole - own : Time::zero();
}

}  // namespace hybridsim::sim

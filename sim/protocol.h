// How a collective's protocol turns link time into payload: NCCL's three protocols (LL, LL128,
// Simple) and the ideal α-β model, as the timing a sim/ collective applies to its messages.
//   ProtocolTiming t;                        // Ideal: line rates, only the links' latencies
//   t.link_rate_scale[NVLink] = 0.8;         // payload rate / line rate on that kind of link
//   t.hop_latency[HopKind::NVLink] = 3.4 us; // a ring step's whole latency over NVLink
// The numbers come from NCCL's model (sim/nccl_model.h); sim/README.md ("Protocols") says how they
// are applied.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

#include "sim/link.h"
#include "sim/time.h"
#include "sim/units.h"

namespace hybridsim::sim {

// Ideal: links at their line rate and only their own latencies (the α-β model of sim/README.md).
enum class Protocol : std::uint8_t { Ideal, LL, LL128, Simple };
inline constexpr int kProtocolCount = 4;
std::string_view protocol_name(Protocol p);     // "ideal", "LL", "LL128", "Simple"
Protocol parse_protocol(std::string_view text);  // ideal, ll, ll128, simple (any case); InputError

// What a step's route crosses, for NCCL's per-hop latencies: a network (InfiniBand, Ethernet), else
// only NVLink/NVSwitch, else PCIe (PCIe, CPU links, Generic).
enum class HopKind : std::uint8_t { NVLink, PCIe, Network };
inline constexpr int kHopKindCount = 3;
HopKind hop_kind(Route route, const LinkTable& links);

struct ProtocolTiming {
  Protocol protocol = Protocol::Ideal;
  // A message of this collective occupies a link of kind k for bytes / (bandwidth × scale[k]):
  // the protocol's payload efficiency on that link times its bandwidth factor. 1 = line rate.
  std::array<double, kLinkKindCount> link_rate_scale{1, 1, 1, 1, 1, 1, 1};
  // At most this many bytes per second leave a rank on one channel (NCCL's per-channel LL128 caps);
  // zero: no cap.
  Bandwidth channel_cap;
  // Every rank starts sending this long after it joined (NCCL's base latency).
  Time base_latency;
  // A step over a route of hop kind h is sent hop_latency[h] − (the route's link latencies) after
  // its data is ready (at least 0): the protocol's whole per-hop latency, the links' own included.
  std::array<Time, kHopKindCount> hop_latency{};

  // Field by field (the doubles compared exactly): equal timings time every message alike.
  bool operator==(const ProtocolTiming&) const = default;
  bool is_ideal() const { return protocol == Protocol::Ideal; }
  // The extra wait before a step's message over `route` is sent.
  Time step_delay(Route route, const LinkTable& links) const;
};

}  // namespace hybridsim::sim

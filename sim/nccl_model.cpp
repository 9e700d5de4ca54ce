// NCCL's model, constant by constant from ../shared/reference/nccl.md (NVIDIA/nccl tuning.cc and
// topo.h at commit 01afd20). NCCL's table of tree correction factors for medium sizes is not in the
// reference (only its range, 0.4–1.0), so it is not applied: the tree is taken at its full model
// bandwidth at every size (see sim/README.md, "NCCL's model").
#include "sim/nccl_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/error.h"

namespace hybridsim::sim {
namespace {

constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
int protocol_index(Protocol p) {
  switch (p) {
    case Protocol::LL: return kLL;
    case Protocol::LL128: return kLL128;
    case Protocol::Simple: return kSimple;
    case Protocol::Ideal: break;
  }
  throw InternalError("NCCL's model has no ideal protocol");
}

// baseLat[algorithm][protocol], µs (LL, LL128, Simple).
constexpr double kBaseLatency[2][3] = {{3.6, 10.0, 8.4}, {4.4, 4.4, 0.0}};  // ring, tree
// hwLat[hardware][algorithm][protocol], µs.
constexpr double kHopLatency[kHopKindCount][2][3] = {
    {{0.47, 1.9, 3.4}, {0.52, 1.2, 28.0}},  // NVLink: ring, tree
    {{1.0, 2.5, 5.7}, {1.0, 1.9, 28.0}},    // PCIe
    {{2.7, 4.0, 9.6}, {5.0, 8.5, 50.0}},    // network
};

// Per-channel LL128 bandwidth caps of the ring, GB/s.
double ll128_channel_cap(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce: return 16.7;
    case CollectiveOp::ReduceScatter: return 15.2;
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
      return 18.3;
    case CollectiveOp::Broadcast: return 18.8;
  }
  return 16.7;
}

// The protocol's multiplier of busBw = channels × speed, before the caps.
double bandwidth_factor(const NcclMachine& m, NcclAlgorithm a, Protocol p) {
  const int proto = protocol_index(p);
  if (a == NcclAlgorithm::Ring) {
    if (proto == kLL) return m.nodes > 1 || m.op == CollectiveOp::AllReduce ? 1.0 / 4 : 1.0 / 3;
    if (proto == kLL128) return m.gpus_per_node() < 2 ? 0.7 : 0.92;
    return 1.0;
  }
  const double tree = 0.9;
  if (proto == kLL) return tree / 3.8;
  if (proto == kLL128) return tree * (m.nodes == 1 ? 7.0 / 9.0 : 0.915);
  return tree;
}

// An all-to-all sends to every peer at once: one step's latency, a network hop's across machines.
int latency_steps(const NcclMachine& m) {
  if (m.op == CollectiveOp::AllToAll) return 1;
  return m.op == CollectiveOp::AllReduce ? 2 * (m.ranks - 1) : m.ranks - 1;
}
int inter_steps(const NcclMachine& m) {
  if (m.op == CollectiveOp::AllToAll) return m.nodes > 1 ? 1 : 0;
  return m.op == CollectiveOp::AllReduce ? 2 * (m.nodes - 1) : m.nodes - 1;
}
bool plateau(const NcclMachine& m, NcclAlgorithm a, Protocol p, Bytes size) {
  return a == NcclAlgorithm::Ring && p == Protocol::Simple && m.op == CollectiveOp::AllReduce &&
         m.nodes > 1 &&
         static_cast<double>(size.count()) >= m.ranks / 16.0 * 65536.0;
}

// NCCL's threads a channel (maxThreads) and bytes a thread (threadThresholds) before its enqueue
// adds a channel (NCCL 2.7-2.8 tuning.cc and enqueue.cc, from its source: nccl.md is silent).
int max_threads(const NcclMachine& m, Protocol p) {
  if (p == Protocol::LL128) return 640;
  // Simple: 256 where the ring's channels give at most PCIe's 12 GB/s (PCI_WIDTH), else 512.
  if (p == Protocol::Simple && m.channels * m.channel_gb_per_s <= 12.0) return 256;
  return 512;
}
std::int64_t thread_threshold(const NcclMachine& m, NcclAlgorithm a, Protocol p) {
  if (p == Protocol::Simple) return 64;
  return a == NcclAlgorithm::Ring && p == Protocol::LL ? 8 * static_cast<std::int64_t>(m.ranks) : 8;
}

NcclEstimate estimate_on(const NcclMachine& m, NcclAlgorithm a, Protocol p, Bytes size, int channels);

}  // namespace

int nccl_channels(const NcclMachine& m, NcclAlgorithm a, Protocol p, Bytes size) {
  if (p == Protocol::Ideal || m.op == CollectiveOp::AllToAll) return m.channels;
  std::int64_t nc = m.channels, nt = max_threads(m, p);
  const std::int64_t threshold = thread_threshold(m, a, p);
  // Only the channels matter here; NCCL halves the threads after them, at one channel.
  while (nc >= 2 && size.count() < nc * nt * threshold) --nc;
  return static_cast<int>(nc);
}

std::array<double, kLinkKindCount> nccl_payload_efficiency() {
  std::array<double, kLinkKindCount> e{};
  e[static_cast<std::size_t>(LinkKind::NVLink)] = 20.0 / 25.0;
  e[static_cast<std::size_t>(LinkKind::NVSwitch)] = 20.0 / 25.0;
  e[static_cast<std::size_t>(LinkKind::PCIe)] = 12.0 / 12.0;
  e[static_cast<std::size_t>(LinkKind::CpuInterconnect)] = 6.0 / 38.4;
  e[static_cast<std::size_t>(LinkKind::InfiniBand)] = 12.0 / 12.5;
  e[static_cast<std::size_t>(LinkKind::Ethernet)] = 12.0 / 12.5;
  e[static_cast<std::size_t>(LinkKind::Generic)] = 1.0;
  return e;
}

NcclEstimate nccl_estimate(const NcclMachine& m, NcclAlgorithm a, Protocol p, Bytes size) {
  return estimate_on(m, a, p, size, nccl_channels(m, a, p, size));  // all of them for Ideal
}

namespace {

NcclEstimate estimate_on(const NcclMachine& m, NcclAlgorithm a, Protocol p, Bytes size, int channels) {
  NcclEstimate e;
  e.channels = channels;
  if (p == Protocol::Ideal || m.ranks < 2) return e;
  if (a == NcclAlgorithm::Tree && m.op != CollectiveOp::AllReduce) return e;
  // NCCL's all-to-all is grouped point-to-point sends on the Simple protocol, timed here as a
  // ring/Simple step of (n−1)/n of the buffer (sim/README.md, "All-to-all").
  if (m.op == CollectiveOp::AllToAll && p != Protocol::Simple) return e;
  if (p == Protocol::LL128 && !m.ll128) return e;
  e.usable = true;
  const int proto = protocol_index(p);
  const int alg = a == NcclAlgorithm::Ring ? 0 : 1;
  double bus = channels * m.channel_gb_per_s;
  if (a == NcclAlgorithm::Ring) {
    bus *= bandwidth_factor(m, a, p);
    if (p == Protocol::LL128) bus = std::min(bus, ll128_channel_cap(m.op) * channels);
    const int steps = m.op == CollectiveOp::AllReduce ? 2 * (m.ranks - 1)
                      : m.op == CollectiveOp::Broadcast ? m.ranks
                                                        : m.ranks - 1;
    e.algo_gb_per_s = bus * m.ranks / steps;
  } else {
    bus = std::min(bus * 0.9, m.nodes > 2 ? 80.0 : 110.0) * (bandwidth_factor(m, a, p) / 0.9);
    e.algo_gb_per_s = bus * 0.5;
  }
  e.bus_gb_per_s = bus;

  const int intra = static_cast<int>(m.intra);
  const int net = static_cast<int>(HopKind::Network);
  double lat = kBaseLatency[alg][proto];
  if (a == NcclAlgorithm::Ring) {
    const double intra_hop =
        kHopLatency[intra][alg][proto] * (p == Protocol::LL && m.nodes > 1 ? 1.8 : 1.0);
    lat += (latency_steps(m) - inter_steps(m)) * intra_hop +
           inter_steps(m) * kHopLatency[net][alg][proto];
    if (plateau(m, a, p, size)) lat *= 1.9;
  } else {
    lat += 2 * ((m.gpus_per_node() - 1) * kHopLatency[intra][alg][proto] +
                std::log2(static_cast<double>(m.nodes)) * kHopLatency[net][alg][proto]);
  }
  e.latency_us = lat;
  e.time_us =
      lat + (e.algo_gb_per_s > 0 ? static_cast<double>(size.count()) / (1000.0 * e.algo_gb_per_s) : 0);
  return e;
}

}  // namespace

NcclChoice nccl_choose(const NcclMachine& m, Bytes size, std::optional<NcclAlgorithm> algorithm,
                       std::optional<Protocol> protocol) {
  if (protocol == Protocol::Ideal) throw InternalError("NCCL's model does not choose the ideal protocol");
  NcclChoice best;
  bool found = false;
  for (const NcclAlgorithm a : {NcclAlgorithm::Ring, NcclAlgorithm::Tree}) {
    if (algorithm && *algorithm != a) continue;
    for (const Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
      if (protocol && *protocol != p) continue;
      // NCCL compares the times on every channel of the communicator, then cuts the channels.
      const NcclEstimate e = estimate_on(m, a, p, size, m.channels);
      if (!e.usable || (found && !(e.time_us < best.estimate.time_us))) continue;
      best = {a, p, e};
      found = true;
    }
  }
  if (found) {
    best.estimate = nccl_estimate(m, best.algorithm, best.protocol, size);
    return best;
  }
  // Nothing usable as asked (e.g. LL128 without NVLink): the ring with Simple always is.
  best = {NcclAlgorithm::Ring, Protocol::Simple,
          nccl_estimate(m, NcclAlgorithm::Ring, Protocol::Simple, size)};
  if (algorithm == NcclAlgorithm::Tree && m.op == CollectiveOp::AllReduce)
    best = {NcclAlgorithm::Tree, Protocol::Simple,
            nccl_estimate(m, NcclAlgorithm::Tree, Protocol::Simple, size)};
  return best;
}

ProtocolTiming nccl_timing(const NcclMachine& m, NcclAlgorithm a, Protocol p, Bytes size) {
  ProtocolTiming t;
  if (p == Protocol::Ideal) return t;
  t.protocol = p;
  const double factor = bandwidth_factor(m, a, p);
  const auto eff = nccl_payload_efficiency();
  for (std::size_t k = 0; k < eff.size(); ++k) t.link_rate_scale[k] = eff[k] * factor;
  if (a == NcclAlgorithm::Ring && p == Protocol::LL128)
    t.channel_cap = Bandwidth::bytes_per_second(std::llround(ll128_channel_cap(m.op) * 1e9));
  const int proto = protocol_index(p);
  const int alg = a == NcclAlgorithm::Ring ? 0 : 1;
  const double scale = plateau(m, a, p, size) ? 1.9 : 1.0;
  auto us = [scale](double v) { return Time::ps(std::llround(v * scale * 1e6)); };
  t.base_latency = us(kBaseLatency[alg][proto]);
  for (int h = 0; h < kHopKindCount; ++h) {
    const bool ll_intra = a == NcclAlgorithm::Ring && p == Protocol::LL && m.nodes > 1 &&
                          h != static_cast<int>(HopKind::Network);
    t.hop_latency[static_cast<std::size_t>(h)] = us(kHopLatency[h][alg][proto] * (ll_intra ? 1.8 : 1.0));
  }
  return t;
}

}  // namespace hybridsim::sim

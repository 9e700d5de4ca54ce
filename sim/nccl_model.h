// NCCL's own cost model (its published constants: ../shared/reference/nccl.md, from NVIDIA/nccl
// src/graph/tuning.cc and topo.h at commit 01afd20): the time it predicts for a collective call per
// algorithm × protocol, the choice it makes, and the ProtocolTiming under which sim/ collectives
// reproduce that algorithm and protocol message by message.
//   NcclMachine m{.op = CollectiveOp::AllReduce, .ranks = 8, .nodes = 1, .channels = 6,
//                 .channel_gb_per_s = 20, .intra = HopKind::NVLink, .ll128 = true};
//   NcclChoice c = nccl_choose(m, Bytes::mib(64));   // ring, Simple
//   ProtocolTiming t = nccl_timing(m, c.algorithm, c.protocol, Bytes::mib(64));
#pragma once
#include <array>
#include <optional>
#include <string_view>

#include "sim/collective.h"
#include "sim/protocol.h"

namespace hybridsim::sim {

enum class NcclAlgorithm : std::uint8_t { Ring, Tree };

// NCCL's payload rate per link kind relative to the line rate of the links in topology/'s presets:
// NVLink and NVSwitch 20/25 = 0.8 (SM70_NVLINK_BW against NVLink2's 25 GB/s), PCIe 12/12 = 1
// (PCI_BW against the presets' achievable 12 GB/s), CPU links 6/38.4 = 0.15625 (BDW_QPI_BW
// against the DGX-1's 2 × 19.2 GB/s QPI), InfiniBand and Ethernet 12/12.5 = 0.96 (NET_BW against a
// 100 Gb/s NIC), Generic 1 (idealized validation links).
std::array<double, kLinkKindCount> nccl_payload_efficiency();

// What NCCL's model knows of one communicator: its graph's channels and per-channel speed (GB/s of
// payload; the intra-node speed for <= 2 nodes, the inter-node one otherwise), how many machines
// it spans, what links join GPUs inside a machine, and whether LL128 is enabled (NCCL enables it
// by default only on Volta/Ampere with NVLink inside the node).
struct NcclMachine {
  CollectiveOp op = CollectiveOp::AllReduce;
  int ranks = 2;
  int nodes = 1;
  int channels = 1;
  double channel_gb_per_s = 0;
  HopKind intra = HopKind::NVLink;
  bool ll128 = false;
  int gpus_per_node() const { return nodes > 0 ? ranks / nodes : ranks; }
};

// The channels NCCL runs one call of `size` bytes on (its enqueue's getAlgoInfo, NCCL 2.7-2.8:
// ../shared/reference/nccl.md is silent on it, so this follows NCCL's source as we know it). From
// the communicator's channels (m.channels) and the protocol's threads a channel (LL 512, LL128 640,
// Simple 512, or 256 where channels × speed <= 12 GB/s, PCIe's width), while size < channels ×
// threads × threshold it drops a channel, then, at one channel, halves the threads (while a multiple
// of 128). The threshold a thread: LL and LL128 8 B (the ring's LL 8 B × ranks), Simple 64 B. So a
// 4 B all-reduce on a DGX-1 runs on 1 channel of 6, and the ring's LL on 8 GPUs on all 6 from
// 196,608 B (6 × 512 × 64). Size is the whole buffer (an all-gather's n parts); the other channels
// are not launched at all. Protocol::Ideal and the all-to-all (direct sends) keep m.channels.
int nccl_channels(const NcclMachine& m, NcclAlgorithm a, Protocol p, Bytes size);

struct NcclEstimate {
  bool usable = false;          // this algorithm × protocol applies (tree: all-reduce; LL128: on)
  int channels = 0;             // the channels it runs on: nccl_channels (busBw counts these)
  double bus_gb_per_s = 0;      // busBw after the protocol's refinements
  double algo_gb_per_s = 0;     // algorithm bandwidth: bytes of one rank's buffer per second
  double latency_us = 0;
  double time_us = 0;           // latency + bytes / (1000 × algorithm bandwidth)
};
// NCCL's closed form on the channels the call runs on (nccl_channels): busBw = those channels ×
// speed; a small call's bandwidth term so grows as NCCL's does.
NcclEstimate nccl_estimate(const NcclMachine& m, NcclAlgorithm a, Protocol p, Bytes size);

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  Protocol protocol = Protocol::Simple;
  NcclEstimate estimate;
};
// The fastest usable algorithm × protocol (ties: ring before tree; LL, LL128, Simple in that order,
// as NCCL tries them), optionally with the algorithm or protocol fixed. As NCCL's getAlgoInfo, it
// compares the times on all the communicator's channels and cuts the channels after choosing: the
// choice is NCCL's, its `estimate` nccl_estimate's (on nccl_channels). Protocol::Ideal is never
// chosen; fixing it throws InternalError.
NcclChoice nccl_choose(const NcclMachine& m, Bytes size,
                       std::optional<NcclAlgorithm> algorithm = {},
                       std::optional<Protocol> protocol = {});

// The timing under which a sim/ ring (or tree) collective runs as that protocol: link rates scaled
// by the payload efficiency × the protocol's bandwidth factor, NCCL's per-channel LL128 cap, base
// latency and per-hop latencies (LL's intra-node hop × 1.8 across nodes; the ring/Simple plateau
// × 1.9 of multi-node all-reduce at sizes >= ranks/16 × 64 KiB). Protocol::Ideal gives the ideal
// timing (ProtocolTiming{}).
ProtocolTiming nccl_timing(const NcclMachine& m, NcclAlgorithm a, Protocol p, Bytes size);

}  // namespace hybridsim::sim

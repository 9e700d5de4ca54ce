// What NCCL's cost model (sim/nccl_model.h) needs to know of a communicator, read off the rings the
// ring search found for it: machines spanned, channels, the per-channel payload speed (the slowest
// link share of any channel, at NCCL's payload rate for the link's kind), what joins its GPUs inside
// a machine, and whether LL128 is on (NVLink inside the machine, as NCCL enables it).
//   sim::NcclMachine m = describe_for_nccl(topo, devices, channels, sim::CollectiveOp::AllReduce);
//   // DGX-1: 8 ranks, 1 node, 6 channels at 20 GB/s over NVLink, LL128 on
#pragma once
#include <span>
#include <vector>

#include "sim/nccl_model.h"
#include "topology/topology.h"

namespace hybridsim::workloads {

// `channels` are the communicator's rings (orders index `devices`).
sim::NcclMachine describe_for_nccl(const topology::Topology& topology,
                                   std::span<const topology::DeviceId> devices,
                                   const std::vector<sim::RingChannel>& channels,
                                   sim::CollectiveOp op, bool pcie_only);

}  // namespace hybridsim::workloads

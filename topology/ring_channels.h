// Hands a RingPlan to sim/: converts its rings (device ids) into sim::RingChannel, whose order
// holds positions in the communicator's GPU list and whose routes are the link ids of each ring
// step.
//   auto plan = find_rings(topo, gpus);
//   sim::RingCollective ar(network, sim::CollectiveOp::AllReduce, n, to_ring_channels(plan, gpus),
//                          sim::Bytes::mib(64), {});
#pragma once
#include <span>
#include <vector>

#include "sim/collective.h"
#include "topology/rings.h"

namespace hybridsim::topology {

// Throws InputError when a ring holds a GPU that is not in `communicator`.
std::vector<sim::RingChannel> to_ring_channels(const RingPlan& plan,
                                               std::span<const DeviceId> communicator);

}  // namespace hybridsim::topology

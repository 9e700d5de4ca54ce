// Ring search for collectives: ring orders of a set of GPUs that use the fastest links, one per
// channel, and the route of every ring step, so sim/ collectives need nothing else. On NVLink
// machines the rings are edge-disjoint Hamiltonian cycles of the NVLink graph (each cycle and its
// reverse are two channels); across machines each ring enters and leaves every machine at GPUs
// next to one NIC, one channel per NIC. Bandwidth is per channel, B/s.
//   RingPlan plan = find_rings(topo, topo.gpus());   // DGX-1: 6 channels, NVLink only
//   plan.rings[c][i] sends to plan.rings[c][(i + 1) % n] along plan.routes[c][i].
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/work_progress.h"
#include "topology/topology.h"

namespace hybridsim::topology {

struct RingOptions {
  bool pcie_only = false;                  // no NVLink/NVSwitch: rings over PCIe (and the network)
  std::optional<int> channels = {};        // default: RingPlan::saturating_channels
  int max_channels = 32;                   // cap on the default channel count
  std::int64_t search_budget = 1'000'000;  // DFS steps per cycle-search attempt
  // Told position by position as the routes of the ring steps are found (seconds at 65,536 GPUs).
  sim::WorkProgress* progress = nullptr;
};

struct RingPlan {
  // One ring per channel; each lists every GPU once. Channel c reuses base ring c mod (base count)
  // when more channels than distinct rings are asked for.
  std::vector<std::vector<DeviceId>> rings;
  // routes[c][i]: from rings[c][i] to rings[c][(i + 1) % n] (valid as long as the Topology).
  std::vector<std::vector<sim::Route>> routes;
  // The channel count NCCL would use: on one machine, 2 × (edge-disjoint NVLink cycles) with
  // NVLink, else the physical link count of each GPU's first hop (NVSwitch ports, 1 for PCIe);
  // across machines, one channel per NIC of a machine (NCCL spreads channels evenly over the NICs).
  int saturating_channels = 0;
  RouteOptions route_options = {};  // what the routes were computed with
};

// Throws InputError for an empty set, a device that is not a GPU, a GPU listed twice, or
// options.channels < 1; and when some ring step has no route (e.g. pcie_only without PCIe).
RingPlan find_rings(const Topology& topology, std::span<const DeviceId> gpus,
                    const RingOptions& options = {});

}  // namespace hybridsim::topology

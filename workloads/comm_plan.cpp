#include "workloads/comm_plan.h"

#include <algorithm>
#include <string>

#include "sim/error.h"
#include "topology/ring_channels.h"

namespace hybridsim::workloads {

std::string_view algorithm_name(AllReduceAlgorithm a) {
  return a == AllReduceAlgorithm::Ring ? "ring" : "hierarchical";
}

AllReduceAlgorithm parse_algorithm(std::string_view text) {
  if (text == "ring") return AllReduceAlgorithm::Ring;
  if (text == "hierarchical") return AllReduceAlgorithm::Hierarchical;
  throw InputError("unknown all-reduce algorithm \"" + std::string(text) +
                   "\": expected ring or hierarchical");
}

CommPlanner::CommPlanner(const topology::Topology& topology, CommOptions options)
    : topology_(topology), options_(options) {}

const std::vector<sim::RingChannel>& CommPlanner::ring_channels(const std::vector<int>& members) {
  auto it = cache_.find(members);
  if (it != cache_.end()) return it->second;
  std::vector<sim::RingChannel> channels;
  if (members.size() == 2) {
    // Two ranks: a "ring" is a pair of routes. Point-to-point transfers and 2-GPU collectives use
    // one channel per direction of the direct route.
    const topology::DeviceId a = topology_.gpu(members[0]);
    const topology::DeviceId b = topology_.gpu(members[1]);
    topology::RouteOptions ro;
    ro.avoid_nvlink = options_.pcie_only;
    const sim::Route ab = topology_.route(a, b, ro);
    const sim::Route ba = topology_.route(b, a, ro);
    sim::RingChannel ch{{0, 1}, {{ab.begin(), ab.end()}, {ba.begin(), ba.end()}}};
    const int count = options_.channels.value_or(1);
    for (int c = 0; c < count; ++c) channels.push_back(ch);
  } else {
    std::vector<topology::DeviceId> devices;
    for (const int r : members) devices.push_back(topology_.gpu(r));
    topology::RingOptions ro;
    ro.pcie_only = options_.pcie_only;
    ro.channels = options_.channels;
    const topology::RingPlan plan = topology::find_rings(topology_, devices, ro);
    channels = topology::to_ring_channels(plan, devices);
  }
  return cache_.emplace(members, std::move(channels)).first->second;
}

std::vector<sim::CollectiveChain::Part> CommPlanner::ring_phase(
    const std::vector<std::vector<int>>& groups, const std::vector<int>& members,
    sim::CollectiveOp op, sim::Bytes size) {
  // groups hold indices into members; each group becomes one ring collective.
  std::vector<sim::CollectiveChain::Part> parts;
  for (const auto& group : groups) {
    std::vector<int> global;
    for (const int i : group) global.push_back(members[static_cast<std::size_t>(i)]);
    sim::CollectiveChain::Part part;
    part.members.assign(group.begin(), group.end());
    part.op = op;
    part.size = size;
    part.channels = ring_channels(global);
    parts.push_back(std::move(part));
  }
  return parts;
}

CollectivePlan CommPlanner::plan(const CollectiveSpec& spec) {
  const auto n = static_cast<int>(spec.members.size());
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
  if (spec.op == sim::CollectiveOp::Broadcast && n == 2) {
    // Point to point: the sender streams to the receiver along the direct route.
    std::vector<sim::CollectiveChain::Part> parts = ring_phase({all}, spec.members, spec.op, spec.size);
    parts[0].channels.resize(1);  // one stream of messages; more channels would share the route
    return {std::move(parts)};
  }
  if (spec.op != sim::CollectiveOp::AllReduce || options_.algorithm == AllReduceAlgorithm::Ring)
    return {ring_phase({all}, spec.members, spec.op, spec.size)};

  // Hierarchical: members grouped by machine, in rank order; every machine must hold the same
  // number G of them, else the plain ring is used.
  std::map<int, std::vector<int>> by_node;
  for (int i = 0; i < n; ++i)
    by_node[topology_.device(topology_.gpu(spec.members[static_cast<std::size_t>(i)])).node.value_or(0)]
        .push_back(i);
  const std::size_t g = by_node.begin()->second.size();
  bool uniform = by_node.size() > 1 && g > 1;
  for (const auto& [node, idx] : by_node) uniform = uniform && idx.size() == g;
  if (!uniform) return {ring_phase({all}, spec.members, spec.op, spec.size)};
  std::vector<std::vector<int>> intra, inter(g);
  for (const auto& [node, idx] : by_node) {
    intra.push_back(idx);
    for (std::size_t j = 0; j < g; ++j) inter[j].push_back(idx[j]);
  }
  // After the reduce-scatter each GPU holds 1/G of the reduced data: that slice is all-reduced
  // across machines, then gathered back.
  const sim::Bytes slice = sim::Bytes::of((spec.size.count() + static_cast<std::int64_t>(g) - 1) /
                                          static_cast<std::int64_t>(g));
  return {ring_phase(intra, spec.members, sim::CollectiveOp::ReduceScatter, spec.size),
          ring_phase(inter, spec.members, sim::CollectiveOp::AllReduce, slice),
          ring_phase(intra, spec.members, sim::CollectiveOp::AllGather, spec.size)};
}

}  // namespace hybridsim::workloads

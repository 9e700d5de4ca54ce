#include "workloads/comm/comm_plan.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "sim/error.h"
#include "sim/fast/fast_path.h"
#include "topology/gpu_list.h"
#include "topology/ring_channels.h"
#include "topology/tree_channels.h"
#include "workloads/comm/comm_model.h"

namespace hybridsim::workloads {

std::string_view algorithm_name(AllReduceAlgorithm a) {
  switch (a) {
    case AllReduceAlgorithm::Auto: return "auto";
    case AllReduceAlgorithm::Ring: return "ring";
    case AllReduceAlgorithm::Tree: return "tree";
    case AllReduceAlgorithm::Hierarchical: return "hierarchical";
  }
  return "?";
}

namespace {

// Indices into `members`, grouped by the machine their GPU is on, in rank order.
std::map<int, std::vector<int>> members_by_machine(const topology::Topology& t,
                                                   const std::vector<int>& members) {
  std::map<int, std::vector<int>> by_node;
  for (std::size_t i = 0; i < members.size(); ++i)
    by_node[t.device(t.gpu(members[i])).node.value_or(0)].push_back(static_cast<int>(i));
  return by_node;
}

// Why members so grouped cannot run the hierarchical all-reduce; empty if they can.
std::string unfit_grouping(const std::map<int, std::vector<int>>& by_node) {
  if (by_node.empty()) return "no GPUs";
  if (by_node.size() == 1) return "all on machine " + std::to_string(by_node.begin()->first);
  const std::size_t g = by_node.begin()->second.size();
  for (const auto& [node, idx] : by_node)
    if (idx.size() != g)
      return "on machines holding unequal numbers of them (machine " +
             std::to_string(by_node.begin()->first) + ": " + std::to_string(g) + ", machine " +
             std::to_string(node) + ": " + std::to_string(idx.size()) + ")";
  if (g == 1) return "one on each of " + std::to_string(by_node.size()) + " machines";
  return {};
}

}  // namespace

std::string hierarchical_unfit(const topology::Topology& t, const std::vector<int>& members) {
  return unfit_grouping(members_by_machine(t, members));
}

AllReduceAlgorithm parse_algorithm(std::string_view text) {
  if (text == "auto") return AllReduceAlgorithm::Auto;
  if (text == "ring") return AllReduceAlgorithm::Ring;
  if (text == "tree") return AllReduceAlgorithm::Tree;
  if (text == "hierarchical") return AllReduceAlgorithm::Hierarchical;
  throw InputError("unknown all-reduce algorithm \"" + std::string(text) +
                   "\": expected auto, ring, tree or hierarchical");
}

std::optional<sim::Protocol> parse_protocol_option(std::string_view text) {
  if (text == "auto") return std::nullopt;
  try {
    return sim::parse_protocol(text);
  } catch (const InputError&) {
    throw InputError("unknown protocol \"" + std::string(text) +
                     "\": expected auto, ll, ll128, simple or ideal");
  }
}

std::string protocol_option_name(std::optional<sim::Protocol> p) {
  if (!p) return "auto";
  std::string s(sim::protocol_name(*p));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string all_to_all_protocol_note(std::optional<sim::Protocol> fixed) {
  if (fixed != sim::Protocol::LL && fixed != sim::Protocol::LL128) return {};
  const std::string asked(sim::protocol_name(*fixed));
  return "Simple, not the " + asked + " of communication.protocol: NCCL sends an all-to-all as grouped "
         "point-to-point copies, which it runs on Simple only; the other collectives run " + asked;
}

std::unique_ptr<sim::Collective> make_collective(sim::Network& network, CollectivePlan plan,
                                                 sim::CollectiveConfig config) {
  if (plan.pairs != nullptr) {
    config.timing = plan.timing;
    return std::make_unique<sim::AllToAllCollective>(network, plan.ranks, *plan.pairs, plan.phases[0][0].size,
                                                     config);
  }
  if (plan.algorithm == AllReduceAlgorithm::Tree) {
    config.timing = plan.timing;
    return sim::make_tree_collective(network, plan.ranks, std::move(plan.trees),
                                     plan.phases.empty() ? sim::Bytes() : plan.phases[0][0].size, config);
  }
  if (plan.phases.size() == 1 && plan.phases[0].size() == 1) {
    sim::CollectiveChain::Part& part = plan.phases[0][0];
    config.timing = part.timing.value_or(plan.timing);
    return sim::make_ring_collective(network, part.op, plan.ranks, std::move(part.channels), part.size,
                                     config);
  }
  return std::make_unique<sim::CollectiveChain>(network, plan.ranks, std::move(plan.phases), config);
}

CommPlanner::CommPlanner(const topology::Topology& topology, CommOptions options)
    : topology_(topology), options_(options) {}

CommPlanner::Entry& CommPlanner::entry(const std::vector<int>& members) {
  auto it = cache_.find(members);
  if (it != cache_.end()) return it->second;
  Entry e;
  if (members.size() == 2) {
    // Two ranks: a "ring" is a pair of routes. Point-to-point transfers and 2-GPU collectives use
    // one channel per direction of the direct route.
    const topology::DeviceId a = topology_.gpu(members[0]);
    const topology::DeviceId b = topology_.gpu(members[1]);
    topology::RouteOptions ro;
    ro.avoid_nvlink = options_.pcie_only;
    const sim::Route ab = topology_.route(a, b, ro);
    const sim::Route ba = topology_.route(b, a, ro);
    e.rings.rings.push_back({a, b});
    e.rings.routes.push_back({ab, ba});
    e.rings.route_options = ro;
    const int count = options_.channels.value_or(1);
    for (int c = 1; c < count; ++c) {
      e.rings.rings.push_back(e.rings.rings[0]);
      e.rings.routes.push_back(e.rings.routes[0]);
    }
    e.rings.saturating_channels = count;
  } else {
    std::vector<topology::DeviceId> devices;
    for (const int r : members) devices.push_back(topology_.gpu(r));
    topology::RingOptions ro;
    ro.pcie_only = options_.pcie_only;
    ro.channels = options_.channels;
    ro.progress = progress_;
    e.rings = topology::find_rings(topology_, devices, ro);
  }
  std::vector<topology::DeviceId> devices;
  for (const int r : members) devices.push_back(topology_.gpu(r));
  e.channels = topology::to_ring_channels(e.rings, devices);
  return cache_.emplace(members, std::move(e)).first->second;
}

std::shared_ptr<const std::vector<sim::TreeChannel>> CommPlanner::trees(const std::vector<int>& members,
                                                                        int channels) {
  Entry& e = entry(members);
  if (e.trees == nullptr) {
    std::vector<topology::DeviceId> devices;
    for (const int r : members) devices.push_back(topology_.gpu(r));
    e.trees = std::make_shared<const std::vector<sim::TreeChannel>>(
        topology::to_tree_channels(topology_, e.rings, devices, progress_));
  }
  // Each ring channel gives two trees, its own in a row (topology/tree_channels.h).
  const auto count = static_cast<std::size_t>(channels) * 2;
  if (count >= e.trees->size()) return e.trees;
  if (e.trees_on.size() <= static_cast<std::size_t>(channels)) e.trees_on.resize(channels + 1);
  auto& cut = e.trees_on[static_cast<std::size_t>(channels)];
  if (cut == nullptr)
    cut = std::make_shared<const std::vector<sim::TreeChannel>>(e.trees->begin(), e.trees->begin() + count);
  return cut;
}

const std::vector<sim::RingChannel>& CommPlanner::ring_channels(const std::vector<int>& members) {
  return entry(members).channels;
}

sim::NcclMachine CommPlanner::nccl_machine(const std::vector<int>& members, sim::CollectiveOp op) {
  Entry& e = entry(members);
  if (!e.machine) {
    std::vector<topology::DeviceId> devices;
    for (const int r : members) devices.push_back(topology_.gpu(r));
    e.machine = describe_for_nccl(topology_, devices, e.channels, op, options_.pcie_only);
  }
  sim::NcclMachine m = *e.machine;
  m.op = op;  // the only part that depends on the call
  return m;
}

std::string CommPlanner::ll128_refusal(const std::vector<int>& members, sim::CollectiveOp op) {
  // All-to-all always runs Simple and a 2-GPU broadcast is a point-to-point copy: neither reads the
  // protocol (the collective command refuses a protocol for them on its own).
  if (options_.protocol != sim::Protocol::LL128 || members.size() < 2 || op == sim::CollectiveOp::AllToAll ||
      (op == sim::CollectiveOp::Broadcast && members.size() == 2))
    return {};
  if (nccl_machine(members, op).ll128) return {};
  std::vector<int> sorted = members;
  std::sort(sorted.begin(), sorted.end());
  return "NCCL enables LL128 only where the GPUs inside a machine talk over NVLink, and the " +
         std::string(sim::collective_op_name(op)) + " over GPUs " + topology::format_gpu_list(sorted) +
         " of " + topology_.name() + (options_.pcie_only ? " is kept off NVLink" : " crosses PCIe") +
         ", where NCCL runs Simple or LL; expected auto, simple or ll";
}

std::vector<sim::CollectiveChain::Part> CommPlanner::ring_phase(
    const std::vector<std::vector<int>>& groups, const std::vector<int>& members,
    sim::CollectiveOp op, sim::Bytes size, sim::Protocol* chosen,
    std::optional<sim::NcclEstimate>* nccl) {
  // groups hold indices into members; each group becomes one ring collective, its protocol NCCL's
  // choice for a ring of that group unless fixed.
  std::vector<sim::CollectiveChain::Part> parts;
  for (const auto& group : groups) {
    std::vector<int> global;
    for (const int i : group) global.push_back(members[static_cast<std::size_t>(i)]);
    sim::CollectiveChain::Part part;
    part.members.assign(group.begin(), group.end());
    part.op = op;
    part.size = size;
    part.channels = ring_channels(global);
    part.timing = sim::ProtocolTiming{};
    if (options_.protocol != sim::Protocol::Ideal && global.size() > 1) {
      const sim::NcclMachine m = nccl_machine(global, op);
      const sim::NcclChoice c = sim::nccl_choose(m, size, sim::NcclAlgorithm::Ring, options_.protocol);
      if (c.estimate.usable)
        part.channels.resize(std::min(part.channels.size(), static_cast<std::size_t>(c.estimate.channels)));
      part.timing = sim::nccl_timing(m, sim::NcclAlgorithm::Ring, c.protocol, size);
      if (chosen) *chosen = c.protocol;
      if (nccl) *nccl = c.estimate;
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

std::optional<CollectivePhases> CommPlanner::hierarchical(const CollectiveSpec& spec,
                                                          sim::Protocol* chosen,
                                                          std::optional<sim::NcclEstimate>* nccl) {
  // Members grouped by machine, in rank order; every machine must hold the same number G of them.
  const std::map<int, std::vector<int>> by_node = members_by_machine(topology_, spec.members);
  if (!unfit_grouping(by_node).empty()) return std::nullopt;
  const std::size_t g = by_node.begin()->second.size();
  std::vector<std::vector<int>> intra, inter(g);
  for (const auto& [node, idx] : by_node) {
    intra.push_back(idx);
    for (std::size_t j = 0; j < g; ++j) inter[j].push_back(idx[j]);
  }
  // After the reduce-scatter each GPU holds 1/G of the reduced data: that slice is all-reduced
  // across machines, then gathered back.
  const sim::Bytes slice = sim::Bytes::of((spec.size.count() + static_cast<std::int64_t>(g) - 1) /
                                          static_cast<std::int64_t>(g));
  CollectivePhases phases;
  phases.push_back(
      ring_phase(intra, spec.members, sim::CollectiveOp::ReduceScatter, spec.size, nullptr, nullptr));
  phases.push_back(ring_phase(inter, spec.members, sim::CollectiveOp::AllReduce, slice, chosen, nccl));
  phases.push_back(
      ring_phase(intra, spec.members, sim::CollectiveOp::AllGather, spec.size, nullptr, nullptr));
  return phases;
}

// Every pair's direct route (as point-to-point copies take), NCCL's Simple protocol timing.
CollectivePlan CommPlanner::all_to_all(const CollectiveSpec& spec) {
  Entry& e = entry(spec.members);
  const std::size_t n = spec.members.size();
  if (e.pairs == nullptr) {
    topology::RouteOptions ro;
    ro.avoid_nvlink = options_.pcie_only;
    sim::PairRoutes pairs(n, std::vector<std::vector<sim::LinkId>>(n));
    // Told GPU by GPU (each of its n − 1 routes): at 4,096 GPUs of DGX-1 the 16.7 M route searches
    // take minutes.
    sim::ticked_loop(
        progress_, "finding the all-to-all's routes", n, "GPUs",
        [&](std::size_t i) {
          for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            const sim::Route r =
                topology_.route(topology_.gpu(spec.members[i]), topology_.gpu(spec.members[j]), ro);
            pairs[i][j].assign(r.begin(), r.end());
          }
        },
        1);
    e.pairs = std::make_shared<const sim::PairRoutes>(std::move(pairs));
  }
  CollectivePlan plan;
  plan.ranks = static_cast<std::uint32_t>(n);
  plan.channels = static_cast<int>(e.channels.size());
  plan.pairs = e.pairs;
  sim::CollectiveChain::Part part;
  part.op = spec.op;
  part.size = spec.size;
  for (std::size_t i = 0; i < n; ++i) part.members.push_back(static_cast<std::uint32_t>(i));
  plan.phases = {{std::move(part)}};  // only its size and members
  if (options_.protocol != sim::Protocol::Ideal && n > 1) {
    const sim::NcclMachine m = nccl_machine(spec.members, spec.op);
    const sim::NcclChoice c = sim::nccl_choose(m, spec.size, sim::NcclAlgorithm::Ring, sim::Protocol::Simple);
    plan.protocol = c.protocol;
    plan.nccl = c.estimate;
    plan.timing = sim::nccl_timing(m, c.algorithm, c.protocol, spec.size);
  }
  return plan;
}

CollectivePlan CommPlanner::plan(const CollectiveSpec& spec) {
  if (spec.op == sim::CollectiveOp::AllToAll) return all_to_all(spec);
  const auto n = static_cast<int>(spec.members.size());
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
  CollectivePlan plan;
  plan.ranks = static_cast<std::uint32_t>(n);
  if (spec.op == sim::CollectiveOp::Broadcast && n == 2) {
    // Point to point (a model-parallel copy): the sender streams to the receiver along the direct
    // route at the links' line rate, as a peer-to-peer copy does; one stream of messages.
    sim::CollectiveChain::Part part;
    part.members = {0, 1};
    part.op = spec.op;
    part.size = spec.size;
    part.channels = {ring_channels(spec.members).front()};
    plan.channels = 1;
    plan.phases = {{std::move(part)}};
    return plan;
  }
  const bool all_reduce = spec.op == sim::CollectiveOp::AllReduce;
  if (all_reduce && options_.algorithm == AllReduceAlgorithm::Hierarchical) {
    if (auto phases = hierarchical(spec, &plan.protocol, &plan.nccl)) {
      plan.algorithm = AllReduceAlgorithm::Hierarchical;
      plan.channels = 0;
      for (const auto& phase : *phases)
        for (const auto& part : phase)
          plan.channels = std::max(plan.channels, static_cast<int>(part.channels.size()));
      plan.phases = std::move(*phases);
      return plan;
    }
  }
  Entry& e = entry(spec.members);
  int channels = static_cast<int>(e.channels.size());
  std::optional<sim::NcclAlgorithm> algorithm;
  if (options_.algorithm == AllReduceAlgorithm::Tree && all_reduce) algorithm = sim::NcclAlgorithm::Tree;
  if (options_.algorithm != AllReduceAlgorithm::Auto && !algorithm) algorithm = sim::NcclAlgorithm::Ring;
  sim::NcclAlgorithm run = algorithm.value_or(sim::NcclAlgorithm::Ring);
  if (options_.protocol != sim::Protocol::Ideal) {
    const sim::NcclMachine m = nccl_machine(spec.members, spec.op);
    const sim::NcclChoice c = sim::nccl_choose(m, spec.size, algorithm, options_.protocol);
    run = c.algorithm;
    plan.protocol = c.protocol;
    plan.nccl = c.estimate;
    plan.timing = sim::nccl_timing(m, c.algorithm, c.protocol, spec.size);
    if (c.estimate.usable) channels = std::min(channels, c.estimate.channels);
  }
  plan.channels = channels;
  sim::CollectiveChain::Part part;
  part.members.assign(all.begin(), all.end());
  part.op = spec.op;
  part.size = spec.size;
  if (run == sim::NcclAlgorithm::Tree) {
    plan.algorithm = AllReduceAlgorithm::Tree;
    plan.trees = trees(spec.members, channels);
  } else {
    plan.algorithm = AllReduceAlgorithm::Ring;
    part.channels.assign(e.channels.begin(), e.channels.begin() + channels);
  }
  plan.phases = {{std::move(part)}};  // for a tree: only its size and members
  return plan;
}

}  // namespace hybridsim::workloads

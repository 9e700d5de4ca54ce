#include "workloads/program/mapping.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "sim/error.h"

namespace hybridsim::workloads {

namespace {

void check_sizes(const topology::Topology& topology, int dp, int mp) {
  if (dp < 1 || mp < 1)
    throw InputError("dp and mp must be at least 1 (got dp = " + std::to_string(dp) +
                     ", mp = " + std::to_string(mp) + ")");
  const auto gpus = static_cast<long long>(topology.gpus().size());
  if (static_cast<long long>(dp) * mp > gpus)
    throw InputError("dp × mp = " + std::to_string(dp) + " × " + std::to_string(mp) + " = " +
                     std::to_string(static_cast<long long>(dp) * mp) + " GPUs, but the cluster " +
                     topology.name() + " has " + std::to_string(gpus));
}

// Direct bandwidth between two GPUs (0 when not directly linked), in B/s.
std::int64_t direct_bandwidth(const topology::Topology& t, topology::DeviceId a, topology::DeviceId b) {
  const auto l = t.link_between(a, b);
  return l ? t.links()[*l].bandwidth.bytes_per_second() : 0;
}

// Best partition of `gpus` into groups of `size`, maximizing the direct bandwidth summed over all
// pairs inside each group; exhaustive (the first GPU left always opens the next group), which is
// small for up to 8 GPUs a node. Returns groups in the order of their first GPU.
void search(const topology::Topology& t, const std::vector<topology::DeviceId>& gpus, int size,
            std::vector<bool>& used, std::vector<int>& current, std::int64_t score,
            std::int64_t& best_score, std::vector<int>& best) {
  const auto first = std::find(used.begin(), used.end(), false);
  if (first == used.end()) {
    if (score > best_score) {
      best_score = score;
      best = current;
    }
    return;
  }
  const auto start = static_cast<int>(first - used.begin());
  // Grow one group from `start`: choose size-1 more members among later GPUs, in increasing order.
  std::vector<int> group = {start};
  used[static_cast<std::size_t>(start)] = true;
  auto grow = [&](auto&& self, int from, std::int64_t group_score) -> void {
    if (static_cast<int>(group.size()) == size) {
      for (int g : group) current.push_back(g);
      search(t, gpus, size, used, current, score + group_score, best_score, best);
      current.resize(current.size() - static_cast<std::size_t>(size));
      return;
    }
    for (int c = from; c < static_cast<int>(gpus.size()); ++c) {
      if (used[static_cast<std::size_t>(c)]) continue;
      std::int64_t add = 0;
      for (int g : group)
        add += direct_bandwidth(t, gpus[static_cast<std::size_t>(g)], gpus[static_cast<std::size_t>(c)]);
      used[static_cast<std::size_t>(c)] = true;
      group.push_back(c);
      self(self, c + 1, group_score + add);
      group.pop_back();
      used[static_cast<std::size_t>(c)] = false;
    }
  };
  grow(grow, start + 1, 0);
  used[static_cast<std::size_t>(start)] = false;
}

}  // namespace

std::vector<int> WorkerMapping::dp_group(int k) const {
  std::vector<int> out;
  for (const auto& worker : gpu_rank) out.push_back(worker[static_cast<std::size_t>(k)]);
  return out;
}

WorkerMapping default_mapping(const topology::Topology& topology, int dp, int mp) {
  check_sizes(topology, dp, mp);
  // GPUs by node, in rank order.
  std::map<int, std::vector<topology::DeviceId>> by_node;
  for (const topology::DeviceId g : topology.gpus())
    by_node[topology.device(g).node.value_or(0)].push_back(g);
  std::vector<int> order;  // global GPU ranks, each worker's mp GPUs consecutive
  bool grouped = mp > 1;
  for (const auto& [node, gpus] : by_node)
    grouped = grouped && gpus.size() % static_cast<std::size_t>(mp) == 0 && gpus.size() <= 8;
  for (const auto& [node, gpus] : by_node) {
    std::vector<int> local(gpus.size());
    for (std::size_t i = 0; i < gpus.size(); ++i) local[i] = static_cast<int>(i);
    if (grouped) {
      std::vector<bool> used(gpus.size(), false);
      std::vector<int> current, best;
      std::int64_t best_score = -1;
      search(topology, gpus, mp, used, current, 0, best_score, best);
      local = best;
    }
    for (const int i : local) order.push_back(*topology.device(gpus[static_cast<std::size_t>(i)]).gpu_rank);
  }
  WorkerMapping m{dp, mp, {}, grouped ? "workers on the fastest-linked GPU groups of each machine"
                                      : "workers on consecutive GPUs"};
  const auto node_of_rank = [&](int rank) {
    return topology.device(topology.gpus()[static_cast<std::size_t>(rank)]).node.value_or(0);
  };
  int spanning = 0, first_spanning = -1;
  for (int w = 0; w < dp; ++w) {
    std::vector<int> ranks;
    for (int k = 0; k < mp; ++k) ranks.push_back(order[static_cast<std::size_t>(w * mp + k)]);
    // Where mp does not divide a machine's GPUs, consecutive workers straddle two machines: their
    // model-parallel transfers cross the network, which "a worker's GPUs on one machine" (the
    // documented default) does not let a reader expect. Said in the description, not hidden.
    std::set<int> nodes;
    for (const int r : ranks) nodes.insert(node_of_rank(r));
    if (nodes.size() > 1 && spanning++ == 0) first_spanning = w;
    m.gpu_rank.push_back(std::move(ranks));
  }
  if (spanning > 0)
    m.description += "; " + std::to_string(spanning) + (spanning == 1 ? " worker spans" : " workers span") +
                     " machines (worker " + std::to_string(first_spanning) + " first: mp " +
                     std::to_string(mp) +
                     " does not divide a machine's GPUs), their model-parallel transfers over the network";
  return m;
}

WorkerMapping custom_mapping(const topology::Topology& topology, int dp, int mp,
                             std::vector<std::vector<int>> gpu_rank) {
  check_sizes(topology, dp, mp);
  if (static_cast<int>(gpu_rank.size()) != dp)
    throw InputError("mapping lists " + std::to_string(gpu_rank.size()) + " workers, expected dp = " +
                     std::to_string(dp));
  std::set<int> seen;
  for (std::size_t w = 0; w < gpu_rank.size(); ++w) {
    if (static_cast<int>(gpu_rank[w].size()) != mp)
      throw InputError("mapping worker " + std::to_string(w) + " lists " +
                       std::to_string(gpu_rank[w].size()) + " GPUs, expected mp = " + std::to_string(mp));
    for (const int g : gpu_rank[w]) {
      if (g < 0 || g >= static_cast<int>(topology.gpus().size()))
        throw InputError("mapping worker " + std::to_string(w) + " names GPU " + std::to_string(g) +
                         ", outside 0.." + std::to_string(topology.gpus().size() - 1));
      if (!seen.insert(g).second)
        throw InputError("mapping uses GPU " + std::to_string(g) + " twice");
    }
  }
  return WorkerMapping{dp, mp, std::move(gpu_rank), "custom mapping"};
}

}  // namespace hybridsim::workloads

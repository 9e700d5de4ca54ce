#include "topology/tree_channels.h"

#include <string>
#include <unordered_map>

#include "sim/error.h"

namespace hybridsim::topology {
namespace {

int first_tree_parent(int n, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while ((bit & rank) == 0) bit <<= 1;  // the lowest set bit: rank's level above the leaves
  const int up = (rank ^ bit) | (bit << 1);
  return up < n ? up : rank ^ bit;
}

}  // namespace

int binary_tree_parent(int n, int rank, bool second) {
  if (!second) return first_tree_parent(n, rank);
  // The first tree's inner machines are the even ones; shifted by one they are odd, so only
  // machine 0 (with odd n) can be inner in both.
  const int p = first_tree_parent(n, (rank + n - 1) % n);
  return p < 0 ? -1 : (p + 1) % n;
}

std::vector<sim::TreeChannel> to_tree_channels(const Topology& t, const RingPlan& plan,
                                               std::span<const DeviceId> communicator,
                                               sim::WorkProgress* progress) {
  std::unordered_map<DeviceId, std::uint32_t> position;
  for (std::uint32_t i = 0; i < communicator.size(); ++i) position.emplace(communicator[i], i);
  const auto n = static_cast<std::uint32_t>(communicator.size());
  std::vector<sim::TreeChannel> trees;
  // Every position but a tree's root is linked to its parent, in each ring's two trees.
  const std::uint64_t positions = plan.rings.size() * 2 * (n > 0 ? n - 1 : 0);
  std::uint64_t linked = 0;
  sim::work_tick(progress, "building the trees", 0, positions, "tree positions");
  for (std::size_t c = 0; c < plan.rings.size(); ++c) {
    // The ring's runs of GPUs of one machine, in the order it visits the machines.
    std::vector<std::vector<std::uint32_t>> segments;
    int last_node = -2;
    for (const DeviceId gpu : plan.rings[c]) {
      const auto it = position.find(gpu);
      if (it == position.end())
        throw InputError("ring channel " + std::to_string(c) + " holds device " +
                         std::to_string(gpu.value) + ", which is not in the communicator");
      const int node = t.device(gpu).node.value_or(-1);
      if (node != last_node || segments.empty()) segments.emplace_back();
      last_node = node;
      segments.back().push_back(it->second);
    }
    const int machines = static_cast<int>(segments.size());
    for (const bool second : {false, true}) {
      sim::TreeChannel tree;
      tree.parent.assign(n, -1);
      tree.up.assign(n, {});
      tree.children.assign(n, {});
      tree.down.assign(n, {});
      auto link = [&](std::uint32_t child, std::uint32_t parent) {
        tree.parent[child] = static_cast<std::int32_t>(parent);
        const sim::Route up = t.route(communicator[child], communicator[parent], plan.route_options);
        const sim::Route down = t.route(communicator[parent], communicator[child], plan.route_options);
        tree.up[child].assign(up.begin(), up.end());
        tree.children[parent].push_back(child);
        tree.down[parent].emplace_back(down.begin(), down.end());
        sim::work_tick(progress, "building the trees", ++linked, positions, "tree positions");
      };
      for (int k = 0; k < machines; ++k) {
        const auto& seg = segments[static_cast<std::size_t>(k)];
        for (std::size_t i = 1; i < seg.size(); ++i) link(seg[i], seg[i - 1]);
        const int up = binary_tree_parent(machines, k, second);
        if (up >= 0) link(seg.front(), segments[static_cast<std::size_t>(up)].front());
      }
      trees.push_back(std::move(tree));
    }
  }
  return trees;
}

}  // namespace hybridsim::topology

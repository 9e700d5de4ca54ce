// NCCL's double binary tree for sim::TreeCollective, built on the rings of a RingPlan: inside each
// machine a chain along the ring's segment there (its head is the GPU the ring enters by, next to
// the channel's NIC), across machines two complementary binary trees of the machines' heads (a
// machine that is inside one tree is a leaf of the other). Each ring channel gives two tree
// channels, one per tree, each carrying half of the channel's data over the same chain and NIC.
//   auto rings = find_rings(topo, gpus);
//   auto trees = to_tree_channels(topo, rings, gpus);   // 2 × rings.rings.size() trees
#pragma once
#include <span>
#include <vector>

#include "sim/tree_collective.h"
#include "sim/work_progress.h"
#include "topology/rings.h"

namespace hybridsim::topology {

// The parent of machine `rank` (0..n-1) in the first binary tree (machine 0 is its root, with one
// child; the inner machines are the even ones), or -1; `second` gives the other tree: the first
// shifted by one, so that its inner machines are the first tree's leaves (with odd n, machine 0 is
// inner in both). Depth about log2 n.
int binary_tree_parent(int n, int rank, bool second = false);

// Throws InputError when a ring holds a GPU that is not in `communicator`. `progress` (null: nobody)
// is told as the positions are linked to their parents, two routes each: at 65,536 GPUs of DGX-1 the
// trees of 4 rings took 10 to 20 s under load without a line.
std::vector<sim::TreeChannel> to_tree_channels(const Topology& topology, const RingPlan& plan,
                                               std::span<const DeviceId> communicator,
                                               sim::WorkProgress* progress = nullptr);

}  // namespace hybridsim::topology

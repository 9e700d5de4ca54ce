#include "sim/fast/fast_path.h"

#include "sim/fast/folded_ring.h"
#include "sim/fast/folded_tree.h"
#include "sim/ring_collective.h"

namespace hybridsim::sim {

std::unique_ptr<Collective> make_ring_collective(Network& network, CollectiveOp op, std::uint32_t ranks,
                                                 std::vector<RingChannel> channels, Bytes size,
                                                 const CollectiveConfig& config) {
  if (const char* why = FoldedRing::plan_refusal(op, ranks, config); why != nullptr) {
    auto ring = std::make_unique<RingCollective>(network, op, ranks, std::move(channels), size, config);
    ring->explain(why);
    return ring;
  }
  return std::make_unique<FoldedRing>(network, op, ranks, std::move(channels), size, config);
}

std::unique_ptr<Collective> make_tree_collective(Network& network, std::uint32_t ranks,
                                                 std::shared_ptr<const std::vector<TreeChannel>> trees,
                                                 Bytes size, const CollectiveConfig& config) {
  if (config.fast_path == FastPath::Off) {
    auto tree = std::make_unique<TreeCollective>(network, ranks, std::move(trees), size, config);
    tree->explain("fast path off");
    return tree;
  }
  return std::make_unique<FoldedTree>(network, ranks, std::move(trees), size, config);
}

}  // namespace hybridsim::sim

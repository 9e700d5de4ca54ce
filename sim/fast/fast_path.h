// The fast path's factory (sim/README.md, "The fast path"): the one place that chooses, from the
// plan and CollectiveConfig::fast_path, which object simulates a collective. A ring that may fold
// becomes a FoldedRing (sim/fast/folded_ring.h), which decides at its first join whether it folds or
// runs its plain RingCollective, and says why; one that never may is a plain RingCollective with
// that reason. Trees likewise: a FoldedTree (sim/fast/folded_tree.h) or a plain TreeCollective.
// Rings that share links are embedded together by embed_coupled_rings (sim/fast/ring_embedding.h)
// over the set this factory made, before any starts.
//   std::unique_ptr<Collective> ring = make_ring_collective(network, op, n, channels, size, config);
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/collective.h"
#include "sim/network.h"
#include "sim/tree_collective.h"

namespace hybridsim::sim {

std::unique_ptr<Collective> make_ring_collective(Network& network, CollectiveOp op, std::uint32_t ranks,
                                                 std::vector<RingChannel> channels, Bytes size,
                                                 const CollectiveConfig& config);
std::unique_ptr<Collective> make_tree_collective(Network& network, std::uint32_t ranks,
                                                 std::shared_ptr<const std::vector<TreeChannel>> trees,
                                                 Bytes size, const CollectiveConfig& config);

}  // namespace hybridsim::sim

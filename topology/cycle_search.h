// Internal to topology/: finds edge-disjoint Hamiltonian cycles in a small undirected multigraph
// given as a symmetric capacity matrix (cap[u * n + v] = parallel links between u and v). Used by
// the ring search; vertices are local indices 0..n-1, cycles start at 0.
//   auto cycles = detail::find_cycle_decomposition(8, dgx1_caps, 16, 1'000'000);  // 3 cycles
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace hybridsim::topology::detail {

using Cycle = std::vector<int>;
// Scores a complete set of cycles (higher is better), e.g. how evenly it spreads over NICs.
using CycleSetScore = std::function<int(const std::vector<Cycle>&)>;

// The largest set (at most max_cycles) of Hamiltonian cycles of the n-vertex multigraph (n >= 3)
// that together use each pair (u, v) at most cap times, searched exhaustively by backtracking
// within `budget` DFS steps per attempt (a greedy set is the fallback). With a `score`, keeps the
// best-scoring set of that size found within the budget, stopping early at `perfect_score`.
// Deterministic.
std::vector<Cycle> find_cycle_decomposition(int n, const std::vector<int>& cap, int max_cycles,
                                            std::int64_t budget, const CycleSetScore& score = {},
                                            int perfect_score = 0);

}  // namespace hybridsim::topology::detail

// Internal to topology/: finds edge-disjoint Hamiltonian cycles in a small undirected multigraph
// given as adjacency lists (`Multigraph`: per vertex its neighbours and the parallel links to each).
// Used by the ring search; vertices are local indices 0..n-1, cycles start at 0. The graph is kept
// sparse, so a machine of N GPUs in a ring (the ideal ring, up to 65,536) costs O(N), not O(N²).
//   auto cycles = detail::find_cycle_decomposition(dgx1_graph, 16, 1'000'000);  // 3 cycles
#pragma once
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace hybridsim::topology::detail {

using Cycle = std::vector<int>;
// Scores a complete set of cycles (higher is better), e.g. how evenly it spreads over NICs.
using CycleSetScore = std::function<int(const std::vector<Cycle>&)>;

// adj[u]: (v, parallel links between u and v) for each neighbour v of u, by ascending v, no zero
// counts. The search takes and returns a pair's links in both directions, so the caller keeps it
// symmetric (v lists u with the same count).
struct Multigraph {
  std::vector<std::vector<std::pair<int, int>>> adj;

  int size() const { return static_cast<int>(adj.size()); }
  // Sets u's count towards v, replacing what was there; 0 removes the entry.
  void set(int u, int v, int links);
  auto operator<=>(const Multigraph&) const = default;
};

// The largest set (at most max_cycles) of Hamiltonian cycles of the multigraph (n >= 3) that
// together use each pair (u, v) at most as often as it has links, searched exhaustively by
// backtracking within `budget` DFS steps per attempt (a greedy set is the fallback). With a `score`,
// keeps the best-scoring set of that size found within the budget, stopping early at
// `perfect_score`. Deterministic: neighbours are tried in ascending order.
std::vector<Cycle> find_cycle_decomposition(const Multigraph& graph, int max_cycles, std::int64_t budget,
                                            const CycleSetScore& score = {}, int perfect_score = 0);

}  // namespace hybridsim::topology::detail

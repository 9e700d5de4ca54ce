// Test and benchmark helper: one tree channel over n ranks shaped as a heap (rank r's parent is
// (r - 1) / 2), each edge a link of its own each way, for the collectives' own tests and benchmarks
// where the tree's shape, not NCCL's, is what is measured (sim_budget_test.cpp, bench_collective.cpp).
#pragma once
#include <cstdint>

#include "sim/link.h"
#include "sim/tree_collective.h"

namespace hybridsim::testing {

inline sim::TreeChannel binary_tree_channel(sim::LinkTable& links, std::uint32_t n, const sim::LinkSpec& up,
                                            const sim::LinkSpec& down) {
  sim::TreeChannel t;
  t.parent.assign(n, -1);
  t.up.resize(n);
  t.children.resize(n);
  t.down.resize(n);
  for (std::uint32_t r = 1; r < n; ++r) {
    const std::uint32_t p = (r - 1) / 2;
    t.parent[r] = static_cast<std::int32_t>(p);
    t.up[r] = {links.add(up)};
    t.children[p].push_back(r);
    t.down[p].push_back({links.add(down)});
  }
  return t;
}

}  // namespace hybridsim::testing

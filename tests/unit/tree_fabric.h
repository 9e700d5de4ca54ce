// Test helper: channels of NCCL's double binary trees over a switch, for the tree fold tests
// (sim_tree_fold_test.cpp) and the fast path's contract test (sim_fast_path_contract_test.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/fast/tree_model.h"
#include "sim/link.h"
#include "sim/tree_collective.h"
#include "topology/tree_channels.h"

namespace hybridsim::testing {

// `groups` ring channels over n ranks, each run as NCCL's two binary trees (topology's
// binary_tree_parent) that share the channel's links: every rank has its own link into and out of
// a switch per channel, so the route a → b in channel g is out(a, g), in(b, g). Channel g's links
// run at 12.5 GB/s × (1 + g mod `period`) with 500 ns latency; `relabel` numbers channel g's ranks
// from r to (r + g) mod n, so the groups' trees sit on different ranks.
struct TreeFabric {
  sim::LinkTable links;
  std::vector<sim::TreeChannel> trees;
  std::vector<std::vector<sim::LinkId>> out, in;  // [g][rank]
};

inline TreeFabric make_trees(std::uint32_t n, std::uint32_t groups, std::uint32_t period = 1,
                             bool relabel = false) {
  TreeFabric f;
  for (std::uint32_t g = 0; g < groups; ++g) {
    const sim::Bandwidth bw = sim::Bandwidth::bytes_per_second(12'500'000'000LL * (1 + g % period));
    f.out.emplace_back();
    f.in.emplace_back();
    for (std::uint32_t r = 0; r < n; ++r) {
      f.out[g].push_back(f.links.add({sim::LinkKind::InfiniBand, bw, sim::Time::ns(500), "out"}));
      f.in[g].push_back(f.links.add({sim::LinkKind::InfiniBand, bw, sim::Time::ns(500), "in"}));
    }
    for (const bool second : {false, true}) {
      sim::TreeChannel t;
      t.parent.assign(n, -1);
      t.up.assign(n, {});
      t.children.assign(n, {});
      t.down.assign(n, {});
      const auto rank = [&](int k) {
        return static_cast<std::uint32_t>(relabel ? (k + static_cast<int>(g)) % static_cast<int>(n) : k);
      };
      for (int k = 0; k < static_cast<int>(n); ++k) {
        const int p = hybridsim::topology::binary_tree_parent(static_cast<int>(n), k, second);
        if (p < 0) continue;
        const std::uint32_t child = rank(k), parent = rank(p);
        t.parent[child] = static_cast<std::int32_t>(parent);
        t.up[child] = {f.out[g][child], f.in[g][parent]};
        t.children[parent].push_back(child);
        t.down[parent].push_back({f.out[g][parent], f.in[g][child]});
      }
      f.trees.push_back(std::move(t));
    }
  }
  return f;
}

// A model run of both channels of make_trees(16, 2)'s first group, `bytes` each, every rank joining
// at 7 us in rank order (64 KiB messages, 2 us base latency).
inline sim::TreeModelInput tree_model_input(const TreeFabric& f,
                                            std::shared_ptr<const std::vector<sim::TreeChannel>> plans,
                                            std::int64_t bytes) {
  sim::TreeModelInput in;
  in.links = &f.links;
  in.ranks = 16;
  in.plans = std::move(plans);
  in.config.message_size = sim::Bytes::kib(64);
  in.config.timing.base_latency = sim::Time::us(2);
  in.segment = {16, {bytes, bytes}, {0, 1}};
  for (std::uint32_t r = 0; r < 16; ++r) in.join_order.push_back(r);
  in.joined = sim::Time::us(7);
  return in;
}

}  // namespace hybridsim::testing

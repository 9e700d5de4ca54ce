// The channel groups of a FoldedTree and how one corresponds to another (sim/fast/folded_tree.h;
// sim/README.md, "Trees"): which tree channels share links, whether two groups are alike position by
// position (routes, delays, bytes, links shared the same way), and whether their leaves sent alike.
#include <algorithm>
#include <numeric>
#include <utility>

#include "sim/fast/folded_tree.h"

namespace hybridsim::sim {

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;

}  // namespace

std::vector<std::vector<std::uint32_t>> FoldedTree::channel_groups() const {
  // Union-find over channels: two channels that use one link are in one group.
  const auto count = tree_->channel_count();
  std::vector<std::uint32_t> root(count);
  std::iota(root.begin(), root.end(), 0u);
  auto find = [&](std::uint32_t c) {
    while (root[c] != c) c = root[c] = root[root[c]];
    return c;
  };
  std::vector<std::uint32_t> user(network_.links().size(), kNone);
  auto visit = [&](std::uint32_t c, const std::vector<LinkId>& route) {
    for (const LinkId l : route) {
      if (user[l] == kNone)
        user[l] = c;
      else
        root[find(c)] = find(user[l]);
    }
  };
  for (std::uint32_t c = 0; c < count; ++c)
    for (std::uint32_t r = 0; r < n_; ++r) {
      setup_tick(r);
      visit(c, tree_->channel_plan(c).up[r]);
      for (const auto& route : tree_->channel_plan(c).down[r]) visit(c, route);
    }
  std::vector<std::vector<std::uint32_t>> groups;
  std::vector<std::uint32_t> index(count, kNone);
  for (std::uint32_t c = 0; c < count; ++c) {
    const std::uint32_t g = find(c);
    if (index[g] == kNone) {
      index[g] = static_cast<std::uint32_t>(groups.size());
      groups.emplace_back();
    }
    groups[index[g]].push_back(c);  // channels in index order, as a rank's start visits them
  }
  return groups;
}

bool FoldedTree::correspond(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& group,
                            Correspondence& map) const {
  if (a.size() != group.size()) return false;
  // b's channels may stand for a's in any order (a machine's rings need not be numbered alike).
  auto in_order = [&]() -> bool {
    const std::vector<std::uint32_t>& b = map.order;
    map.position.assign(a.size(), std::vector<std::uint32_t>(n_, kNone));
    const LinkTable& links = network_.links();
    constexpr LinkId kNoLink = Correspondence::kNoLink;
    if (map.link.size() != links.size()) {
      map.link.assign(links.size(), kNoLink);
      map.back.assign(links.size(), kNoLink);
      map.linked.clear();
    }
    for (const LinkId l : map.linked) map.back[std::exchange(map.link[l], kNoLink)] = kNoLink;
    map.linked.clear();
    auto same_route = [&](const std::vector<LinkId>& x, const std::vector<LinkId>& y) {
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const LinkSpec& p = links[x[i]];
        const LinkSpec& q = links[y[i]];
        if (p.kind != q.kind || p.bandwidth != q.bandwidth || p.latency != q.latency) return false;
        // The same links shared the same way: the map must stay one to one.
        LinkId& to = map.link[x[i]];
        LinkId& from = map.back[y[i]];
        if (to == kNoLink && from == kNoLink) {
          to = y[i];
          from = x[i];
          map.linked.push_back(x[i]);
        } else if (to != y[i] || from != x[i]) {
          return false;
        }
      }
      return true;
    };
    for (std::size_t i = 0; i < a.size(); ++i) {
      const TreeChannel& p = tree_->channel_plan(a[i]);
      const TreeChannel& q = tree_->channel_plan(b[i]);
      if (tree_->channel_bytes(a[i]) != tree_->channel_bytes(b[i])) return false;
      std::vector<std::pair<std::uint32_t, std::uint32_t>> todo;
      for (std::uint32_t r = 0; r < n_ && todo.empty(); ++r)
        if (p.parent[r] < 0) todo.emplace_back(r, kNone);
      for (std::uint32_t r = 0; r < n_ && todo.back().second == kNone; ++r)
        if (q.parent[r] < 0) todo.back().second = r;
      map.position[i][todo.back().first] = todo.back().second;
      // Walk both trees from their roots, child slot by child slot.
      for (std::uint64_t walked = 0; !todo.empty(); ++walked) {
        setup_tick(walked);
        const auto [x, y] = todo.back();
        todo.pop_back();
        const auto& kx = p.children[x];
        const auto& ky = q.children[y];
        if (kx.size() != ky.size()) return false;
        for (std::size_t k = 0; k < kx.size(); ++k) {
          // Routes alike hop by hop have equal protocol delays (ProtocolTiming::step_delay reads
          // only their links' kinds and latencies, under the tree's one timing), so the delays are
          // not compared: computed from the routes of a tree not yet laid out, that was 131 M of
          // the 1,024-GPU jittered step's 10,698 M instructions (tests/bench/MEASUREMENTS.md).
          if (!same_route(p.down[x][k], q.down[y][k]) || !same_route(p.up[kx[k]], q.up[ky[k]])) return false;
          map.position[i][kx[k]] = ky[k];
          todo.emplace_back(kx[k], ky[k]);
        }
      }
    }
    return true;
  };
  map.order = group;
  std::sort(map.order.begin(), map.order.end());
  do {
    if (in_order() && (map.leaves_joined == nullptr || leaves_send_alike(a, map.order, map))) return true;
  } while (std::next_permutation(map.order.begin(), map.order.end()));
  return false;
}

bool FoldedTree::leaves_send_alike(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b,
                                   const Correspondence& map) const {
  // Every rank joined at one time; the order in which their leaves queued their messages is the
  // order in which those messages meet on shared links. In b's terms both must be the same.
  // A rank's start visits channels in index order: a's are sorted, b's may be matched in another.
  std::vector<std::size_t> b_order(b.size());
  std::iota(b_order.begin(), b_order.end(), std::size_t{0});
  std::sort(b_order.begin(), b_order.end(), [&](std::size_t x, std::size_t y) { return b[x] < b[y]; });
  std::vector<std::uint64_t> sa, sb;
  for (const std::uint32_t r : *map.leaves_joined) {
    setup_tick(r);
    for (std::size_t k = 0; k < a.size(); ++k) {
      if (is_leaf(tree_->channel_plan(a[k]), r)) sa.push_back((std::uint64_t{k} << 32) | map.position[k][r]);
      const std::size_t i = b_order[k];
      if (is_leaf(tree_->channel_plan(b[i]), r)) sb.push_back((std::uint64_t{i} << 32) | r);
    }
  }
  return sa == sb;
}

}  // namespace hybridsim::sim

#include "workloads/comm/collective_load.h"

#include <algorithm>
#include <vector>

namespace hybridsim::workloads {

namespace {

// Memory traffic per byte a rank receives: see collective_load.h.
constexpr std::int64_t kNcclPassesPerByte = 3;
constexpr std::int64_t kCopyPassesPerByte = 1;

// For a part over few links (a machine's group): sorted copies of its links, no table of every link.
sim::Bandwidth sorted_receive_rate(const sim::CollectiveChain::Part& part, const sim::LinkTable& links) {
  // Each channel's links, once each, channel after channel; then, sorted, how many channels use
  // each link.
  std::vector<sim::LinkId> used;
  std::vector<std::size_t> start;
  for (const sim::RingChannel& ch : part.channels) {
    start.push_back(used.size());
    for (const auto& route : ch.routes) used.insert(used.end(), route.begin(), route.end());
    const auto first = used.begin() + static_cast<std::ptrdiff_t>(start.back());
    std::sort(first, used.end());
    used.erase(std::unique(first, used.end()), used.end());
  }
  start.push_back(used.size());
  std::vector<sim::LinkId> sorted = used;
  std::sort(sorted.begin(), sorted.end());
  const auto crossings = [&](sim::LinkId l) {  // channels of the part using link l
    const auto [lo, hi] = std::equal_range(sorted.begin(), sorted.end(), l);
    return static_cast<std::int64_t>(hi - lo);
  };
  std::int64_t total = 0;
  for (std::size_t c = 0; c + 1 < start.size(); ++c) {
    std::int64_t rate = -1;
    for (std::size_t i = start[c]; i < start[c + 1]; ++i) {
      const std::int64_t share = links[used[i]].bandwidth.bytes_per_second() / crossings(used[i]);
      rate = rate < 0 ? share : std::min(rate, share);
    }
    if (rate > 0) total += rate;
  }
  return sim::Bandwidth::bytes_per_second(total);
}

// For a part whose routes cross a good share of the links (a ring over every GPU of the cluster):
// each channel's links once each (the channel that last claimed a link marks it) and how many
// channels use each link, in one pass over the routes, without a sort of them (which took seconds of
// a 65,536-GPU step's set-up).
sim::Bandwidth marked_receive_rate(const sim::CollectiveChain::Part& part, const sim::LinkTable& links) {
  constexpr auto kNone = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> last(links.size(), kNone);
  std::vector<std::int64_t> crossings(links.size(), 0);
  std::vector<sim::LinkId> used;
  std::vector<std::size_t> start;
  for (std::uint32_t c = 0; c < part.channels.size(); ++c) {
    start.push_back(used.size());
    for (const auto& route : part.channels[c].routes)
      for (const sim::LinkId l : route)
        if (last[l] != c) {
          last[l] = c;
          ++crossings[l];
          used.push_back(l);
        }
  }
  start.push_back(used.size());
  std::int64_t total = 0;
  for (std::size_t c = 0; c + 1 < start.size(); ++c) {
    std::int64_t rate = -1;
    for (std::size_t i = start[c]; i < start[c + 1]; ++i) {
      const std::int64_t share = links[used[i]].bandwidth.bytes_per_second() / crossings[used[i]];
      rate = rate < 0 ? share : std::min(rate, share);
    }
    if (rate > 0) total += rate;
  }
  return sim::Bandwidth::bytes_per_second(total);
}

}  // namespace

sim::Bandwidth part_receive_rate(const sim::CollectiveChain::Part& part, const sim::LinkTable& links) {
  // Both give the same rate; the cheaper one by how many route links the part holds of all links.
  std::size_t crossed = 0;
  for (const sim::RingChannel& ch : part.channels)
    for (const auto& route : ch.routes) crossed += route.size();
  return 8 * crossed < links.size() ? sorted_receive_rate(part, links) : marked_receive_rate(part, links);
}

namespace {
// A tree channel's receive rate at one rank: the slowest link of the routes it uses, each shared
// by the tree channels crossing it; summed over the channels.
sim::Bandwidth tree_receive_rate(const std::vector<sim::TreeChannel>& trees, const sim::LinkTable& links) {
  auto each_link = [](const sim::TreeChannel& t, auto&& f) {
    for (const auto& route : t.up) for (const sim::LinkId l : route) f(l);
    for (const auto& routes : t.down)
      for (const auto& route : routes) for (const sim::LinkId l : route) f(l);
  };
  // Per link: the tree channels using it, each counted once (the channel that last counted a link
  // marks it). A sort of each channel's links, then unique, counted the same: 221 M instructions,
  // 2.1% of the 1,024-GPU jittered step's benchmark (tests/bench/MEASUREMENTS.md, perf of 10:55).
  constexpr auto kNone = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> last(links.size(), kNone);
  std::vector<std::int64_t> crossings(links.size(), 0);
  for (std::uint32_t c = 0; c < trees.size(); ++c)
    each_link(trees[c], [&](sim::LinkId l) {
      if (last[l] == c) return;
      last[l] = c;
      ++crossings[l];
    });
  std::int64_t total = 0;
  for (const sim::TreeChannel& t : trees) {
    std::int64_t rate = -1;
    each_link(t, [&](sim::LinkId l) {
      const std::int64_t share = links[l].bandwidth.bytes_per_second() / crossings[l];
      rate = rate < 0 ? share : std::min(rate, share);
    });
    if (rate > 0) total += rate;
  }
  return sim::Bandwidth::bytes_per_second(total);
}
}  // namespace

sim::CollectiveLoad collective_load(const CollectiveSpec& spec, const CollectivePlan& plan,
                                    const sim::LinkTable& links) {
  const bool copy =
      spec.role == CollectiveRole::Activation || spec.role == CollectiveRole::ActivationGradient;
  std::size_t channels = 0;
  std::int64_t rate = 0;
  for (const auto& phase : plan.phases)
    for (const sim::CollectiveChain::Part& part : phase) {
      channels = std::max(channels, part.channels.size());
      rate = std::max(rate, part_receive_rate(part, links).bytes_per_second());
    }
  if (plan.trees != nullptr) rate = std::max(rate, tree_receive_rate(*plan.trees, links).bytes_per_second());
  // NCCL runs one CTA per channel: a tree's two trees share their channel's.
  if (plan.channels > 0) channels = static_cast<std::size_t>(plan.channels);
  sim::CollectiveLoad load;
  load.sms = copy ? 0 : static_cast<std::uint32_t>(channels);
  load.memory_traffic =
      sim::Bandwidth::bytes_per_second(rate * (copy ? kCopyPassesPerByte : kNcclPassesPerByte));
  return load;
}

}  // namespace hybridsim::workloads

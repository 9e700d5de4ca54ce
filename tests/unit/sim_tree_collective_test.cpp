// sim::TreeCollective on small hand-made trees of Generic links (10 GB/s, 1 µs: 1000 B take 100 ns
// on a link and arrive 1 µs after they left it), every time derived by hand; and the double binary
// tree that topology/ builds over the machines of a cluster.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <string_view>
#include <vector>

#include "sim/error.h"
#include "sim/tree_collective.h"
#include "topology/cluster.h"
#include "topology/tree_channels.h"

using namespace hybridsim;
using namespace hybridsim::sim;

namespace {

// Ranks 0..n-1 with a directed link for each parent → child and child → parent pair.
struct Tree {
  LinkTable links;
  TreeChannel channel;
  explicit Tree(const std::vector<std::int32_t>& parent) {
    const auto n = parent.size();
    channel.parent = parent;
    channel.up.resize(n);
    channel.children.resize(n);
    channel.down.resize(n);
    for (std::uint32_t r = 0; r < n; ++r) {
      if (parent[r] < 0) continue;
      const auto p = static_cast<std::uint32_t>(parent[r]);
      channel.up[r] = {links.add({LinkKind::Generic, Bandwidth::gb_per_second(10), Time::us(1), "up"})};
      channel.children[p].push_back(r);
      channel.down[p].push_back(
          {links.add({LinkKind::Generic, Bandwidth::gb_per_second(10), Time::us(1), "down"})});
    }
  }
  Time run(Bytes size, CollectiveConfig config, std::uint64_t* messages = nullptr) {
    EventQueue queue;
    Network network(queue, links);
    TreeCollective coll(network, static_cast<std::uint32_t>(channel.parent.size()), {channel}, size, config);
    coll.start_all();
    queue.run();
    CHECK(coll.is_done());
    if (messages) *messages = coll.messages_sent();
    return coll.finish_time();
  }
};

}  // namespace

TEST_CASE("tree all-reduce: a root with two leaves, message by message") {
  Tree tree({-1, 0, 0});
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  // Height 1: at least 2 × 1 messages, so 2000 B go as 2 messages of 1000 B. Each leaf sends both
  // at once on its own link: they arrive at 1.1 and 1.2 µs. Message 0 is complete at the root at
  // 1.1 µs and goes down (both children, own links) to arrive at 2.2 µs; message 1 at 1.2 µs,
  // arriving at 2.3 µs.
  std::uint64_t messages = 0;
  CHECK(tree.run(Bytes::of(2000), config, &messages) == Time::ns(2300));
  CHECK(messages == 8);  // 2 edges × 2 messages × up and down
}

TEST_CASE("tree all-reduce: a rank of two children after a rank of one (its slots padded to a line)") {
  // 0 ← 1 ← {2, 3}: rank 0's one child takes slot 0, so rank 1's two children start at slot 2,
  // after a padding slot. Height 2: at least 4 messages, so 4000 B go as 4 of 1000 B. The leaves
  // send all four at once on their own links: message j leaves at (j+1)·100 ns and reaches rank 1
  // at 1100 + 100j ns from both; rank 1 sends it up, reaching the root at 2200 + 100j; the root
  // (one child) sends it back down at once, reaching rank 1 at 3300 + 100j, which forwards it to
  // both leaves at 4400 + 100j: the last, message 3, at 4.7 µs.
  Tree tree({-1, 0, 1, 1});
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  std::uint64_t messages = 0;
  CHECK(tree.run(Bytes::of(4000), config, &messages) == Time::ns(4700));
  CHECK(messages == 24);  // 3 edges × 4 messages × up and down
  EventQueue queue;
  Network network(queue, tree.links);
  TreeCollective coll(network, 4, {tree.channel}, Bytes::of(4000), config);
  coll.start_all();
  queue.run();
  // Laid out: each leaf is found at its place among rank 1's children, and a rank finishes when
  // its last message has reached it and its last sent has been delivered: the root's message 3
  // reaches rank 1 at 3.6 µs, rank 1's reaches the leaves at 4.7 µs.
  CHECK(coll.slot_in_parent(0, 2) == 0);
  CHECK(coll.slot_in_parent(0, 3) == 1);
  // Rank 1's two slots (32 bytes each) fill one 64-byte line: the first starts a line (the block
  // starts on one, and the padding slot moves it from slot 1, mid-line, to slot 2), the second is
  // the next 32 bytes. Unpadded, the first would start 32 bytes into the block's first line.
  const auto first = reinterpret_cast<std::uintptr_t>(coll.child_slot_address(0, 1, 0));
  const auto second = reinterpret_cast<std::uintptr_t>(coll.child_slot_address(0, 1, 1));
  REQUIRE(first != 0);
  CHECK(first % 64 == 0);
  CHECK(second == first + 32);
  CHECK(first / 64 == (second + 31) / 64);
  CHECK(coll.rank_finish_time(0) == Time::ns(3600));
  CHECK(coll.rank_finish_time(1) == Time::ns(4700));
  CHECK(coll.rank_finish_time(2) == Time::ns(4700));
  CHECK(coll.rank_finish_time(3) == Time::ns(4700));
}

TEST_CASE("tree all-reduce: a rank's finish so far, before it is done") {
  // The root with two leaves above: message 0 reaches the leaves at 2.2 µs, message 1 at 2.3 µs;
  // the root completed message 1 at 1.2 µs. At 2.25 µs no rank is done, and each reports the
  // latest it received the result or reduced (its channel's share, read across its channels).
  Tree tree({-1, 0, 0});
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  EventQueue queue;
  Network network(queue, tree.links);
  TreeCollective coll(network, 3, {tree.channel}, Bytes::of(2000), config);
  coll.start_all();
  queue.run_until(Time::ns(2250));
  CHECK_FALSE(coll.is_done());
  CHECK(coll.rank_finish_time(0) == Time::ns(1200));
  CHECK(coll.rank_finish_time(1) == Time::ns(2200));
  CHECK(coll.finish_time() == Time::ns(2200));
  queue.run();
  CHECK(coll.rank_finish_time(0) == Time::ns(2300));  // its last message down delivered
  CHECK(coll.rank_finish_time(2) == Time::ns(2300));
}

TEST_CASE("tree all-reduce: 255 children run, 256 are refused (a node counts them in a byte)") {
  // A star: each leaf sends both 1000-B messages up its own link (at 1.1 and 1.2 µs at the root),
  // and the root sends each down as it completes: 2.3 µs, as for two leaves.
  std::vector<std::int32_t> star(256, 0);
  star[0] = -1;
  Tree tree(star);
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  std::uint64_t messages = 0;
  CHECK(tree.run(Bytes::of(2000), config, &messages) == Time::ns(2300));
  CHECK(messages == 255 * 2 * 2);
  star.push_back(0);
  Tree wider(star);
  EventQueue queue;
  Network network(queue, wider.links);
  CHECK_THROWS_WITH_AS(TreeCollective(network, 257, {wider.channel}, Bytes::of(2000), config),
                       doctest::Contains("more than 255 children"), InternalError);
}

TEST_CASE("tree all-reduce: a channel's messages fit the 24 bits of an arrival tag, 2^24 are refused") {
  // 1-B messages, one a byte: 2^24 - 1 bytes are as many messages as a tag can number (its top 8
  // bits name an up message's sender's slot); 2^24 pass the count of the root's messages
  // (5 edges x 2^24 < 2^32) but not the tag, and are refused as the collective is built.
  Tree tree({-1, 0, 0, 0, 0, 0});
  CollectiveConfig config;
  config.message_size = Bytes::of(1);
  EventQueue queue;
  Network network(queue, tree.links);
  CHECK(TreeCollective(network, 6, {tree.channel}, Bytes::of(16'777'215), config).messages_per_channel() ==
        16'777'215u);
  CHECK_THROWS_WITH_AS(TreeCollective(network, 6, {tree.channel}, Bytes::of(16'777'216), config),
                       doctest::Contains("too many messages per tree channel: 16777216 (at most 16777215)"),
                       InternalError);
}

TEST_CASE("tree all-reduce: a chain 2 → 1 → 0 pipelines its messages, reductions included") {
  Tree tree({-1, 0, 1});
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  // Height 2: 4 messages of 1000 B for 4000 B. Message k: leaves rank 2 at 0.1·k µs (link 2→1
  // busy), reaches 1 at 1.1 + 0.1k, reaches the root at 2.2 + 0.1k, comes back to 1 at 3.3 + 0.1k
  // and to 2 at 4.4 + 0.1k: the last (k = 3) at 4.7 µs.
  CHECK(tree.run(Bytes::of(4000), config) == Time::ns(4700));
  // Reducing at 10 GB/s adds 100 ns at each rank with children (1 and the root) before it sends on:
  // 4.7 + 0.2 = 4.9 µs.
  config.reduction_bandwidth = Bandwidth::gb_per_second(10);
  CHECK(tree.run(Bytes::of(4000), config) == Time::ns(4900));
  // Bigger than message_size: 40 MB in 512 KiB messages is ceil(40e6 / 524288) = 77 equal parts,
  // the first 40 of 519,481 B (τ0 = 51.9481 µs), the rest of 519,480 B. Each of the 4 links in turn
  // carries all 77 back to back, a later link τ0 + 1 µs behind the one before (sizes never grow),
  // so T = Σ τ (= 40 MB / 10 GB/s = 4 ms) + 3 × (τ0 + 1 µs) + 1 µs.
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  CHECK(tree.run(Bytes::of(40'000'000), config) == Time::ms(4) + Time::ps(51'948'100) * 3 + Time::us(4));
}

TEST_CASE("tree all-reduce refuses what is not a tree") {
  Tree tree({-1, 0, 0});
  EventQueue queue;
  Network network(queue, tree.links);
  TreeChannel two_roots = tree.channel;
  two_roots.parent[2] = -1;
  two_roots.children[0].pop_back();
  two_roots.down[0].pop_back();
  two_roots.up[2].clear();
  CHECK_THROWS_AS(TreeCollective(network, 3, {two_roots}, Bytes::of(100), {}), InternalError);
  CHECK_THROWS_AS(TreeCollective(network, 4, {tree.channel}, Bytes::of(100), {}), InternalError);
  // Ranks 1 and 2 each other's parent: every rank listed once, one root, but 1 and 2 never reach it.
  Tree cycle({-1, 2, 1});
  Network cycle_network(queue, cycle.links);
  CHECK_THROWS_AS(TreeCollective(cycle_network, 3, {cycle.channel}, Bytes::of(100), {}), InternalError);
}

TEST_CASE("tree all-reduce refuses an edge of no links (an arrival's sends do not test their routes)") {
  Tree tree({-1, 0, 0});
  EventQueue queue;
  Network network(queue, tree.links);
  TreeChannel no_way_up = tree.channel;
  no_way_up.up[1].clear();
  CHECK_THROWS_WITH_AS(TreeCollective(network, 3, {no_way_up}, Bytes::of(100), {}),
                       doctest::Contains("a tree route of no links"), InternalError);
  TreeChannel no_way_down = tree.channel;
  no_way_down.down[0][1].clear();
  CHECK_THROWS_WITH_AS(TreeCollective(network, 3, {no_way_down}, Bytes::of(100), {}),
                       doctest::Contains("a tree route of no links"), InternalError);
  // The root has no way up, and needs none: the first case's tree, without reductions, 2.3 µs.
  CHECK(tree.channel.up[0].empty());
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  CHECK(tree.run(Bytes::of(2000), config) == Time::ns(2300));
}

TEST_CASE("tree all-reduce: a segment runs the channels it names of shared plans") {
  // Two copies of the chain 2 → 1 → 0; a segment of the second alone, 4 messages of 4000 B in all,
  // is the chain of the test above: 4.7 µs.
  Tree tree({-1, 0, 1});
  const auto plans = std::make_shared<const std::vector<TreeChannel>>(2, tree.channel);
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  EventQueue queue;
  Network network(queue, tree.links);
  TreeCollective segment(network, 3, plans, Bytes::of(0), config, {4, {4000}, {1}});
  CHECK(segment.channel_count() == 1);
  CHECK(&segment.channel_plan(0) == &(*plans)[1]);
  segment.start_all();
  queue.run();
  CHECK(segment.finish_time() == Time::ns(4700));
  CHECK(segment.messages_sent() == 16);  // 2 edges × 4 messages × up and down
  CHECK_THROWS_AS(TreeCollective(network, 3, plans, Bytes::of(0), config, {4, {4000}, {2}}), InternalError);
}

TEST_CASE("double binary tree over machines: two trees, each machine inner in at most one") {
  // 4 machines. First tree: 0 is the root with one child 2; 2's children are 1 and 3. The second is
  // the first shifted by one: 1 ← 3 ← {2, 0}.
  CHECK(std::vector<int>{topology::binary_tree_parent(4, 0), topology::binary_tree_parent(4, 1),
                         topology::binary_tree_parent(4, 2), topology::binary_tree_parent(4, 3)} ==
        std::vector<int>{-1, 2, 0, 2});
  CHECK(std::vector<int>{topology::binary_tree_parent(4, 0, true), topology::binary_tree_parent(4, 1, true),
                         topology::binary_tree_parent(4, 2, true),
                         topology::binary_tree_parent(4, 3, true)} == std::vector<int>{3, -1, 3, 1});
  for (const int n : {2, 3, 5, 8, 13, 64}) {
    int depth = 0;
    std::set<int> inner[2];
    for (const bool second : {false, true})
      for (int r = 0; r < n; ++r) {
        int d = 0;
        for (int x = r; topology::binary_tree_parent(n, x, second) >= 0;
             x = topology::binary_tree_parent(n, x, second))
          ++d;
        depth = std::max(depth, d);
        if (topology::binary_tree_parent(n, r, second) >= 0)
          inner[second].insert(topology::binary_tree_parent(n, r, second));
      }
    int both = 0;
    for (const int r : inner[0]) both += inner[1].count(r) ? 1 : 0;
    CHECK(both <= 1);  // with odd n machine 0 is inner in both
    CHECK(depth <= static_cast<int>(std::ceil(std::log2(n))) + 1);
  }
}

TEST_CASE("tree channels: building them is told every 64 positions linked, and at the end") {
  // 16 DGX-1s (128 GPUs): each ring's two trees link 127 positions each, two routes apiece; told at
  // 0, every 64 and at the end (10 to 20 s without a line at 65,536 GPUs under load, before).
  const auto t = topology::presets::cluster({.node = topology::presets::Dgx1V100Params{}, .nodes = 16});
  const auto rings = topology::find_rings(t, t.gpus());
  struct Told final : sim::WorkProgress {
    std::vector<std::uint64_t> done;
    std::uint64_t total = 0;
    void built(std::string_view part, std::uint64_t d, std::uint64_t all, std::string_view unit) override {
      CHECK(part == "building the trees");
      CHECK(unit == "tree positions");
      done.push_back(d);
      total = all;
    }
  } told;
  const auto trees = topology::to_tree_channels(t, rings, t.gpus(), &told);
  const std::uint64_t positions = trees.size() * 127;
  CHECK(told.total == positions);
  REQUIRE(told.done.size() == positions / sim::kWorkTickEvery + 2);
  CHECK(told.done.front() == 0);
  CHECK(told.done[1] == sim::kWorkTickEvery);
  CHECK(told.done.back() == positions);
  // Told or not, the same trees.
  const auto alone = topology::to_tree_channels(t, rings, t.gpus());
  REQUIRE(alone.size() == trees.size());
  for (std::size_t c = 0; c < trees.size(); ++c) {
    CHECK(alone[c].parent == trees[c].parent);
    CHECK(alone[c].up == trees[c].up);
  }
}

TEST_CASE("tree channels on 4 DGX-1s: chains over NVLink inside, heads joined through their NIC") {
  const auto t = topology::presets::cluster({.node = topology::presets::Dgx1V100Params{}, .nodes = 4});
  const auto rings = topology::find_rings(t, t.gpus());
  const auto trees = topology::to_tree_channels(t, rings, t.gpus());
  REQUIRE(trees.size() == 2 * rings.rings.size());  // two trees per channel
  for (const auto& tree : trees) {
    int roots = 0, network_edges = 0;
    for (std::size_t r = 0; r < tree.parent.size(); ++r) {
      if (tree.parent[r] < 0) {
        ++roots;
        continue;
      }
      const bool same_node = t.device(t.gpu(static_cast<int>(r))).node ==
                             t.device(t.gpu(tree.parent[r])).node;
      if (same_node) {
        CHECK(tree.up[r].size() == 1);  // one NVLink
        CHECK(t.links()[tree.up[r][0]].kind == sim::LinkKind::NVLink);
      } else {
        ++network_edges;
        CHECK(tree.up[r].size() == 6);  // GPU→PLX→NIC→leaf→NIC→PLX→GPU
      }
    }
    CHECK(roots == 1);
    CHECK(network_edges == 3);  // 4 machines: 3 edges between their heads
  }
}

TEST_CASE(
    "tree all-reduce: arrivals before their receiver joined are reduced in their order across channels") {
  // Two channels of the tree 0 ← 1 ← {2, 3}, rank 1's route up one link that both share, every
  // other route a link of its own (1 µs; channel 0's from rank 3 10 µs, channel 1's from the leaves
  // 2 µs). 8000 B: 4000 B a channel, height 2, so 4 messages of 1000 B (100 ns a link) each. Ranks
  // 0, 2 and 3 join at 0; rank 1 at 20 µs, when every leaf's message has arrived there, in this
  // order: channel 0's from rank 2 (1.1-1.4 µs), channel 1's from both (2.1-2.4 µs), channel 0's
  // from rank 3 (10.1-10.4 µs). Handled in that order at 20 µs, channel 1's messages are complete
  // first (at its second arrival of each), and go up the shared link first: they reach the root at
  // 21.1-21.4 µs, channel 0's at 21.5-21.8 µs. The root sends each down at once: channel 1's last
  // reaches rank 1 at 22.5 µs, channel 0's at 22.9 µs (the root's last doing in each). Had each
  // channel's messages been complete as soon as all had been counted, channel 0's would go first.
  LinkTable links;
  const auto link = [&](Time latency) {
    return links.add({LinkKind::Generic, Bandwidth::gb_per_second(10), latency, "l"});
  };
  const LinkId shared_up = link(Time::us(1));
  std::vector<TreeChannel> channels;
  for (const Time from_3 : {Time::us(10), Time::us(2)}) {
    const Time from_2 = channels.empty() ? Time::us(1) : Time::us(2);
    TreeChannel t;
    t.parent = {-1, 0, 1, 1};
    t.children = {{1}, {2, 3}, {}, {}};
    t.up = {{}, {shared_up}, {link(from_2)}, {link(from_3)}};
    t.down = {{{link(Time::us(1))}}, {{link(Time::us(1))}, {link(Time::us(1))}}, {}, {}};
    channels.push_back(t);
  }
  CollectiveConfig config;
  config.reduction_bandwidth = Bandwidth::bytes_per_second(0);
  EventQueue queue;
  Network network(queue, links);
  TreeCollective coll(network, 4, channels, Bytes::of(8000), config);
  for (const std::uint32_t r : {0u, 2u, 3u}) coll.start(r);
  queue.run_until(Time::us(20));
  coll.start(1);
  queue.run();
  REQUIRE(coll.is_done());
  CHECK(coll.node_done(1, 0) == Time::ns(22500));
  CHECK(coll.node_done(0, 0) == Time::ns(22900));
}

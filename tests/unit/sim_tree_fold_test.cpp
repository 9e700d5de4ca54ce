// Folding a tree collective onto its representative channel groups (sim/fast/folded_tree.cpp, built
// by sim/fast/fast_path.h): the folded run must give every rank the finish time, every link the
// counters and the collective the byte breakdown of the same trees simulated rank by rank (fast path
// off), and refuse or run in full where that would not hold.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/fast/fast_path.h"
#include "sim/network.h"
#include "sim/tree_collective.h"
#include "tests/unit/fold_outcome.h"
#include "tests/unit/tree_fabric.h"

using namespace hybridsim::sim;
using hybridsim::testing::check_same;
using hybridsim::testing::FoldOutcome;
using hybridsim::testing::make_trees;
using hybridsim::testing::TreeFabric;

namespace {

struct Starter final : EventHandler {
  Collective* tree = nullptr;
  void on_event(std::uint64_t r) override { tree->start(static_cast<std::uint32_t>(r)); }
};

// Runs the trees with every rank joining at start[r] (all at 0 when empty); `extra`, if set, is a
// route another message of 1 MiB takes at 3 us.
FoldOutcome run(const TreeFabric& f, std::uint32_t n, Bytes size, FastPath mode, std::vector<Time> start = {},
            std::vector<LinkId> extra = {}) {
  EventQueue q;
  Network net(q, f.links);
  CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = mode};
  cfg.timing.base_latency = Time::us(2);
  const std::unique_ptr<Collective> made =
      make_tree_collective(net, n, std::make_shared<const std::vector<TreeChannel>>(f.trees), size, cfg);
  Collective& tree = *made;
  Starter starter;
  starter.tree = &tree;
  if (start.empty()) start.assign(n, Time::zero());
  for (std::uint32_t r = 0; r < n; ++r) q.schedule_at(start[r], starter, r);
  struct Sink final : EventHandler {
    void on_event(std::uint64_t) override {}
  } sink;
  if (!extra.empty()) net.send_at(Time::us(3), extra, Bytes::mib(1), sink, 0);
  q.run();
  REQUIRE(tree.is_done());
  return hybridsim::testing::outcome_of(tree, net);
}

}  // namespace

TEST_CASE("tree fold: four alike channels of two trees simulate one and match the full trees exactly") {
  // 32 ranks, 4 channels × 2 trees, 8 MiB: 1 MiB per tree, 16 messages of 64 KiB (2 × height 5
  // = 10 is fewer). Each channel's two trees share its links, so the groups are the 4 channels, all
  // alike: 2 of the 8 tree channels are simulated.
  const auto f = make_trees(32, 4);
  const FoldOutcome folded = run(f, 32, Bytes::mib(8), FastPath::Auto);
  const FoldOutcome full = run(f, 32, Bytes::mib(8), FastPath::Off);
  CHECK(folded.path.folded);
  CHECK(folded.path.simulated == 2);
  CHECK(folded.path.ranks == 8);
  CHECK(folded.path.unit == "tree channels");
  CHECK(folded.path.private_events > 0);
  CHECK_FALSE(full.path.folded);
  CHECK(full.path.reason == "fast path off");
  // Every tree edge carries 16 messages up and 16 down: 2 × 31 edges × 16 × 8 trees = 7936.
  CHECK(full.messages == 7936);
  check_same(folded, full);
  CHECK_FALSE(folded.interfered);
}

TEST_CASE(
    "tree fold: channels that differ are simulated once per kind, bytes that differ by one still fold "
    "apart") {
  // Channels alternate 12.5 and 25 GB/s (period 2): two kinds, 2 × 2 = 4 of 8 tree channels.
  const auto f = make_trees(16, 4, 2);
  const FoldOutcome folded = run(f, 16, Bytes::mib(4), FastPath::Auto);
  const FoldOutcome full = run(f, 16, Bytes::mib(4), FastPath::Off);
  CHECK(folded.path.folded);
  CHECK(folded.path.simulated == 4);
  check_same(folded, full);
  // 4 MiB + 3 bytes over 8 trees: trees 0-2 carry one byte more, so channel 0 (trees 0, 1: +1, +1)
  // and channel 2 (+0, +0) differ, as do channel 1 (+1, +0) and 3 (+0, +0): nothing to fold.
  const FoldOutcome odd = run(f, 16, Bytes::of(4 * 1024 * 1024 + 3), FastPath::Auto);
  const FoldOutcome odd_full = run(f, 16, Bytes::of(4 * 1024 * 1024 + 3), FastPath::Off);
  CHECK_FALSE(odd.path.folded);
  CHECK(odd.path.reason == "a tree whose channel groups differ");
  check_same(odd, odd_full);
}

TEST_CASE("tree fold: groups on other ranks fold only where their leaves send in the same order") {
  // Channel g's trees sit on ranks shifted by g. Every rank joins at 0 in rank order, so channel
  // g's leaves send in an order shifted by g too: the messages meet the shared links in another
  // order and the groups cannot stand for each other; every group is simulated, exactly.
  const auto f = make_trees(16, 2, 1, true);
  const FoldOutcome folded = run(f, 16, Bytes::mib(2), FastPath::Auto);
  const FoldOutcome full = run(f, 16, Bytes::mib(2), FastPath::Off);
  CHECK_FALSE(folded.path.folded);
  CHECK(folded.path.reason == "its channel groups' leaves send in different orders");
  check_same(folded, full);
}

TEST_CASE("tree fold: ranks joining at different times run the trees in full, exactly") {
  const auto f = make_trees(16, 2);
  std::vector<Time> start(16, Time::zero());
  start[5] = Time::us(1);  // before the first message is due (2 us): decided at 2 us − 1 ps
  const FoldOutcome early = run(f, 16, Bytes::mib(2), FastPath::Auto, start);
  const FoldOutcome early_full = run(f, 16, Bytes::mib(2), FastPath::Off, start);
  CHECK_FALSE(early.path.folded);
  CHECK(early.path.reason == "ranks joined at different times");
  check_same(early, early_full);
  start[5] = Time::us(40);  // long after: the decision event finds rank 5 missing
  const FoldOutcome late = run(f, 16, Bytes::mib(2), FastPath::Auto, start);
  const FoldOutcome late_full = run(f, 16, Bytes::mib(2), FastPath::Off, start);
  CHECK_FALSE(late.path.folded);
  CHECK(late.path.reason == "ranks joined at different times");
  check_same(late, late_full);
  CHECK(late.finish[0] > early.finish[0]);
}

TEST_CASE("tree fold: shared links across channels, traces and other traffic are handled") {
  // One channel only: its two trees share every link, one group, nothing to fold.
  const auto one = make_trees(16, 1);
  CHECK(run(one, 16, Bytes::mib(2), FastPath::Auto).path.reason == "a tree whose channels all share links");
  // A message crossing channel 0's link out of rank 3 at 3 us, while the folded trees run there:
  // the network is marked interfered (the caller runs again in full).
  const auto f = make_trees(16, 2);
  const FoldOutcome crossed = run(f, 16, Bytes::mib(2), FastPath::Auto, {}, {f.out[0][3]});
  CHECK(crossed.path.folded);
  CHECK(crossed.interfered);
  const FoldOutcome crossed_full = run(f, 16, Bytes::mib(2), FastPath::Off, {}, {f.out[0][3]});
  CHECK_FALSE(crossed_full.interfered);
}

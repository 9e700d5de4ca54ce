// A uniform tree (CollectiveConfig::uniform_trees; sim/README.md, "Trees in a step: bounded"):
// when every rank joins at one time, every rank finishes when the last rank of the same trees
// simulated rank by rank does, its bound is the spread of those finishes (plus what an earlier
// uniform tree it joined right after may have hidden), its links carry what they carry in full,
// and a later tree over the same channels and bytes repeats the earlier one's run shifted in time.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/fast/fast_path.h"
#include "sim/fast/folded_tree.h"
#include "sim/fast/rank_starter.h"
#include "sim/network.h"
#include "tests/unit/fold_outcome.h"
#include "tests/unit/tree_fabric.h"

using namespace hybridsim::sim;
using hybridsim::testing::FoldOutcome;
using hybridsim::testing::make_trees;
using hybridsim::testing::TreeFabric;

namespace {

CollectiveConfig config(FastPath mode) {
  CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = mode};
  cfg.timing.base_latency = Time::us(2);
  return cfg;
}

// Two trees of `size` over the same channels, every rank of each joining at `at[i]` (one run, one
// network): uniform ones (sharing one UniformTrees) under Bounded, plain ones with the fast path off.
std::vector<FoldOutcome> run_two(const TreeFabric& f, std::uint32_t n, Bytes size, FastPath mode,
                                 const std::vector<Time>& at) {
  EventQueue q;
  Network net(q, f.links);
  const auto plans = std::make_shared<const std::vector<TreeChannel>>(f.trees);
  UniformTrees uniform;
  CollectiveConfig cfg = config(mode);
  if (mode == FastPath::Bounded) cfg.uniform_trees = &uniform;
  std::vector<std::unique_ptr<Collective>> trees;
  std::vector<std::unique_ptr<RankStarter>> starters;
  for (std::size_t i = 0; i < at.size(); ++i) {
    trees.push_back(make_tree_collective(net, n, plans, size, cfg));
    starters.push_back(std::make_unique<RankStarter>(*trees.back()));
    for (std::uint32_t r = 0; r < n; ++r) q.schedule_at(at[i], *starters.back(), r);
  }
  q.run();
  std::vector<FoldOutcome> out;
  for (const auto& t : trees) {
    REQUIRE(t->is_done());
    out.push_back(hybridsim::testing::outcome_of(*t, net));
  }
  return out;
}

}  // namespace

TEST_CASE("uniform tree: every rank finishes with the full tree's last, within its spread") {
  // 32 ranks, 4 channels × 2 trees, 8 MiB, every rank joining at 0; the second tree joins at 5 ms,
  // after the first has finished (it takes well under 1 ms), so it carries nothing from it.
  const auto f = make_trees(32, 4);
  const std::vector<Time> at{Time::zero(), Time::ms(5)};
  const std::vector<FoldOutcome> uniform = run_two(f, 32, Bytes::mib(8), FastPath::Bounded, at);
  const std::vector<FoldOutcome> full = run_two(f, 32, Bytes::mib(8), FastPath::Off, at);
  REQUIRE(*std::max_element(full[0].finish.begin(), full[0].finish.end()) < at[1]);
  for (std::size_t i = 0; i < at.size(); ++i) {
    CAPTURE(i);
    const auto [first, last] = std::minmax_element(full[i].finish.begin(), full[i].finish.end());
    CHECK(*first < *last);  // positions differ: the result reaches the root's machine first
    for (const Time t : uniform[i].finish) CHECK(t == *last);
    CHECK(uniform[i].path.folded);
    CHECK(uniform[i].path.bound == *last - *first);
    CHECK(uniform[i].messages == full[i].messages);
    CHECK(uniform[i].bytes == full[i].bytes);
  }
  // The links carry both trees' messages as in full (the counters are the network's, shared).
  for (std::size_t l = 0; l < full[1].links.size(); ++l) {
    CAPTURE(l);
    CHECK(uniform[1].links[l].bytes == full[1].links[l].bytes);
    CHECK(uniform[1].links[l].messages == full[1].links[l].messages);
    CHECK(uniform[1].links[l].busy == full[1].links[l].busy);
  }
  // The second repeats the first's run 5 ms later: nothing simulated again.
  CHECK(uniform[0].path.private_events > 0);
  CHECK(uniform[1].path.private_events == 0);
}

TEST_CASE("uniform tree: one joined as an earlier one ends states its own bound") {
  // A rank of the second tree may have waited on the first, which a rank may really have finished
  // up to its bound earlier: the step carries that lateness through what waited on it
  // (analysis/step/step_bound.h, tests/unit/analysis_step_bound_test.cpp); the tree states its own.
  const auto f = make_trees(32, 4);
  const Time end = run_two(f, 32, Bytes::mib(8), FastPath::Bounded, {Time::zero()})[0].finish[0];
  const std::vector<FoldOutcome> chained =
      run_two(f, 32, Bytes::mib(8), FastPath::Bounded, {Time::zero(), end});
  const std::vector<FoldOutcome> apart =
      run_two(f, 32, Bytes::mib(8), FastPath::Bounded, {Time::zero(), end + Time::ps(1)});
  const Time spread = chained[0].path.bound;
  REQUIRE(spread > Time::zero());
  CHECK(chained[1].path.bound == spread);
  CHECK(apart[1].path.bound == spread);
  CHECK(chained[1].finish[0] == end + (end - Time::zero()));
}

TEST_CASE("uniform tree: groups a byte apart are not alike, since a byte fewer can finish later") {
  // 8 MiB + 3 B over 8 channels: the first 3 carry one byte more (S mod C), so the last message of
  // channels 3 to 7 is one byte shorter than with 8 MiB + 8 B. Message for message no later, yet in
  // full the tree ends later: the shorter message changes the order in which the two trees of a
  // group meet on their shared links (sim/README.md, "Trees in a step: bounded"). So a group cannot
  // stand for one a byte apart, even as a bound from above; each is simulated.
  const auto f = make_trees(32, 4);
  const std::vector<Time> at{Time::zero()};
  const Bytes fewer = Bytes::of(Bytes::mib(8).count() + 3);
  const Bytes more = Bytes::of(Bytes::mib(8).count() + 8);
  const FoldOutcome full_fewer = run_two(f, 32, fewer, FastPath::Off, at)[0];
  const FoldOutcome full_more = run_two(f, 32, more, FastPath::Off, at)[0];
  const Time last_fewer = *std::max_element(full_fewer.finish.begin(), full_fewer.finish.end());
  const Time last_more = *std::max_element(full_more.finish.begin(), full_more.finish.end());
  MESSAGE("full tree: 8 MiB + 3 B ends at " << last_fewer.ps() << " ps, 8 MiB + 8 B at " << last_more.ps());
  CHECK(last_fewer > last_more);
  const FoldOutcome uniform_fewer = run_two(f, 32, fewer, FastPath::Bounded, at)[0];
  const FoldOutcome uniform_more = run_two(f, 32, more, FastPath::Bounded, at)[0];
  CHECK(uniform_fewer.finish[0] == last_fewer);
  CHECK(uniform_fewer.path.private_events > uniform_more.path.private_events);  // 3 groups, not 1
}

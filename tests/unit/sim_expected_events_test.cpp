// Collective::expected_events() (sim/collective.h): every collective kind the simulator ships
// answers what simulating it is expected to take, from its plan alone before any rank joins, on the
// queue it will run on (the step's, or its models' own), near what its run then takes. The method
// is pure, so a new kind cannot be built without one; this test runs each shipped kind once.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/collective_chain.h"
#include "sim/collectives/all_to_all.h"
#include "sim/fast/embedded_ring.h"
#include "sim/fast/fast_path.h"
#include "sim/fast/folded_ring.h"
#include "sim/fast/folded_tree.h"
#include "sim/fast/ring_embedding.h"
#include "sim/network.h"
#include "sim/ring_collective.h"
#include "sim/tree_collective.h"
#include "tests/unit/coupled_rings.h"
#include "tests/unit/tree_fabric.h"

using namespace hybridsim::sim;
using namespace hybridsim::testing;

namespace {

// What a kind was expected to take, and what its run took: the queue's events (less the starts)
// and its models' own (simulation_path().private_events).
struct Taken {
  ExpectedEvents expected;
  std::uint64_t queue = 0;
  std::uint64_t models = 0;
};

// Builds the collectives on `net` (all of them embedded together when `embed`), asks each what it
// expects, runs them to the end and counts.
using Build = std::function<std::vector<std::unique_ptr<Collective>>(Network&)>;
Taken take(const LinkTable& links, const Build& build, bool embed,
           std::function<bool(const Collective&)> is_kind) {
  EventQueue q;
  Network net(q, links);
  std::vector<std::unique_ptr<Collective>> all = build(net);
  EmbedPlan plan;  // must outlive the run
  if (embed) plan = embed_coupled_rings(all, net);
  Taken t;
  // Each rank's done is told, as a step's executor is (a folded or embedded ring's is an event).
  struct Sink final : EventHandler {
    void on_event(std::uint64_t) override {}
  } sink;
  for (const auto& c : all) c->notify_rank_done(sink, 0);
  std::vector<RankStarter> starters(all.size());
  std::uint64_t starts = 0;
  for (std::size_t c = 0; c < all.size(); ++c) {
    REQUIRE(is_kind(*all[c]));
    t.expected += all[c]->expected_events();
    starters[c].collective = all[c].get();
    for (std::uint32_t r = 0; r < all[c]->ranks(); ++r, ++starts) q.schedule_at(Time::zero(), starters[c], r);
  }
  q.run();
  t.queue = q.events_processed() - starts;
  for (const auto& c : all) {
    REQUIRE(c->is_done());
    t.models += c->simulation_path().private_events;
  }
  return t;
}

template <typename Kind>
bool is(const Collective& c) {
  return dynamic_cast<const Kind*>(&c) != nullptr;
}

CollectiveConfig config(FastPath mode) {
  CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = mode};
  cfg.timing.base_latency = Time::us(2);  // a tree decides its fold in the wait before its first send
  return cfg;
}

}  // namespace

TEST_CASE("expected events: every collective kind answers, within a factor of 2 of what it takes") {
  // 8 machines whose uplinks alternate 12.5 and 10 GB/s: ring A alone folds on 2 positions; with
  // ring B (sharing every uplink) the two embed. 16 ranks in 4 alike groups of double binary trees
  // on a switch, whose links also carry the all-to-all.
  const CoupledRings rings = make_coupled_rings(8);
  const TreeFabric trees = make_trees(16, 4);
  PairRoutes pairs(16, std::vector<std::vector<LinkId>>(16));
  for (std::uint32_t i = 0; i < 16; ++i)
    for (std::uint32_t j = 0; j < 16; ++j)
      if (i != j) pairs[i][j] = {trees.out[0][i], trees.in[0][j]};
  const auto ring = [&](FastPath mode, bool both) {
    return [&rings, mode, both](Network& net) {
      std::vector<std::unique_ptr<Collective>> all;
      all.push_back(
          make_ring_collective(net, CollectiveOp::AllReduce, 8, rings.a, Bytes::mib(8), config(mode)));
      if (both)
        all.push_back(
            make_ring_collective(net, CollectiveOp::AllReduce, 8, rings.b, Bytes::mib(4), config(mode)));
      return all;
    };
  };
  const auto tree = [&](FastPath mode) {
    return [&trees, mode](Network& net) {
      std::vector<std::unique_ptr<Collective>> all;
      all.push_back(make_tree_collective(net, 16,
                                         std::make_shared<const std::vector<TreeChannel>>(trees.trees),
                                         Bytes::mib(8), config(mode)));
      return all;
    };
  };
  const Build all_to_all = [&pairs](Network& net) {
    std::vector<std::unique_ptr<Collective>> all;
    all.push_back(std::make_unique<AllToAllCollective>(net, 16, pairs, Bytes::mib(4), config(FastPath::Off)));
    return all;
  };
  // Two phases over the 8 machines' ranks: ring A's all-reduce, then its all-gather (folded parts).
  const Build chain = [&rings](Network& net) {
    std::vector<std::vector<CollectiveChain::Part>> phases = {
        {{{0, 1, 2, 3, 4, 5, 6, 7}, CollectiveOp::AllReduce, rings.a, Bytes::mib(8)}},
        {{{0, 1, 2, 3, 4, 5, 6, 7}, CollectiveOp::AllGather, rings.a, Bytes::mib(2)}}};
    std::vector<std::unique_ptr<Collective>> all;
    all.push_back(std::make_unique<CollectiveChain>(net, 8, std::move(phases), config(FastPath::Auto)));
    return all;
  };
  struct Kind {
    std::string name;
    const LinkTable& links;
    Build build;
    bool embed;
    std::function<bool(const Collective&)> is_kind;
    bool on_models;  // its events are its models' own, not the queue's
  };
  const std::vector<Kind> kinds = {
      {"plain ring", rings.links, ring(FastPath::Off, false), false, is<RingCollective>, false},
      {"folded ring", rings.links, ring(FastPath::Auto, false), false, is<FoldedRing>, true},
      {"embedded ring", rings.links, ring(FastPath::Auto, true), true, is<EmbeddedRing>, false},
      {"plain tree", trees.links, tree(FastPath::Off), false, is<TreeCollective>, false},
      {"folded tree", trees.links, tree(FastPath::Auto), false, is<FoldedTree>, true},
      {"all-to-all", trees.links, all_to_all, false, is<AllToAllCollective>, false},
      {"chain of folded rings", rings.links, chain, false, is<CollectiveChain>, true},
  };
  for (const Kind& k : kinds) {
    CAPTURE(k.name);
    const Taken t = take(k.links, k.build, k.embed, k.is_kind);
    MESSAGE(k.name, ": expected queue ", t.expected.queue, " models ", t.expected.models, "; took queue ",
            t.queue, " models ", t.models);
    // Where it runs: a folded kind's events are its models', on their own queue; its queue still
    // carries the ranks' done notifications, one a rank (and a tree's decision), expected too.
    CHECK((k.on_models ? t.expected.models : t.expected.queue) > 0);
    if (!k.on_models) CHECK(t.expected.models == 0);
    for (const auto& [expected, took] :
         {std::pair{t.expected.queue, t.queue}, {t.expected.models, t.models}}) {
      CHECK(static_cast<double>(expected) >= static_cast<double>(took) / 2);
      CHECK(static_cast<double>(expected) <= static_cast<double>(took) * 2);
    }
  }
}

TEST_CASE("expected events: rings whose models jump are expected to jump, whatever their chunks") {
  // Machines whose uplinks alternate 12.5 and 10 GB/s: positions repeat every 2. A ring of two
  // channels over the same routes of 64 machines (126 steps) shares every link with itself, so it
  // embeds as a group of one family, whose segments jump (sim/fast/ring_embedding.cpp); a ring of
  // one channel over 256 machines and 8 MiB + 1 B (chunks of unequal size) folds, bounded, as two
  // models at one chunk size each (the larger and the smaller), and each jumps. Counted step by
  // step, the embedded ring was expected at 2,016 queue events where 210 ran (its ranks' dones
  // included), the folded one at 8,160 model events where 148 ran; now 288 and 224.
  LinkTable links;
  const auto uplink = [&links](std::uint32_t p) { return add_uplink(links, p); };
  const std::vector<RingChannel> twice(2, machine_ring(links, 64, uplink));
  const std::vector<RingChannel> once(1, machine_ring(links, 256, uplink));
  const Build embedded = [&twice](Network& net) {
    std::vector<std::unique_ptr<Collective>> all;
    all.push_back(make_ring_collective(net, CollectiveOp::AllReduce, 64, twice, Bytes::mib(8),
                                       config(FastPath::Auto)));
    return all;
  };
  const Build bounded = [&once](Network& net) {
    std::vector<std::unique_ptr<Collective>> all;
    all.push_back(make_ring_collective(net, CollectiveOp::AllReduce, 256, once,
                                       Bytes::mib(8) + Bytes::of(1), config(FastPath::Bounded)));
    return all;
  };
  const Taken e = take(links, embedded, true, is<EmbeddedRing>);
  const Taken f = take(links, bounded, false, is<FoldedRing>);
  MESSAGE("embedded, jumping: expected queue ", e.expected.queue, "; took ", e.queue);
  MESSAGE("folded, unequal chunks: expected models ", f.expected.models, "; took ", f.models);
  CHECK(static_cast<double>(e.expected.queue) <= 2.0 * static_cast<double>(e.queue));
  CHECK(static_cast<double>(e.expected.queue) >= 0.5 * static_cast<double>(e.queue));
  CHECK(static_cast<double>(f.expected.models) <= 2.0 * static_cast<double>(f.models));
  CHECK(static_cast<double>(f.expected.models) >= 0.5 * static_cast<double>(f.models));
}

// The fast path's contract (sim/README.md, "Folding"): every strategy gives what the plain
// simulation gives — every rank's finish, every link's counters and busy-until, the bytes by link
// kind and the messages — bit for bit. As ns-3 runs one test suite against all of its schedulers,
// every case here runs under every strategy and is compared with the full run; each case also names
// the strategies that must actually take it (a strategy that refuses falls back to the full
// simulation, so it must match too, or it finds that its assumption failed and says so, and the
// caller simulates again in full).
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/fast/embedded_ring.h"
#include "sim/fast/fast_path.h"
#include "sim/fast/folded_ring.h"
#include "sim/fast/folded_tree.h"
#include "sim/fast/link_claims.h"
#include "sim/fast/ring_embedding.h"
#include "sim/network.h"
#include "sim/ring_collective.h"
#include "sim/tree_collective.h"
#include "tests/unit/coupled_rings.h"
#include "tests/unit/fold_outcome.h"
#include "tests/unit/tree_fabric.h"

using namespace hybridsim::sim;
using namespace hybridsim::testing;

namespace {

// How a collective may be simulated. `embed`: rings that share links are first planned together
// (embed_coupled_rings); folding, and the periodic jump of a folded model, come with FastPath::Auto.
struct Strategy {
  std::string_view name;
  FastPath mode;
  bool embed;
};
constexpr Strategy kStrategies[] = {{"fold", FastPath::Auto, false}, {"embed", FastPath::Auto, true}};

struct RingSpec {
  std::uint32_t ranks;
  std::vector<RingChannel> channels;
  Bytes size;
  Time join;  // every rank's
};
struct TreeSpec {
  std::uint32_t ranks;
  std::vector<TreeChannel> trees;
  Bytes size;
};
struct Case {
  std::string name;
  LinkTable links;
  std::vector<RingSpec> rings;
  std::vector<TreeSpec> trees;
  std::vector<std::string_view> taken_by;  // strategies that must shortcut every collective of it
  bool jumps = false;                      // folded, its model must jump over periods
};

struct Run {
  std::vector<FoldOutcome> collectives;
  std::uint32_t embedded = 0;
  std::vector<std::string_view> objects;  // what the factory (and the embedding) made, per collective
};

// Which object simulates a collective.
std::string_view object_of(const Collective& c) {
  if (dynamic_cast<const RingCollective*>(&c) != nullptr) return "plain ring";
  if (dynamic_cast<const TreeCollective*>(&c) != nullptr) return "plain tree";
  if (dynamic_cast<const FoldedRing*>(&c) != nullptr) return "folded ring";
  if (dynamic_cast<const EmbeddedRing*>(&c) != nullptr) return "embedded ring";
  if (dynamic_cast<const FoldedTree*>(&c) != nullptr) return "folded tree";
  return "?";
}

Run run(const Case& k, FastPath mode, bool embed) {
  EventQueue q;
  Network net(q, k.links);
  CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = mode};
  cfg.timing.base_latency = Time::us(2);  // a tree decides its fold in the wait before its first send
  // Every strategy is the factory's choice, as in a step (workloads::make_collective).
  std::vector<std::unique_ptr<Collective>> all;
  for (const RingSpec& r : k.rings)
    all.push_back(make_ring_collective(net, CollectiveOp::AllReduce, r.ranks, r.channels, r.size, cfg));
  for (const TreeSpec& t : k.trees)
    all.push_back(make_tree_collective(
        net, t.ranks, std::make_shared<const std::vector<TreeChannel>>(t.trees), t.size, cfg));
  Run out;
  EmbedPlan plan;
  if (embed) plan = embed_coupled_rings(all, net);
  out.embedded = plan.rings;
  std::vector<RankStarter> starters(all.size());
  for (std::size_t c = 0; c < all.size(); ++c) {
    starters[c].collective = all[c].get();
    const Time join = c < k.rings.size() ? k.rings[c].join : Time::zero();
    for (std::uint32_t r = 0; r < all[c]->ranks(); ++r) q.schedule_at(join, starters[c], r);
  }
  q.run();
  for (const auto& c : all) {
    REQUIRE(c->is_done());
    out.collectives.push_back(outcome_of(*c, net));
    out.objects.push_back(object_of(*c));
  }
  return out;
}

// A ring of n ranks in machines of `per_machine`: inside a machine an edge is one NVLink (25 GB/s,
// 500 ns); the edge leaving a machine goes PCIe (16 GB/s, 1 us) then InfiniBand (12.5 GB/s, 2 us).
// Every edge has links of its own; `channels` rings, channel 1 the other way round.
Case machines_ring(std::string name, std::uint32_t n, std::uint32_t per_machine, std::uint32_t channels,
                   Bytes size) {
  Case k;
  k.name = std::move(name);
  RingSpec spec{.ranks = n, .channels = {}, .size = size, .join = Time::zero()};
  for (std::uint32_t c = 0; c < channels; ++c) {
    RingChannel ch;
    for (std::uint32_t p = 0; p < n; ++p) {
      ch.order.push_back(c % 2 == 0 ? p : (n - p) % n);
      if ((p + 1) % per_machine != 0) {
        ch.routes.push_back(
            {k.links.add({LinkKind::NVLink, Bandwidth::gb_per_second(25), Time::ns(500), "nvlink"})});
      } else {
        const LinkId pcie = k.links.add({LinkKind::PCIe, Bandwidth::gb_per_second(16), Time::us(1), "pcie"});
        const LinkId ib = k.links.add(
            {LinkKind::InfiniBand, Bandwidth::bytes_per_second(12'500'000'000), Time::us(2), "ib"});
        ch.routes.push_back({pcie, ib});
      }
    }
    spec.channels.push_back(std::move(ch));
  }
  k.rings.push_back(std::move(spec));
  k.taken_by = {"fold"};
  return k;
}

// M machines, each with one rank of ring A and one of ring B (make_coupled_rings,
// tests/unit/coupled_rings.h); each ring's edge out of machine m crosses its own PCIe link
// (25 GB/s), machine m's uplink (12.5 GB/s, shared by both rings; 10 GB/s in machines of odd
// index), then its own downlink (12.5 GB/s); 500 ns each. Ring B's position p is in machine p + 1
// and joins 3 us after A (8 and 4 MiB). Neither ring folds alone; together they embed.
Case coupled_rings(std::uint32_t machines) {
  CoupledRings f = make_coupled_rings(machines);
  Case k;
  k.name = "two rings sharing every machine's uplink";
  k.links = std::move(f.links);
  k.rings.push_back({machines, std::move(f.a), Bytes::mib(8), Time::zero()});
  k.rings.push_back({machines, std::move(f.b), Bytes::mib(4), Time::us(3)});
  k.taken_by = {"embed"};
  return k;
}

// `groups` channels over n ranks, each run as NCCL's two binary trees sharing the channel's links
// (tests/unit/tree_fabric.h), all alike.
Case trees(std::uint32_t n, std::uint32_t groups) {
  TreeFabric f = make_trees(n, groups);
  Case k;
  k.name = "double binary trees, alike channels";
  k.links = std::move(f.links);
  k.trees.push_back({n, std::move(f.trees), Bytes::mib(8)});
  k.taken_by = {"fold"};
  return k;
}

std::vector<Case> cases() {
  std::vector<Case> all;
  all.push_back(machines_ring("a ring in machines of 4, two channels", 32, 4, 2, Bytes::mib(8)));
  Case jumping = machines_ring("a long ring of one message per chunk", 256, 1, 1, Bytes::mib(8));
  jumping.jumps = true;
  all.push_back(std::move(jumping));
  all.push_back(coupled_rings(8));
  all.push_back(trees(16, 4));
  return all;
}

bool takes(const Case& k, const Strategy& s) {
  for (const std::string_view name : k.taken_by)
    if (name == s.name) return true;
  return false;
}

}  // namespace

TEST_CASE("fast path contract: every strategy gives the full simulation's result on every case") {
  for (const Case& k : cases()) {
    CAPTURE(k.name);
    const Run full = run(k, FastPath::Off, false);
    for (const Strategy& s : kStrategies) {
      CAPTURE(s.name);
      const Run fast = run(k, s.mode, s.embed);
      REQUIRE(fast.collectives.size() == full.collectives.size());
      for (std::size_t c = 0; c < full.collectives.size(); ++c) {
        CAPTURE(c);
        CHECK_FALSE(full.collectives[c].path.folded);
        // The plain state machines, with the fast path off; a shortcut object otherwise.
        CHECK(full.objects[c] == (c < k.rings.size() ? "plain ring" : "plain tree"));
        const std::string_view shortcut =
            c >= k.rings.size() ? "folded tree"
                                : (s.embed && fast.embedded > 0 ? "embedded ring" : "folded ring");
        CHECK(fast.objects[c] == shortcut);
        // A strategy whose assumption failed while it ran says so; its caller simulates again in
        // full. It must not be one the case is meant for.
        if (fast.collectives[c].interfered) {
          CHECK_FALSE(takes(k, s));
          continue;
        }
        check_same(fast.collectives[c], full.collectives[c]);
        if (!takes(k, s)) continue;
        CHECK(fast.collectives[c].path.folded);
        if (s.embed) CHECK(fast.embedded == k.rings.size());
        if (k.jumps) CHECK(fast.collectives[c].path.jumped_steps > 0);
      }
    }
  }
}

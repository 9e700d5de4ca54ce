// The simulation budget (sim/budget.h): each collective's cost in full, derived by hand from its
// plan, the caps, and the check a collective makes as it starts in full, before its first message.
#include <doctest/doctest.h>
#include <malloc.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/fast/fast_path.h"
#include "sim/model_progress.h"
#include "sim/ring_collective.h"
#include "sim/tree_collective.h"
#include "tests/unit/binary_tree_channel.h"
#include "tests/unit/tree_fabric.h"

using namespace hybridsim;
using namespace hybridsim::sim;

namespace {

// N ranks on a one-way ring, link g from rank g to g + 1: one hop per edge.
// `slow_last`: the last link at 5 GB/s, so that no pattern of edges repeats (the ring cannot fold).
struct OneWayRing {
  LinkTable links;
  std::uint32_t n;
  explicit OneWayRing(std::uint32_t ranks, bool slow_last = false) : n(ranks) {
    for (std::uint32_t g = 0; g < n; ++g)
      links.add(
          {LinkKind::Generic, Bandwidth::gb_per_second(slow_last && g + 1 == n ? 5 : 10), Time::us(1), "l"});
  }
  RingChannel channel() const {
    RingChannel ch;
    for (std::uint32_t p = 0; p < n; ++p) {
      ch.order.push_back(p);
      ch.routes.push_back({p});
    }
    return ch;
  }
};

CollectiveConfig full_config() {
  CollectiveConfig c;
  c.fast_path = FastPath::Off;
  return c;
}

// The heap in use (glibc: every arena's chunks in use and the blocks mapped on their own).
std::int64_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<std::int64_t>(m.uordblks + m.hblkhd);
}

// Whether heap_in_use() sees this process's allocations: glibc's malloc does; a sanitizer's
// allocator (the ASan build of .ci/run) replaces it, and mallinfo2 then counts nothing.
bool heap_is_counted() {
  const std::int64_t before = heap_in_use();
  const auto block = std::make_unique<char[]>(64 * 1024);
  block[0] = 1;
  return heap_in_use() - before >= 64 * 1024;
}

// What a collective held, run in full: the heap its destruction gives back (its plan, its state),
// beside its full_cost()'s estimate of it.
struct HeldState {
  std::int64_t estimated = 0;
  std::int64_t held = 0;
};
template <typename C>
HeldState run_and_free(EventQueue& queue, std::unique_ptr<C> collective) {
  HeldState out{collective->full_cost().state_bytes, 0};
  collective->start_all();
  queue.run();
  CHECK(collective->is_done());
  const std::int64_t before = heap_in_use();
  collective.reset();
  out.held = before - heap_in_use();
  return out;
}

// A binary tree over n ranks (rank r's parent (r - 1) / 2), each edge a link of its own each way.
TreeChannel binary_tree(LinkTable& links, std::uint32_t n) {
  const LinkSpec l{LinkKind::Generic, Bandwidth::gb_per_second(10), Time::us(1), "t"};
  return testing::binary_tree_channel(links, n, l, l);
}

// An all-reduce of 4 MiB over `ring`'s ranks, all joining at once, under the fast path and a budget
// capped at `cap` events: how it was simulated, and what its models charged the budget.
struct Charged {
  SimulationPath path;
  std::uint64_t events = 0;
};
Charged fold_all_reduce(const OneWayRing& ring, std::uint64_t cap) {
  EventQueue queue;
  Network network(queue, ring.links);
  SimulationBudget budget({.max_events = cap});
  CollectiveConfig config;
  config.budget = &budget;
  const auto made =
      make_ring_collective(network, CollectiveOp::AllReduce, ring.n, {ring.channel()}, Bytes::mib(4), config);
  CHECK(made->may_fold());
  made->start_all();
  queue.run();
  REQUIRE(made->is_done());
  CHECK(network.messages_in_flight() == 0);
  return {made->simulation_path(), budget.events()};
}

}  // namespace

TEST_CASE("budget: a ring's full cost is ranks x steps x messages per chunk, each message hops + 1 events") {
  OneWayRing ring(4);
  EventQueue queue;
  Network network(queue, ring.links);
  // All-reduce of 4 MiB on one channel, 512 KiB messages: chunks of 4 MiB / 4 = 1 MiB = 2 messages;
  // 2(N-1) = 6 steps, so each of the 4 edges carries 12 messages: 48, each of 1 hop = 2 events: 96.
  // In flight at most: each rank's first chunk, 4 × 2 = 8.
  RingCollective ar(network, CollectiveOp::AllReduce, 4, {ring.channel()}, Bytes::mib(4), full_config());
  const SimulationCost cost = ar.full_cost();
  CHECK(cost.messages == 48);
  CHECK(cost.events == 96);
  CHECK(cost.in_flight == 8);
  CHECK_FALSE(ar.may_fold());
  ar.start_all();
  queue.run();
  CHECK(ar.messages_sent() == cost.messages);
  // A message sent at once takes its first link without an event: one event, its delivery. Those
  // forwarded after a reduction (steps 1 to 3 of reduce-scatter, sent when the add of the step
  // before is done: 3 steps × 4 edges × 2 = 24) wait for an event first: 24 × 2 + 24 = 72 events,
  // under the estimate.
  CHECK(queue.events_processed() == 72);

  // Broadcast of 1 MiB: one chunk of 2 messages along the chain 0 → 1 → 2 → 3, the last position
  // sending nothing: 3 edges × 2 = 6 messages, 12 events, 6 in flight.
  RingCollective bc(network, CollectiveOp::Broadcast, 4, {ring.channel()}, Bytes::mib(1), full_config());
  CHECK(bc.full_cost().messages == 6);
  CHECK(bc.full_cost().events == 12);
  CHECK(bc.full_cost().in_flight == 6);
}

TEST_CASE("budget: a tree's full cost is every edge's messages up and down") {
  // Root 0 with children 1 and 2, each edge one link each way.
  LinkTable links;
  TreeChannel t;
  t.parent = {-1, 0, 0};
  t.up = {{}, {links.add({LinkKind::Generic, Bandwidth::gb_per_second(10), Time::us(1), "up1"})},
          {links.add({LinkKind::Generic, Bandwidth::gb_per_second(10), Time::us(1), "up2"})}};
  t.children = {{1, 2}, {}, {}};
  t.down = {{{links.add({LinkKind::Generic, Bandwidth::gb_per_second(10), Time::us(1), "d1"})},
             {links.add({LinkKind::Generic, Bandwidth::gb_per_second(10), Time::us(1), "d2"})}},
            {},
            {}};
  EventQueue queue;
  Network network(queue, links);
  // 1 MiB in 512 KiB messages: m = max(2, 2 × height 1) = 2 per edge and direction; 2 edges × 2
  // directions × 2 = 8 messages of 1 hop, 16 events; the two leaves send all theirs at once: 4.
  TreeCollective tree(network, 3, {t}, Bytes::mib(1), CollectiveConfig{});
  CHECK(tree.full_cost().messages == 8);
  CHECK(tree.full_cost().events == 16);
  CHECK(tree.full_cost().in_flight == 4);
  CHECK_FALSE(tree.may_fold());
  tree.start_all();
  queue.run();
  CHECK(tree.messages_sent() == 8);
}


TEST_CASE("budget: a tree holds at most its leaves' messages in flight at once") {
  // A chain 0 <- 1 <- 2 <- 3, one leaf (3): message j goes up one edge at a time (a rank sends it
  // once its child delivered it), then down one edge at a time, so at most m are in flight, the
  // leaf's, however the edges' speeds differ. Each edge is two links (a message holds its network
  // slot until it enters its last), the leaf's 10x faster than the others: its messages pile up at
  // rank 2, which sends them on as they come. 4 MiB in 512 KiB messages: m = 8.
  LinkTable links;
  TreeChannel t;
  t.parent = {-1, 0, 1, 2};
  const auto edge = [&](double gb) {
    return std::vector<LinkId>{
        links.add({LinkKind::Generic, Bandwidth::gb_per_second(gb), Time::us(1), "a"}),
        links.add({LinkKind::Generic, Bandwidth::gb_per_second(gb), Time::us(1), "b"})};
  };
  t.up = {{}, edge(10), edge(10), edge(100)};
  t.children = {{1}, {2}, {3}, {}};
  t.down = {{edge(10)}, {edge(10)}, {edge(100)}, {}};
  EventQueue queue;
  Network network(queue, links);
  TreeCollective tree(network, 4, {t}, Bytes::mib(4), CollectiveConfig{});
  CHECK(tree.full_cost().messages == 3 * 2 * 8);
  CHECK(tree.full_cost().in_flight == 8);  // every non-root rank's, 24, before
  tree.start_all();
  queue.run();
  REQUIRE(tree.is_done());
  CHECK(network.most_messages_in_flight() == 8);  // the leaf's, at its start
}
TEST_CASE("budget: caps on events and memory, 0 for none") {
  SimulationBudget events({.max_events = 100, .max_memory = 0});
  events.record(10, 1'000'000'000);
  CHECK_NOTHROW(events.check({.events = 90}));  // 10 + 90 = 100, at the cap
  try {
    events.check({.events = 91});
    FAIL("101 events passed a cap of 100");
  } catch (const BudgetExceeded& e) {
    CHECK(e.kind == BudgetExceeded::Kind::Events);
    CHECK(e.estimate == 101);
    CHECK(e.limit == 100);
  }
  // 500 B of state + 2 messages in flight × 192 B = 884 B fits 1000 B; 3 in flight, 1076 B, does not.
  SimulationBudget memory({.max_events = 0, .max_memory = 1000});
  memory.record(1'000'000'000'000, 500);
  CHECK_NOTHROW(memory.check({.in_flight = 2}));
  CHECK_THROWS_AS(memory.check({.in_flight = 3}), BudgetExceeded);
  SimulationBudget none({.max_events = 0, .max_memory = 0});
  none.record(~std::uint64_t{0}, std::int64_t{1} << 62);
  CHECK_NOTHROW(none.check({.events = 1'000'000, .in_flight = 1'000'000}));
  // A charge is checked, then counted: 60 + 60 passes 100.
  SimulationBudget charged({.max_events = 100});
  charged.charge({.events = 60}, "a");
  CHECK(charged.events() == 60);
  CHECK_THROWS_AS(charged.charge({.events = 60}, "b"), BudgetExceeded);
}

TEST_CASE("budget: a fallback's messages are checked with every other's the run may hold") {
  // Issue 31 item 3: a fold that falls back to full mid-run was checked as its state and its own
  // messages alone (500 B + 2 x 192 B = 884 B, under 1000 B) while the rest of the step's messages
  // were in flight beside them. The step records its most in flight at once up front (every
  // collective's own most, its among them: 4 here, 1268 B), and the fallback is checked against it.
  SimulationBudget alone({.max_events = 0, .max_memory = 1000});
  alone.record(0, 500);
  CHECK_NOTHROW(alone.charge({.events = 10, .in_flight = 2}, "a fallback"));
  SimulationBudget step({.max_events = 0, .max_memory = 1000});
  step.record(0, 500);
  step.record_in_flight(4);
  try {
    step.charge({.events = 10, .in_flight = 2}, "a fallback");
    FAIL("a fallback beside 4 messages in flight passed a cap of 1000 B");
  } catch (const BudgetExceeded& e) {
    CHECK(e.kind == BudgetExceeded::Kind::Memory);
    CHECK(e.estimate == 500 + 4 * 192);
  }
  // Its own more than the recorded most (a collective outside any step): its own is checked.
  SimulationBudget own({.max_events = 0, .max_memory = 1000});
  own.record(0, 500);
  own.record_in_flight(1);
  CHECK_THROWS_AS(own.charge({.in_flight = 3}, "a ring"), BudgetExceeded);
}

TEST_CASE("budget: counts as people read them") {
  CHECK(BudgetExceeded::count_text(999'999) == "999999");
  CHECK(BudgetExceeded::count_text(2'000'000'000) == "2e9");
  CHECK(BudgetExceeded::count_text(3'140'000'000) == "3.1e9");
  // 2.3e10 events at 5e6 a second: 4600 s, about 77 minutes.
  const BudgetExceeded e(BudgetExceeded::Kind::Events, 23'000'000'000, 2'000'000'000, 0, "");
  CHECK(e.estimate_text("the step") ==
        "the step would simulate about 2.3e10 events (about 77 minutes at 5e6 events/s)");
}

TEST_CASE("budget: a refusal says what the step takes if its collectives do not fold, a cap to type") {
  // A folded step estimated at 2.3e7 that takes 9.3e7 in full once its fold is given up: a cap of
  // 2.3e7 was refused again at 9.3e7 (issue 31). The cap quoted is rounded up, never under.
  BudgetExceeded e(BudgetExceeded::Kind::Events, 23'000'000, 2000, 0, "");
  e.upper = 93'456'789;
  CHECK(e.estimate_text("the step") == "the step would simulate about 2.3e7 events (about 5 s at 5e6 "
                                       "events/s), up to 9.3e7 if its collectives do not fold");
  e.upper = 23'000'000;  // no more than the estimate: nothing to add
  CHECK(e.estimate_text("the step") ==
        "the step would simulate about 2.3e7 events (about 5 s at 5e6 events/s)");
  CHECK(BudgetExceeded::cap_at_least(93'456'789) == 94'000'000);
  CHECK(BudgetExceeded::cap_at_least(93'000'000) == 93'000'000);
  CHECK(BudgetExceeded::cap_at_least(999'999) == 999'999);  // whole below a million, as count_text
  CHECK(BudgetExceeded::cap_at_least(1'000'001) == 1'100'000);
  CHECK(BudgetExceeded::cap_at_least(UINT64_MAX) >= 18'000'000'000'000'000'000ULL);
}

TEST_CASE("budget: a ring starting in full is checked before its first message") {
  OneWayRing ring(4);
  EventQueue queue;
  Network network(queue, ring.links);
  SimulationBudget budget({.max_events = 95});
  CollectiveConfig config = full_config();
  config.budget = &budget;
  // 96 events (first test case) over a cap of 95: the first rank to start throws, nothing is sent.
  RingCollective ar(network, CollectiveOp::AllReduce, 4, {ring.channel()}, Bytes::mib(4), config);
  try {
    ar.start(0);
    FAIL("the ring started over its budget");
  } catch (const BudgetExceeded& e) {
    CHECK(e.estimate == 96);
    CHECK(e.cause == "a ring all-reduce of 4 MiB over 4 ranks starts in full (4 of them message by message)");
  }
  CHECK(ar.messages_sent() == 0);
  CHECK(network.messages_in_flight() == 0);
}

TEST_CASE("budget: a fold is cheap, one that falls back to the full ring is caught as it does") {
  {
    // Equal chunks fold onto one representative (every edge alike, all ranks join at once): its
    // model is one position of 6 steps × 2 messages = 12 messages, 24 events: under a cap of 30.
    const Charged folded = fold_all_reduce(OneWayRing(4), 30);
    CHECK(folded.path.folded);
    CHECK(folded.events == 24);
  }
  {
    // One link slower than the others: no pattern repeats, so the fold's model is the whole ring,
    // 4 positions × 12 messages × 2 events = 96 (as in full), over a cap of 50: refused as the
    // model's first rank starts, before anything is sent.
    OneWayRing uneven(4, true);
    EventQueue queue;
    Network network(queue, uneven.links);
    SimulationBudget budget({.max_events = 50});
    CollectiveConfig config;
    config.budget = &budget;
    const auto made =
        make_ring_collective(network, CollectiveOp::AllReduce, 4, {uneven.channel()}, Bytes::mib(4), config);
    Collective& ar = *made;
    CHECK(ar.may_fold());
    try {
      ar.start_all();
      FAIL("the fold's fallback ran over its budget");
    } catch (const BudgetExceeded& e) {
      CHECK(e.estimate == 96);
      CHECK(e.cause ==
            "a ring all-reduce of 4 MiB over 4 ranks starts in full (4 of them message by message)");
    }
    CHECK(budget.events() == 0);
    CHECK(network.messages_in_flight() == 0);
  }
}

TEST_CASE("budget: a jumping folded ring's model is charged the steps it runs, not every step") {
  // 64 ranks on a one-way ring of equal links, all joining at once: the fold's model is one position
  // (every edge alike). An all-reduce of 4 MiB in 512 KiB messages: chunks of 64 KiB, one message
  // each, 2 x 63 = 126 steps, enough for the periodic jump (64 at least, sim/fast/ring_jump.h).
  // Run step by step the model would send 126 messages of one hop, 2 events each: 252, what it was
  // charged as it started until 4f53b73 (a plain ring's full cost), whatever it then jumped over.
  // Jumping, it runs per phase what sim/fast/fold_cost.h counts in L = 1 position between two of
  // the window's slowest edges: 4.5 L + 2 = 6.5, rounded up to 7, in the reduce-scatter, and 2 L + 2
  // = 4 in the all-gather, 11 steps of one message: 22 events. A cap of 100 refused the ring (252);
  // now its charge passes, and what the model runs stays within it.
  const Charged jumped = fold_all_reduce(OneWayRing(64), 100);
  CHECK(jumped.path.folded);
  CHECK(jumped.path.simulated == 1);
  CHECK(jumped.path.jumped_steps > 0);
  CHECK(jumped.events == 22);
  CHECK(jumped.path.private_events <= jumped.events);
}

TEST_CASE("budget: a folded tree's model is charged before it runs, what its estimate counts") {
  // 256 ranks, 4 alike channels of 2 trees each (tests/unit/tree_fabric.h): one group of 2 trees is
  // simulated and stands for the others. 8 MiB over 8 trees is 1 MiB a tree, 16 messages of 64 KiB
  // (at least twice the trees' height, 8: 16). Each of a tree's 255 edges carries them up and down,
  // over 2 links each way, 3 events a message: 255 x 16 x 2 x 3 = 24,480 a tree, 48,960 for the
  // model. Its estimate counts that, and the run charges it. Under a cap one event short, the model
  // is refused before it runs (its progress counts none of its events); it was charged after its run
  // until now, so a model of minutes ran to its end before it was refused.
  const auto f = hybridsim::testing::make_trees(256, 4);
  const auto plans = std::make_shared<const std::vector<TreeChannel>>(f.trees);
  struct Counted final : ModelProgress {
    void tick() override {}
  };
  const auto run = [&](std::uint64_t cap, ExpectedEvents& expected, Counted& counted) {
    EventQueue queue;
    Network network(queue, f.links);
    SimulationBudget budget({.max_events = cap});
    CollectiveConfig config{.message_size = Bytes::kib(64), .fast_path = FastPath::Auto};
    config.timing.base_latency = Time::us(2);
    config.budget = &budget;
    config.model_progress = &counted;
    std::unique_ptr<Collective> tree = make_tree_collective(network, 256, plans, Bytes::mib(8), config);
    CHECK(tree->may_fold());  // not counted in full among what a step is sure to run
    expected = tree->expected_events();
    tree->start_all();
    queue.run();
    CHECK(tree->is_done());
    CHECK(tree->simulation_path().folded);
    CHECK(tree->simulation_path().simulated == 2);
    return budget.events();
  };
  ExpectedEvents expected;
  Counted counted;
  CHECK(run(0, expected, counted) == 48'960);
  CHECK(expected.models == 48'960);
  CHECK(counted.events() > 0);
  CHECK(counted.events() <= 48'960);
  Counted refused;
  try {
    run(48'959, expected, refused);
    FAIL("a tree model of 48,960 events passed a cap of 48,959");
  } catch (const BudgetExceeded& e) {
    CHECK(e.estimate == 48'960);
    CHECK(e.cause == "a tree all-reduce of 2 MiB over 256 ranks starts");
  }
  CHECK(refused.events() == 0);
}

TEST_CASE("budget: a collective's state estimate covers what it holds run in full") {
  // The estimate follows what the collectives hold (sim/README.md, "Budgets"): the ring's 64-byte
  // positions and the tree's 64-byte nodes per channel, the plans, the ranks' progress, each heap
  // block as glibc rounds it. Counted at 64 bytes per position, route vector and counters, the
  // ring's estimate was under what it holds (positions, order, chunks, RankProgress: 104 bytes and
  // more a position). Measured as the heap its destruction gives back.
  if (!heap_is_counted()) {
    MESSAGE("the heap is not glibc's (a sanitizer's allocator): nothing to measure it by here");
    return;
  }
  OneWayRing ring(256);
  EventQueue queue;
  Network network(queue, ring.links);
  const HeldState r = run_and_free(
      queue, std::make_unique<RingCollective>(network, CollectiveOp::AllReduce, 256,
                                              std::vector<RingChannel>{ring.channel(), ring.channel()},
                                              Bytes::mib(4), full_config()));
  MESSAGE("ring: estimated ", r.estimated, " B, held ", r.held, " B");
  CHECK(r.held > 256 * 2 * 64);  // its positions at least: the heap count sees them
  CHECK(r.estimated >= r.held);
  CHECK(r.estimated <= r.held + r.held / 4);  // and not far over

  LinkTable links;
  std::vector<TreeChannel> trees = {binary_tree(links, 255), binary_tree(links, 255)};
  EventQueue tree_queue;
  Network tree_network(tree_queue, links);
  const HeldState t = run_and_free(
      tree_queue, std::make_unique<TreeCollective>(tree_network, 255, std::move(trees), Bytes::mib(1),
                                                   CollectiveConfig{}));
  MESSAGE("tree: estimated ", t.estimated, " B, held ", t.held, " B");
  CHECK(t.held > 255 * 2 * 64);
  CHECK(t.estimated >= t.held);
  CHECK(t.estimated <= t.held + t.held / 4);
}

TEST_CASE("budget: a folded tree lays out its plain tree's nodes only where that tree runs") {
  // A folded tree keeps its plan as a plain TreeCollective, which runs only if the fold is refused;
  // its models run the groups they stand for on trees of their own. 256 ranks, 4 alike channels of
  // 2 trees each (tests/unit/tree_fabric.h): run in full, the tree holds 8 × 256 nodes of 64 bytes
  // (131,072 B) and more (slots, packed routes, RankProgress); folded, its per-rank state is the
  // fold's own (a RankProgress a rank, 16,384 B, and the join order), under the nodes alone. With
  // the nodes laid out at construction, as before, the folded tree held as much as the full one.
  if (!heap_is_counted()) {
    MESSAGE("the heap is not glibc's (a sanitizer's allocator): nothing to measure it by here");
    return;
  }
  const auto f = hybridsim::testing::make_trees(256, 4);
  const auto plans = std::make_shared<const std::vector<TreeChannel>>(f.trees);
  const auto held = [&](FastPath mode) {
    EventQueue queue;
    Network network(queue, f.links);
    CollectiveConfig config{.message_size = Bytes::kib(64), .fast_path = mode};
    config.timing.base_latency = Time::us(2);
    std::unique_ptr<Collective> tree = make_tree_collective(network, 256, plans, Bytes::mib(8), config);
    tree->start_all();
    queue.run();
    CHECK(tree->is_done());
    CHECK(tree->simulation_path().folded == (mode == FastPath::Auto));
    const std::int64_t before = heap_in_use();
    tree.reset();
    return before - heap_in_use();
  };
  const std::int64_t nodes = 8 * 256 * 64;
  const std::int64_t full = held(FastPath::Off);
  const std::int64_t folded = held(FastPath::Auto);
  MESSAGE("held run in full ", full, " B, folded ", folded, " B");
  CHECK(full > nodes);
  CHECK(folded < nodes);
}

TEST_CASE("SimulationBudget: every command reads a cap's text by one rule (unlimited, 0, 0 B: none)") {
  CHECK(parse_events_cap("unlimited") == 0);
  CHECK(parse_events_cap("0") == 0);
  CHECK(parse_events_cap("2000000000") == 2'000'000'000);
  CHECK_THROWS_WITH_AS(parse_events_cap("-1"),
                       "expected a whole number of events from 0 to 1e18 (0 or unlimited: no limit)",
                       InputError);
  // The bound simulation.max_events holds (issue 31): past it --max-events was taken, whatever its size.
  CHECK(parse_events_cap("1000000000000000000") == kLargestEventsCap);
  for (const char* past : {"1000000000000000001", "18446744073709551615", "18446744073709551616"}) {
    CAPTURE(past);
    CHECK_THROWS_WITH_AS(parse_events_cap(past), doctest::Contains("from 0 to 1e18"), InputError);
  }
  CHECK(parse_memory_cap("unlimited") == 0);
  CHECK(parse_memory_cap("0 B") == 0);
  CHECK(parse_memory_cap("8 GiB") == std::int64_t{8} << 30);
  // As the scenario key simulation.max_memory refuses it: a size needs its unit.
  CHECK_THROWS_WITH_AS(parse_memory_cap("0"), doctest::Contains("no unit in \"0\""), InputError);
  CHECK_THROWS_WITH_AS(parse_memory_cap("lots"),
                       doctest::Contains("\"512 KiB\" (0 B or unlimited: no limit)"), InputError);
}

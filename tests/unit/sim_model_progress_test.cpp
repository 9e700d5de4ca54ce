// Progress inside one event (sim/model_progress.h): a folded collective's models count their events
// to CollectiveConfig::model_progress, the owner's thread is told every kCountEvery of its own runs'
// events and while it waits for a worker's, and a worker thread only adds to the count; embedding
// rings (sim/fast/ring_embedding.cpp) is told ring by ring; ticked_loop (sim/work_progress.h) tells
// a part as work_tick does.
#include <doctest/doctest.h>

#include <algorithm>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/fast/fast_path.h"
#include "sim/fast/folded_tree.h"
#include "sim/fast/rank_starter.h"
#include "sim/fast/ring_embedding.h"
#include "sim/fast/tree_model.h"
#include "sim/model_progress.h"
#include "sim/network.h"
#include "sim/work_progress.h"
#include "tests/unit/coupled_rings.h"
#include "tests/unit/tree_fabric.h"

using namespace hybridsim::sim;
using hybridsim::testing::make_coupled_rings;
using hybridsim::testing::make_trees;

namespace {

// Counts its ticks and the events it had counted at each.
struct Counted final : ModelProgress {
  std::vector<std::uint64_t> at;
  void tick() override { at.push_back(events()); }
};

// An event that schedules the next until `left` is 0: `left` + 1 events in all.
struct Chain final : EventHandler {
  EventQueue* queue = nullptr;
  void on_event(std::uint64_t left) override {
    if (left > 0) queue->schedule_at(queue->now() + Time::ns(1), *this, left - 1);
  }
};

struct Told final : WorkProgress {
  std::vector<std::string> told;
  void built(std::string_view part, std::uint64_t done, std::uint64_t total, std::string_view unit) override {
    told.push_back(std::string(part) + " " + std::to_string(done) + "/" + std::to_string(total) + " " +
                   std::string(unit));
  }
};

}  // namespace

TEST_CASE("model progress: a queue run counted is told every kCountEvery events and at its end") {
  const std::uint64_t n = 2 * ModelProgress::kCountEvery + 5;
  EventQueue q;
  Chain chain;
  chain.queue = &q;
  q.schedule_at(Time::zero(), chain, n - 1);
  Counted counted;
  run_counted(q, &counted);
  CHECK(q.events_processed() == n);
  CHECK(counted.events() == n);
  CHECK(counted.at ==
        std::vector<std::uint64_t>{ModelProgress::kCountEvery, 2 * ModelProgress::kCountEvery, n});
  // Without a listener, the same events run.
  EventQueue alone;
  Chain other;
  other.queue = &alone;
  alone.schedule_at(Time::zero(), other, n - 1);
  run_counted(alone, nullptr);
  CHECK(alone.events_processed() == n);
}

TEST_CASE("model progress: another thread's count is read, never told there") {
  Counted counted;  // made on this thread: its owner
  std::thread worker([&] {
    counted.count(1000);
    counted.waiting();
  });
  worker.join();
  CHECK(counted.events() == 1000);
  CHECK(counted.at.empty());  // no tick on the worker
  counted.waiting();          // the owner, waiting: told of the worker's events
  counted.count(24);
  CHECK(counted.at == std::vector<std::uint64_t>{1000, 1024});
}

TEST_CASE("model progress: a folded ring's model counts its events, starters included") {
  // Ring A of make_coupled_rings alone (8 machines, a pattern of 2) folds onto 2 positions: one
  // model of one channel, whose queue runs its events plus the 2 starters standing for the joins.
  const auto f = make_coupled_rings(8);
  EventQueue q;
  Network net(q, f.links);
  Counted counted;
  CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = FastPath::Auto};
  cfg.model_progress = &counted;
  auto ring = make_ring_collective(net, CollectiveOp::AllReduce, 8, f.a, Bytes::mib(8), cfg);
  RankStarter starter(*ring);
  for (std::uint32_t r = 0; r < 8; ++r) q.schedule_at(Time::zero(), starter, r);
  q.run();
  REQUIRE(ring->is_done());
  const SimulationPath path = ring->simulation_path();
  REQUIRE(path.folded);
  CHECK(path.simulated == 2);
  CHECK(path.private_events > 0);
  CHECK(counted.events() == path.private_events + 2);
  CHECK(counted.at.size() == path.private_events / ModelProgress::kCountEvery + 1);
  CHECK(counted.at.back() == counted.events());
}

TEST_CASE("model progress: tree models count on the owner's and a worker's thread alike") {
  // Three tree runs queued on one worker, taken by the owner: whoever ran each, the count is every
  // run's events plus its 16 starters, and every tick came on the owner's thread (Counted would
  // race otherwise: ThreadSanitizer's run of the unit tests, sim/README.md).
  const auto f = make_trees(16, 2);
  const auto plans = std::make_shared<const std::vector<TreeChannel>>(f.trees);
  Counted counted;
  auto input = [&](std::int64_t bytes) {
    TreeModelInput in = hybridsim::testing::tree_model_input(f, plans, bytes);
    in.config.model_progress = &counted;
    return in;
  };
  std::uint64_t events = 0;
  {
    AheadRuns runner(1);
    std::vector<std::size_t> ids;
    for (const std::int64_t bytes : {std::int64_t{1} << 24, std::int64_t{1} << 23, std::int64_t{3} << 22})
      ids.push_back(runner.add(input(bytes)));
    for (const std::size_t id : ids) events += runner.take(id, &counted).events + 16;
  }
  CHECK(events > 3 * 16);
  CHECK(counted.events() == events);
  // One thread alone: the same count, each run's end told.
  Counted alone;
  std::uint64_t again = 0;
  for (const std::int64_t bytes : {std::int64_t{1} << 24, std::int64_t{1} << 23, std::int64_t{3} << 22}) {
    TreeModelInput in = input(bytes);
    in.config.model_progress = &alone;
    again += run_tree_model(in).events + 16;
  }
  CHECK(again == events);
  CHECK(alone.events() == events);
  CHECK(alone.at.size() >= 3);
  CHECK(alone.at.back() == events);
}

TEST_CASE("model progress: a folded tree's set-up is told every 1024 ranks before its models run") {
  // Matching its channel groups, claiming their links and the first message's lead visit every rank
  // of every channel before any model runs: 15 s without a line at 65,536 GPUs of DGX-1 under load.
  // 8,192 ranks, 4 alike groups of 2 trees: each pass over the 8 channels' ranks is 64 ticks, and the
  // set-up makes at least four such passes (channel groups, the first message's lead, the claims,
  // the groups matched to the first) before the model's first count. Without them, every tick came
  // from a model's count, none at 0 events.
  const std::uint32_t n = 8192;
  const auto f = make_trees(n, 4);
  EventQueue q;
  Network net(q, f.links);
  Counted counted;
  CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = FastPath::Auto};
  cfg.timing.base_latency = Time::us(2);  // as the tree fold tests': the decision comes before a send
  cfg.model_progress = &counted;
  auto tree = make_tree_collective(net, n, std::make_shared<const std::vector<TreeChannel>>(f.trees),
                                   Bytes::mib(8), cfg);
  RankStarter starter(*tree);
  for (std::uint32_t r = 0; r < n; ++r) q.schedule_at(Time::zero(), starter, r);
  q.run();
  REQUIRE(tree->is_done());
  CHECK(tree->simulation_path().folded);
  CHECK(tree->simulation_path().simulated == 2);
  const auto before_models = std::count(counted.at.begin(), counted.at.end(), std::uint64_t{0});
  const std::uint32_t pass = 8 * n / FoldedTree::kSetupTickRanks;
  CHECK(before_models >= 4 * pass);
  // The ticks are told from the set-up's loops, not per unit: a tick per 1024 ranks and channel at
  // most, in every loop (seven passes, the applying of the run and the release after it included).
  CHECK(counted.at.size() < 16 * pass);
  CHECK(counted.at.back() == counted.events());
}

TEST_CASE("model progress: a tick that throws stops a worker's run at its next count, not its end") {
  // Ctrl-C in the Python module throws from the owner's tick (analysis/python/module.cpp) while a
  // worker runs a tree's model: the step unwinds, and AheadRuns' destructor waits for the worker's
  // run. That run (2^17 messages of 64 KiB each way over make_trees(16, 2)'s first group: 153 events
  // a message, as 16 messages make 2,448) has `full` events, about 20 M: more than any machine runs
  // in the 0.1 s before the owner is told. Once the owner's tick has thrown, the worker stops at its
  // next count: within kCountEvery events of the count the tick saw, and one more count that may
  // have been under way as it threw. (A bound on the events by the clock, as this test had, fails
  // on a machine fast enough to run half the model in 0.1 s.)
  const auto f = make_trees(16, 2);
  const auto plans = std::make_shared<const std::vector<TreeChannel>>(f.trees);
  const auto input = [&] {
    TreeModelInput in = hybridsim::testing::tree_model_input(f, plans, std::int64_t{1} << 31);
    in.segment.messages = 1u << 17;
    return in;
  };
  const std::uint64_t full = run_tree_model(input()).events + 16;
  REQUIRE(full > 64 * ModelProgress::kCountEvery);
  struct Stopping final : ModelProgress {
    int ticks = 0;
    std::uint64_t seen = 0;  // the events counted when the tick threw
    void tick() override {
      ++ticks;
      seen = events();
      throw std::runtime_error("stopped");
    }
  } stopping;
  {
    AheadRuns runner(1);
    TreeModelInput in = input();
    in.config.model_progress = &stopping;
    const std::size_t id = runner.add(std::move(in));
    // The worker has counted: its run is under way, and the owner waits for it (told after 0.1 s).
    while (stopping.events() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK_THROWS_AS(runner.take(id, &stopping), std::runtime_error);
    CHECK(stopping.stopped());
  }  // the worker joined
  CHECK(stopping.ticks == 1);
  CHECK(stopping.events() <= stopping.seen + 2 * ModelProgress::kCountEvery);
  CHECK(stopping.events() < full);
}

TEST_CASE("model progress: embedding rings is told ring by ring") {
  // make_coupled_rings(8): rings A and B embed together, told at 0, 1 and 2 of 2 rings (and 2 of 2
  // again at the end); with nothing to embed (one ring), 0 and 1 of 1.
  const auto f = make_coupled_rings(8);
  EventQueue q;
  Network net(q, f.links);
  const CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = FastPath::Auto};
  std::vector<std::unique_ptr<Collective>> rings;
  rings.push_back(make_ring_collective(net, CollectiveOp::AllReduce, 8, f.a, Bytes::mib(8), cfg));
  rings.push_back(make_ring_collective(net, CollectiveOp::AllReduce, 8, f.b, Bytes::mib(4), cfg));
  // Before them, its passes over the rings' routes: their plans matched ring by ring, their links
  // listed channel by channel and sorted (one part).
  const auto embedding = [](const std::vector<std::string>& all) {
    std::vector<std::string> out;
    for (const std::string& t : all)
      if (t.starts_with("embedding its rings")) out.push_back(t);
    return out;
  };
  Told told;
  const EmbedPlan plan = embed_coupled_rings(rings, net, &told);
  CHECK(plan.rings == 2);
  REQUIRE(told.told.size() > 2);
  CHECK(told.told[0] == "matching its rings' plans 0/2 collectives");
  CHECK(told.told[1] == "matching its rings' plans 1/2 collectives");
  CHECK(std::find(told.told.begin(), told.told.end(), "sorting its rings' links 1/1 part") !=
        told.told.end());
  CHECK(embedding(told.told) ==
        std::vector<std::string>{"embedding its rings 0/2 rings", "embedding its rings 1/2 rings",
                                 "embedding its rings 2/2 rings", "embedding its rings 2/2 rings"});
  EventQueue q1;
  Network net1(q1, f.links);
  std::vector<std::unique_ptr<Collective>> one;
  one.push_back(make_ring_collective(net1, CollectiveOp::AllReduce, 8, f.a, Bytes::mib(8), cfg));
  Told alone;
  CHECK(embed_coupled_rings(one, net1, &alone).rings == 0);
  CHECK(embedding(alone.told) ==
        std::vector<std::string>{"embedding its rings 0/1 rings", "embedding its rings 1/1 rings"});
}

TEST_CASE("ticked_loop: every unit's body runs, told at 0, every `every` and at the end") {
  Told told;
  std::vector<std::uint32_t> ran;
  ticked_loop(&told, "its part", std::uint32_t{7}, "units", [&](std::uint32_t i) { ran.push_back(i); }, 3);
  CHECK(ran == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK(told.told == std::vector<std::string>{"its part 0/7 units", "its part 3/7 units",
                                              "its part 6/7 units", "its part 7/7 units"});
  ticked_loop(nullptr, "nobody", std::size_t{2}, "units", [&](std::size_t) { ran.push_back(9); });
  CHECK(ran.size() == 9);
}

TEST_CASE("ticked_batches: each batch's body runs once, told at 0, after each batch and at the end") {
  Told told;
  std::vector<std::pair<std::size_t, std::size_t>> ran;
  const auto body = [&](std::size_t begin, std::size_t end) { ran.emplace_back(begin, end); };
  ticked_batches(&told, "its part", 7, "units", 3, body);
  CHECK(ran == std::vector<std::pair<std::size_t, std::size_t>>{{0, 3}, {3, 6}, {6, 7}});
  CHECK(told.told == std::vector<std::string>{"its part 0/7 units", "its part 3/7 units",
                                              "its part 6/7 units", "its part 7/7 units"});
  // One batch or less: one body, nothing told (no time worth a line).
  ran.clear();
  told.told.clear();
  ticked_batches(&told, "its part", 3, "units", 3, body);
  ticked_batches(&told, "its part", 0, "units", 3, body);
  CHECK(ran == std::vector<std::pair<std::size_t, std::size_t>>{{0, 3}, {0, 0}});
  CHECK(told.told.empty());
}

// Tree model runs computed ahead on worker threads (UniformTrees::threads, sim/fast/tree_model.h;
// sim/README.md, "Trees in a step: the second core"): a step's trees give the same finishes, link
// use, bounds, messages and events (each run's counted by the first tree that uses it) with 1, 2
// and 3 threads, whether the later trees join in the first one's order (the runs computed ahead
// are used) or not (they are not, and each tree runs its own). A step with 1 and 2 threads:
// tests/unit/analysis_tree_bound_test.cpp.
#include <doctest/doctest.h>

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

struct Joined {
  Bytes size;
  Time at;
  bool reversed = false;  // its ranks join in the opposite order
  bool second = false;    // over the second set of plans (trees of another size), if any
};

// A second fabric's links appended to the first's, its plans' links renumbered to match: trees of two
// sizes over one network, as a step's expert-parallel trees beside its data-parallel ones.
std::vector<TreeChannel> append_fabric(TreeFabric& into, const TreeFabric& other) {
  const auto offset = static_cast<LinkId>(into.links.size());
  for (const LinkSpec& spec : other.links.all()) into.links.add(spec);
  std::vector<TreeChannel> plans = other.trees;
  for (TreeChannel& t : plans) {
    for (auto& route : t.up)
      for (LinkId& id : route) id += offset;
    for (auto& routes : t.down)
      for (auto& route : routes)
        for (LinkId& id : route) id += offset;
  }
  return plans;
}

struct StepOutcome {
  std::vector<FoldOutcome> trees;
  std::uint64_t ahead = 0;  // runs that a worker had taken on
  bool queued = false;      // runs were queued for a worker (AheadRuns::add refuses one that does
                            // not fit its tree's ranks)
};

// Uniform trees over the same channels on one network, tree i's ranks all joining at joins[i].at.
// Trees joined at `joins` over the second plans (`second_plans`, of `second_n` ranks) where marked.
StepOutcome run_trees(const TreeFabric& f, std::uint32_t n, const std::vector<Joined>& joins,
                      unsigned threads, const std::vector<TreeChannel>& second_plans = {},
                      std::uint32_t second_n = 0) {
  EventQueue q;
  Network net(q, f.links);
  const auto plans = std::make_shared<const std::vector<TreeChannel>>(f.trees);
  const auto others = std::make_shared<const std::vector<TreeChannel>>(second_plans);
  UniformTrees uniform;
  uniform.threads = threads;
  CollectiveConfig cfg{.message_size = Bytes::kib(64), .fast_path = FastPath::Bounded};
  cfg.timing.base_latency = Time::us(2);
  cfg.uniform_trees = &uniform;
  std::vector<std::unique_ptr<Collective>> trees;
  std::vector<std::unique_ptr<RankStarter>> starters;
  for (const Joined& j : joins) {
    const std::uint32_t ranks = j.second ? second_n : n;
    trees.push_back(make_tree_collective(net, ranks, j.second ? others : plans, j.size, cfg));
    starters.push_back(std::make_unique<RankStarter>(*trees.back()));
    for (std::uint32_t k = 0; k < ranks; ++k)
      q.schedule_at(j.at, *starters.back(), j.reversed ? ranks - 1 - k : k);
  }
  q.run();
  StepOutcome out;
  for (const auto& t : trees) {
    REQUIRE(t->is_done());
    out.trees.push_back(hybridsim::testing::outcome_of(*t, net));
  }
  if (uniform.runner != nullptr) out.ahead = uniform.runner->ahead();
  out.queued = uniform.runner != nullptr;
  return out;
}

void check_same(const StepOutcome& a, const StepOutcome& b) {
  REQUIRE(a.trees.size() == b.trees.size());
  for (std::size_t i = 0; i < a.trees.size(); ++i) {
    CAPTURE(i);
    hybridsim::testing::check_same(a.trees[i], b.trees[i]);  // finishes, links, bytes, messages
    CHECK(a.trees[i].path.folded == b.trees[i].path.folded);
    CHECK(a.trees[i].path.bound == b.trees[i].path.bound);
    CHECK(a.trees[i].path.simulated == b.trees[i].path.simulated);
    CHECK(a.trees[i].path.private_events == b.trees[i].path.private_events);
  }
}

}  // namespace

TEST_CASE("trees ahead: the same trees, finishes and events with 1, 2 and 3 model threads") {
  // 32 ranks, 4 channels × 2 trees (4 groups of 2 channels); five sizes, one of which (8 MiB + 3 B)
  // makes its first 3 channels a byte longer, so 3 of its groups differ and run; a size again
  // reuses its runs. 5 ms apart: each tree ends before the next joins, which finds its links free.
  const auto f = make_trees(32, 4);
  const Bytes odd = Bytes::of(Bytes::mib(8).count() + 3);
  std::vector<Joined> joins;
  const Bytes sizes[] = {Bytes::mib(8), Bytes::mib(4),  odd, Bytes::mib(8), Bytes::mib(2),
                         odd,           Bytes::kib(640)};
  for (std::size_t i = 0; i < std::size(sizes); ++i)
    joins.push_back({sizes[i], Time::ms(5 * static_cast<std::int64_t>(i))});
  const StepOutcome one = run_trees(f, 32, joins, 1);
  // Each distinct run's events are counted once, by the first tree to use it.
  CHECK(one.trees[0].path.private_events > 0);
  CHECK(one.trees[3].path.private_events == 0);  // 8 MiB again
  CHECK(one.trees[5].path.private_events == 0);  // odd again
  CHECK(one.trees[2].path.private_events > one.trees[0].path.private_events);  // three groups run
  for (const unsigned threads : {2u, 3u}) {
    CAPTURE(threads);
    const StepOutcome more = run_trees(f, 32, joins, threads);
    check_same(more, one);
    MESSAGE(threads << " threads: " << more.ahead << " runs taken from a worker");
  }
  SUBCASE("later trees joining in another order do not use the runs computed ahead") {
    // Trees 1 and 4 join in reverse: their keys differ from the first tree's join order, so what
    // was computed for them ahead is not theirs; they run their own, as with one thread.
    joins[1].reversed = true;
    joins[4].reversed = true;
    const StepOutcome seq = run_trees(f, 32, joins, 1);
    const StepOutcome par = run_trees(f, 32, joins, 2);
    check_same(par, seq);
    CHECK(seq.trees[1].path.private_events > 0);
    CHECK(seq.trees[4].path.private_events > 0);
  }
}

TEST_CASE("trees ahead: trees of two sizes in one step, with 1 and 2 model threads") {
  // A step's 32-rank trees beside 8-rank ones (an expert group's beside the data-parallel trees, as
  // in a Mixtral slice, which crashed with two threads when the first tree queued runs for trees of
  // the other size in its own join order, naming ranks the smaller tree does not have). Whichever
  // size folds first, the other's trees run their own: the same finishes, links and events as with
  // one thread.
  TreeFabric f = make_trees(32, 4);
  const std::vector<TreeChannel> small = append_fabric(f, make_trees(8, 2));
  for (const bool small_first : {false, true}) {
    CAPTURE(small_first);
    std::vector<Joined> joins;
    const Bytes sizes[] = {Bytes::mib(8), Bytes::mib(4), Bytes::mib(2), Bytes::mib(8), Bytes::kib(640)};
    for (std::size_t i = 0; i < std::size(sizes); ++i) {
      const bool second = (i % 2 == 0) == small_first;
      joins.push_back({sizes[i], Time::ms(5 * static_cast<std::int64_t>(i)), false, second});
    }
    const StepOutcome one = run_trees(f, 32, joins, 1, small, 8);
    for (const FoldOutcome& t : one.trees) CHECK(t.path.folded);
    CHECK(one.trees[0].path.private_events > 0);
    CHECK(one.trees[1].path.private_events > 0);  // the other size's first tree runs its own
    const StepOutcome two = run_trees(f, 32, joins, 2, small, 8);
    check_same(two, one);
    CHECK(two.queued);  // the first tree's size's later trees were run ahead
    MESSAGE("two sizes, small first " << small_first << ": " << two.ahead << " runs taken from a worker");
  }
}

TEST_CASE("trees ahead: a run taken from the runner is the run itself") {
  // Three inputs queued on one worker; taken in another order than added (the owner runs what no
  // worker has started), each equals run_tree_model of the same input.
  const auto f = make_trees(16, 2);
  const auto plans = std::make_shared<const std::vector<TreeChannel>>(f.trees);
  auto input = [&](std::int64_t bytes) {
    TreeModelInput in;
    in.links = &f.links;
    in.ranks = 16;
    in.plans = plans;
    in.config.message_size = Bytes::kib(64);
    in.config.timing.base_latency = Time::us(2);
    in.segment = {16, {bytes, bytes}, {0, 1}};
    for (std::uint32_t r = 0; r < 16; ++r) in.join_order.push_back(r);
    in.joined = Time::us(7);
    return in;
  };
  AheadRuns runner(1);
  const std::size_t a = runner.add(input(1 << 20));
  const std::size_t b = runner.add(input(1 << 19));
  const std::size_t c = runner.add(input(3 << 18));
  for (const auto& run : {std::pair{c, 3 << 18}, std::pair{a, 1 << 20}, std::pair{b, 1 << 19}}) {
    CAPTURE(run.second);
    const TreeModelRun got = runner.take(run.first);
    const TreeModelRun want = run_tree_model(input(run.second));
    CHECK(got.done == want.done);
    CHECK(got.busy_until == want.busy_until);
    CHECK(got.real_link == want.real_link);
    CHECK(got.events == want.events);
    CHECK(got.messages == want.messages);
    CHECK(got.events > 0);
  }
  CHECK_THROWS(runner.take(a));  // once
}

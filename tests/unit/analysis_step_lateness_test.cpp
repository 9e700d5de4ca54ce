// analysis/step/step_bound.h: how late a step with bounded folds may end, its collectives' own
// bounds carried through the record's dependencies. Programs and records built by hand, so that
// each rule is seen alone: a chain of collectives on one stream adds their bounds (tensor
// parallelism: 880 ps late under "within 348 ps" when only the largest was stated), a wait released
// by a record after its stream reached it carries only what the record's time does not cover, and
// a folded step's members are not walked; and a shipped pipeline step, whose stated bound was
// passed, against its full simulation.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "analysis/run/scenario_run.h"
#include "analysis/step/step_bound.h"
#include "analysis/step/step_runner.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/scenario.h"
#include "sim/execution_record.h"
#include "tests/paths/paths.h"
#include "tests/unit/staggered_join_step.h"
#include "workloads/program/step_program.h"

using namespace hybridsim;
using sim::Task;
using sim::Time;

namespace {

// GPUs of one stream each: [collective 0, kernel, collective 1, kernel], both collectives over
// every GPU; collective 0 ends at 100 ps, the kernel at 200, collective 1 at 300, the last at 400.
struct ChainStep {
  workloads::StepProgram program;
  sim::ExecutionRecord record;
  explicit ChainStep(std::uint32_t gpus)
      : record(std::vector<std::uint32_t>(gpus, 4), [&] {
          std::vector<std::uint32_t> g(gpus);
          for (std::uint32_t i = 0; i < gpus; ++i) g[i] = i;
          return g;
        }()) {
    program.collectives.resize(2);
    for (std::uint32_t g = 0; g < gpus; ++g) {
      program.gpus.emplace_back().streams.push_back(
          {"compute",
           {Task::collective(0, g), Task::kernel(Time::ps(100), 0), Task::collective(1, g),
            Task::kernel(Time::ps(100), 0)}});
      for (std::uint32_t t = 0; t < 4; ++t) record.set_ended(g, t, Time::ps(100 * (t + 1)));
    }
  }
};

// One GPU: compute [kernel, record e0, collective 2, record e1], communication [wait e0,
// collective 0, wait e1, collective 1]; collective 0 ends at 200 ps, collective 2 (and so e1's
// record) at `e1_at`.
struct BucketStep {
  workloads::StepProgram program;
  sim::ExecutionRecord record{{4, 4}, {0, 0}};
  explicit BucketStep(Time e1_at) {
    program.collectives.resize(3);
    auto& gpu = program.gpus.emplace_back();
    gpu.streams.push_back(
        {"compute",
         {Task::kernel(Time::ps(100), 0), Task::record(0), Task::collective(2, 0), Task::record(1)}});
    gpu.streams.push_back(
        {"communication", {Task::wait(0), Task::collective(0, 0), Task::wait(1), Task::collective(1, 0)}});
    const Time compute[] = {Time::ps(100), Time::ps(100), e1_at, e1_at};
    for (std::uint32_t t = 0; t < 4; ++t) record.set_ended(0, t, compute[t]);
    record.set_ended(1, 0, Time::ps(100));
    record.set_ended(1, 1, Time::ps(200));
    const Time passed = max(e1_at, Time::ps(200));
    record.set_ended(1, 2, passed);
    if (e1_at > Time::ps(200)) record.set_released_by(1, 2, {0, 3});
    record.set_ended(1, 3, passed + Time::ps(100));
  }
  Time bound(std::int64_t own0, std::int64_t own1, std::int64_t own2) const {
    analysis::OwnBounds own;
    for (const auto& [c, b] : {std::pair{0u, own0}, {1u, own1}, {2u, own2}})
      if (b > 0) own.emplace_back(c, Time::ps(b));
    return analysis::step_bound(program, record, own, {});
  }
};

}  // namespace

TEST_CASE("step lateness: a chain of collectives on one stream adds their bounds") {
  const ChainStep s(2);
  CHECK(analysis::step_bound(s.program, s.record, {{0, Time::ps(3)}, {1, Time::ps(5)}}, {}) == Time::ps(8));
  CHECK(analysis::step_bound(s.program, s.record, {{1, Time::ps(5)}}, {}) == Time::ps(5));
  CHECK(analysis::step_bound(s.program, s.record, {}, {}) == Time::zero());
}

TEST_CASE("step lateness: a folded step's members are not walked") {
  // GPU 1 stands for itself and GPU 2, which ran nothing (its record holds no task). GPU 2's program
  // also has a collective of its own, 100 ps bounded: walked, the step would be 108 ps late.
  ChainStep s(3);
  s.program.collectives.resize(3);
  s.program.gpus[2].streams[0].tasks = {Task::collective(0, 2), Task::kernel(Time::ps(100), 0),
                                        Task::collective(1, 2), Task::collective(2, 0)};
  sim::ExecutionRecord record({4, 4, 4}, {0, 1, 2});
  for (std::uint32_t g = 0; g < 2; ++g)
    for (std::uint32_t t = 0; t < 4; ++t) record.set_ended(g, t, Time::ps(100 * (t + 1)));
  const analysis::OwnBounds own = {{0, Time::ps(3)}, {1, Time::ps(5)}, {2, Time::ps(100)}};
  CHECK(analysis::step_bound(s.program, record, own, {0, 1, 1}) == Time::ps(8));
}

TEST_CASE("step lateness: a rank that ended before another joined carries none of that one's lateness") {
  // A transfer's sender (GPU 0) ends at 150 ps, before its receiver (GPU 1) joins at 200, 7 ps late
  // from collective 0 before it; the sender's stream goes on to collective 2. Whichever GPU's walk
  // is taken first, the sender is late by its own bound alone, not the receiver's 7 ps.
  workloads::StepProgram program;
  program.collectives.resize(3);
  program.gpus.emplace_back().streams.push_back(
      {"compute", {Task::collective(1, 0), Task::collective(2, 0)}});
  program.gpus.emplace_back().streams.push_back(
      {"compute", {Task::collective(0, 0), Task::collective(1, 1)}});
  sim::ExecutionRecord record({2, 2}, {0, 1});
  record.set_ended(0, 0, Time::ps(150));
  record.set_ended(0, 1, Time::ps(400));
  record.set_ended(1, 0, Time::ps(200));
  record.set_ended(1, 1, Time::ps(300));
  const analysis::OwnBounds own = {{0, Time::ps(7)}, {1, Time::ps(2)}, {2, Time::ps(1)}};
  CHECK(analysis::step_bound(program, record, own, {}) == Time::ps(9));  // GPU 1: 7 + 2; GPU 0: 2 + 1
  CHECK(analysis::step_bound(program, record, {{1, Time::ps(2)}, {2, Time::ps(1)}}, {}) == Time::ps(3));
}

TEST_CASE("step lateness: a collective of 2,048 ranks, each ending before the next joins, walked in full") {
  // Rank g's end carries the most the ranks joined by then were late by (tests/unit/
  // staggered_join_step.h): the walk finds them as a prefix of the ranks in join order. Stalled, it
  // would state every bound added up; scanned rank by rank, it took 0.17 s of CPU at 4,096 ranks
  // (tests/bench/bench_step_bound.cpp).
  const testing::StaggeredJoinStep s(2048);
  CHECK(s.expected() == Time::ps(997 + 1000));
  CHECK(analysis::step_bound(s.program, s.record, s.own, {}) == s.expected());
  // Without collective 0's bound, the most of the lone collectives' own, carried through it.
  analysis::OwnBounds lone(s.own.begin() + 1, s.own.end());
  CHECK(analysis::step_bound(s.program, s.record, lone, {}) == Time::ps(997));
}

TEST_CASE("step lateness: a walk that stalls on a tie states every walked collective's bound added up") {
  // A rank ends at 200 ps as another joins at 200 ps, that join caused by the end (the second GPU
  // waits on a record after the first rank's end): the times cannot tell it from a join the end
  // waited on, so the walk stalls; any chain is late by at most the bounds added up.
  workloads::StepProgram program;
  program.collectives.resize(1);
  program.gpus.emplace_back().streams.push_back({"compute", {Task::collective(0, 0), Task::record(0)}});
  program.gpus.emplace_back().streams.push_back({"compute", {Task::wait(0), Task::collective(0, 1)}});
  sim::ExecutionRecord record({2, 2}, {0, 1});
  record.set_ended(0, 0, Time::ps(200));
  record.set_ended(0, 1, Time::ps(200));
  record.set_ended(1, 0, Time::ps(200));
  record.set_released_by(1, 0, {0, 1});
  record.set_ended(1, 1, Time::ps(300));
  CHECK(analysis::step_bound(program, record, {{0, Time::ps(4)}}, {}) == Time::ps(4));
}

TEST_CASE(
    "step lateness: a wait released after its stream got there carries what the record's time does not "
    "cover") {
  // Recorded before collective 0 ended (7 ps late): the wait passed as its stream got there.
  CHECK(BucketStep(Time::ps(150)).bound(7, 5, 0) == Time::ps(12));
  // At the same time: not released by the record (the stream was there first), as late.
  CHECK(BucketStep(Time::ps(200)).bound(7, 5, 0) == Time::ps(12));
  // Later, and the record on time: the record alone held the wait, so it passed on time.
  CHECK(BucketStep(Time::ps(203)).bound(7, 5, 0) == Time::ps(5));
  CHECK(BucketStep(Time::ps(300)).bound(7, 5, 0) == Time::ps(5));
  // The record itself up to 4 ps late (after collective 2): in full the wait passed no earlier than
  // the later of 193 ps (collective 0's end) and 199 ps (the record's): 4 ps late at 203 ps.
  CHECK(BucketStep(Time::ps(203)).bound(7, 5, 4) == Time::ps(9));
  CHECK(BucketStep(Time::ps(150)).bound(7, 5, 4) == Time::ps(12));
  // Collective 0 only 2 ps late, the record 4: in full no earlier than 198 ps, here 201: 3 ps.
  CHECK(BucketStep(Time::ps(201)).bound(2, 5, 4) == Time::ps(8));
}

TEST_CASE("step lateness: GPT-3 tp 8 x pp 8, 1F1B, within the bound it states of its full simulation") {
  // Each tensor-parallel all-reduce folds within a few hundred ps; the stage's compute waits on it
  // and joins the next, and the pipeline's transfers carry it to the next stage. Stated as the
  // largest collective's own (439 ps), the step ran 4 ns late against the full simulation.
  const auto step = [](const std::string& fast_path) {
    const std::vector<std::string> sets = {"training.global_batch=8", "communication.fast_path=" + fast_path};
    const scenarios::ResolvedScenario resolved = scenarios::resolve(
        scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/llm/gpt3-175b-pp8-dgx-a100.yaml", sets));
    return analysis::simulate_step(analysis::step_setup(resolved));
  };
  const analysis::StepResult bounded = step("bounded");
  const analysis::StepResult full = step("off");
  MESSAGE("bounded " << bounded.step_time.ps() << " ps, full " << full.step_time.ps() << " ps, stated bound "
                     << bounded.simulation.bound.ps() << " ps");
  REQUIRE(bounded.simulation.folded > 0);
  CHECK(full.simulation.bound == Time::zero());
  CHECK(bounded.step_time >= full.step_time);
  CHECK(bounded.step_time - full.step_time <= bounded.simulation.bound);
  CHECK(bounded.simulation.bound < Time::ns(100));
}

// Which of a step's folding rings cannot fall back to running in full as they start
// (analysis/step/ring_fallback.h), held to what the rings do when run: three all-reduces over the same
// ring links, one after another on one stream of each GPU (one lane), all fold, as the rule says;
// the same three on three streams (three lanes) start together, and the third finds its links held
// by one folded ring and promised to another, so it runs in full, where the rule called none safe.
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/step/ring_fallback.h"
#include "analysis/step/step_in_flight.h"
#include "scenarios/loader/scenario.h"
#include "sim/fast/fast_path.h"
#include "sim/fast/folded_ring.h"
#include "sim/fast/link_claims.h"
#include "sim/network.h"
#include "tests/unit/estimated_run.h"
#include "workloads/program/step_program_types.h"

using namespace hybridsim;
using sim::Time;

namespace {

constexpr std::uint32_t kRanks = 4;
constexpr std::uint32_t kRings = 3;

// A ring of 4 GPUs whose edge p is its own NVLink (25 GB/s, 500 ns): one channel.
struct Fabric {
  sim::LinkTable links;
  std::vector<sim::RingChannel> channels;
};

Fabric make_fabric() {
  Fabric f;
  sim::RingChannel ch;
  for (std::uint32_t p = 0; p < kRanks; ++p) {
    ch.order.push_back(p);
    ch.routes.push_back(
        {f.links.add({sim::LinkKind::NVLink, sim::Bandwidth::gb_per_second(25), Time::ns(500), "edge"})});
  }
  f.channels.push_back(std::move(ch));
  return f;
}

// Three all-reduces over GPUs 0-3; ring k on stream `stream_of(k)` of every GPU.
workloads::StepProgram make_program(bool one_stream) {
  workloads::StepProgram program;
  program.gpus.resize(kRanks);
  for (auto& gpu : program.gpus) gpu.streams.resize(kRings + 1);
  for (std::uint32_t k = 0; k < kRings; ++k) {
    workloads::CollectiveSpec spec;
    spec.op = sim::CollectiveOp::AllReduce;
    spec.members = {0, 1, 2, 3};
    program.collectives.push_back(spec);
    for (std::uint32_t g = 0; g < kRanks; ++g)
      program.gpus[g].streams[one_stream ? 1 : 1 + k].tasks.push_back(sim::Task::collective(k, g));
  }
  return program;
}

struct Run {
  std::vector<std::uint8_t> safe;
  std::vector<sim::SimulationPath> paths;
  std::vector<std::uint64_t> windows;
  bool interfered = false;
};

// Builds the three rings (1 MiB each, 64 KiB messages: chunks of 256 KiB, 4 messages), asks the rule,
// then runs them: one after another on each GPU (a rank joins ring k + 1 when done with ring k), or
// every rank of every ring at 0.
Run run(bool one_stream) {
  const Fabric f = make_fabric();
  const workloads::StepProgram program = make_program(one_stream);
  sim::EventQueue q;
  sim::Network net(q, f.links);
  const sim::CollectiveConfig cfg{.message_size = sim::Bytes::kib(64), .fast_path = sim::FastPath::Auto};
  std::vector<std::unique_ptr<sim::Collective>> rings;
  for (std::uint32_t k = 0; k < kRings; ++k)
    rings.push_back(sim::make_ring_collective(net, sim::CollectiveOp::AllReduce, kRanks, f.channels,
                                              sim::Bytes::mib(1), cfg));
  Run out;
  out.safe = analysis::rings_without_fallback(analysis::InFlightLanes(program), rings);
  for (const auto& ring : rings) {
    const auto* folded = dynamic_cast<const sim::FoldedRing*>(ring.get());
    REQUIRE(folded != nullptr);
    out.windows.push_back(analysis::folding_ring_window(*folded));
  }
  struct Next final : sim::EventHandler {
    sim::Collective* next = nullptr;
    void on_event(std::uint64_t r) override { next->start(static_cast<std::uint32_t>(r)); }
  };
  std::vector<Next> starters(kRings);
  for (std::uint32_t k = 0; k < kRings; ++k) starters[k].next = rings[k].get();
  for (std::uint32_t k = 0; k + 1 < kRings && one_stream; ++k) rings[k]->notify_rank_done(starters[k + 1], 0);
  for (std::uint32_t k = 0; k < (one_stream ? 1 : kRings); ++k)
    for (std::uint32_t r = 0; r < kRanks; ++r) q.schedule_at(Time::zero(), starters[k], r);
  q.run();
  for (const auto& ring : rings) {
    REQUIRE(ring->is_done());
    out.paths.push_back(ring->simulation_path());
  }
  out.interfered = sim::interfered(net);
  return out;
}

}  // namespace

TEST_CASE("ring fallback: rings of one lane on their own links are safe, and fold when run") {
  const Run r = run(true);
  CHECK_FALSE(r.interfered);
  for (std::uint32_t k = 0; k < kRings; ++k) {
    CAPTURE(k);
    CHECK(r.safe[k] == 1);
    CHECK(r.paths[k].folded);
    // Counted at 4 positions of a chunk of 4 messages each (256 KiB in 64 KiB messages); its model,
    // of the one position every other repeats, holds fewer (a message's slot is free once it enters
    // its last link, here its only one).
    CHECK(r.windows[k] == 4 * 4);
    CHECK(r.paths[k].model_in_flight >= 1);
    CHECK(r.paths[k].model_in_flight <= r.windows[k]);
  }
}

TEST_CASE("ring fallback: rings of three lanes on the same links are not safe, and one runs in full") {
  const Run r = run(false);
  for (std::uint32_t k = 0; k < kRings; ++k) CHECK(r.safe[k] == 0);
  CHECK(r.paths[0].folded);  // the first claims the links, the second is promised them
  CHECK(r.paths[1].folded);
  CHECK_FALSE(r.paths[2].folded);
  CHECK(std::string(r.paths[2].reason) == "two other folded collectives hold its links");
  CHECK(r.paths[2].model_in_flight == 0);
}

TEST_CASE("ring fallback: a folded step's shadow runs nothing and leaves a ring safe") {
  // Rings 0 and 2 are shadows (null: never simulated, no traffic): ring 1 alone crosses its links.
  const Fabric f = make_fabric();
  const workloads::StepProgram program = make_program(true);
  sim::EventQueue q;
  sim::Network net(q, f.links);
  const sim::CollectiveConfig cfg{.message_size = sim::Bytes::kib(64), .fast_path = sim::FastPath::Auto};
  std::vector<std::unique_ptr<sim::Collective>> rings(kRings);
  rings[1] = sim::make_ring_collective(net, sim::CollectiveOp::AllReduce, kRanks, f.channels,
                                       sim::Bytes::mib(1), cfg);
  const std::vector<std::uint8_t> safe =
      analysis::rings_without_fallback(analysis::InFlightLanes(program), rings);
  CHECK(safe == std::vector<std::uint8_t>{0, 1, 0});
}

TEST_CASE("ring fallback: a step's data-parallel rings are checked up front at their models' window") {
  // GNMT dp 4 x mp 2 on one DGX-1 (every GPU simulated, no shadows): its data-parallel all-reduces,
  // lanes of rings whose links nothing else crosses, each counted at one channel's positions, a chunk
  // each, where every channel's were: the messages its memory check counts fall below what it holds
  // with every collective in full (full_in_flight, the same figure before: 1,104), and still bound
  // what its run held, its models' messages included. (GNMT DP 8 on the same machine is not
  // tightened, 576 of 576: the rule calls none of its rings safe.)
  const testing::EstimatedRun run = testing::estimate_and_run(
      scenarios::load_scenario(HYBRIDSIM_SOURCE_DIR + "/scenarios/examples/dgx1-gnmt-mp2-rules.yaml", {}));
  MESSAGE("in flight ", run.estimate.in_flight, " of ", run.estimate.full_in_flight, "; held ", run.held,
          " of ", run.estimate.memory());
  CHECK(run.result.simulation.gpus_simulated == 0);  // every GPU: the two figures count the same collectives
  CHECK(run.estimate.in_flight < run.estimate.full_in_flight);
  CHECK(run.result.simulation.most_in_flight + run.result.simulation.model_in_flight <=
        run.estimate.in_flight);
  CHECK(run.held <= run.estimate.memory());
}

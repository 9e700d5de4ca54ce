// Progress of building a step's programs (workloads/program/build_progress.h): the builders tell
// their listener every kBuildTickEvery workers (TP replicas), and the programs are those built
// without one. (A step's progress lines of its build, by a clock driven by hand:
// tests/unit/analysis_step_progress_test.cpp.)
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/unit/toy_profile.h"
#include "topology/presets.h"
#include "workloads/program/mapping.h"
#include "workloads/program/pipeline_program.h"
#include "workloads/program/placement.h"
#include "workloads/program/step_program.h"

using namespace hybridsim;

namespace {

struct Tick {
  std::string part;
  std::uint64_t done, total;
  std::string unit;
};

struct Ticks final : workloads::ProgramBuildProgress {
  std::vector<Tick> seen;
  void built(std::string_view part, std::uint64_t done, std::uint64_t total, std::string_view unit) override {
    seen.push_back({std::string(part), done, total, std::string(unit)});
  }
};

// Both programs the same: every GPU's streams, task by task, and the collectives' members.
void check_same_program(const workloads::StepProgram& a, const workloads::StepProgram& b) {
  CHECK(a.event_count == b.event_count);
  CHECK(a.dp == b.dp);
  CHECK(a.tp == b.tp);
  REQUIRE(a.collectives.size() == b.collectives.size());
  for (std::size_t c = 0; c < a.collectives.size(); ++c)
    CHECK(a.collectives[c].members == b.collectives[c].members);
  REQUIRE(a.gpus.size() == b.gpus.size());
  for (std::size_t g = 0; g < a.gpus.size(); ++g) {
    REQUIRE(a.gpus[g].streams.size() == b.gpus[g].streams.size());
    for (std::size_t s = 0; s < a.gpus[g].streams.size(); ++s) {
      const sim::TaskList& x = a.gpus[g].streams[s].tasks;
      const sim::TaskList& y = b.gpus[g].streams[s].tasks;
      REQUIRE(x.size() == y.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        CHECK(x[i].kind == y[i].kind);
        CHECK(x[i].id == y[i].id);
        CHECK(x[i].rank == y[i].rank);
        CHECK(x[i].duration == y[i].duration);
      }
    }
  }
}

}  // namespace

TEST_CASE("build progress: a tick every 64 workers, the same program as without") {
  // 200 workers of mp 2 on 400 GPUs: ticks at workers 0, 64, 128 and 192 of 200.
  const workloads::Profile p = testing::toy_chain(4, sim::Bytes::mib(1));
  const topology::Topology t = topology::presets::fully_connected({.gpus = 400});
  const workloads::MpPlacement placement = workloads::partition_layers(p, 2);
  const workloads::WorkerMapping mapping = workloads::default_mapping(t, 200, 2);
  Ticks ticks;
  const workloads::StepProgram told = workloads::build_step_program(p, placement, mapping, 400, {}, &ticks);
  REQUIRE(ticks.seen.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(ticks.seen[i].part == "the workers' streams");
    CHECK(ticks.seen[i].done == 64 * i);
    CHECK(ticks.seen[i].total == 200);
    CHECK(ticks.seen[i].unit == "workers");
  }
  check_same_program(told, workloads::build_step_program(p, placement, mapping, 400, {}));
}

TEST_CASE("build progress: tensor parallelism's replicas are a part of their own") {
  // 256 workers of tp 2: the workers' streams at 0, 64, 128, 192 of 256, then 128 replicas' TP
  // collectives at 0 and 64.
  const workloads::Profile p = testing::toy_chain(4, sim::Bytes::mib(1));
  const topology::Topology t = topology::presets::fully_connected({.gpus = 256});
  const workloads::MpPlacement placement = workloads::place_all_on_first(p, 1);
  const workloads::WorkerMapping mapping = workloads::default_mapping(t, 256, 1);
  workloads::StepOptions options;
  options.tp = 2;
  Ticks ticks;
  const workloads::StepProgram told =
      workloads::build_step_program(p, placement, mapping, 256, options, &ticks);
  REQUIRE(ticks.seen.size() == 6);
  CHECK(ticks.seen[3].done == 192);
  CHECK(ticks.seen[4].part == "the TP groups' collectives");
  CHECK(ticks.seen[4].done == 0);
  CHECK(ticks.seen[5].done == 64);
  CHECK(ticks.seen[5].total == 128);
  CHECK(ticks.seen[5].unit == "replicas");
  check_same_program(told, workloads::build_step_program(p, placement, mapping, 256, options));
}

TEST_CASE("build progress: a pipeline's workers tick as a step's do") {
  // A chain of 4 ops in 2 stages, 80 workers of 4 micro-batches: ticks at workers 0 and 64.
  const workloads::Profile p = testing::toy_chain(4, sim::Bytes::mib(1));
  const topology::Topology t = topology::presets::fully_connected({.gpus = 160});
  const workloads::WorkerMapping mapping = workloads::default_mapping(t, 80, 2);
  workloads::StepOptions options;
  options.pipeline.pp = 2;
  options.accumulation = 4;
  Ticks ticks;
  const workloads::StepProgram told = workloads::build_pipeline_program(p, mapping, 160, options, &ticks);
  REQUIRE(ticks.seen.size() == 2);
  CHECK(ticks.seen[1].part == "the workers' streams");
  CHECK(ticks.seen[1].done == 64);
  CHECK(ticks.seen[1].total == 80);
  check_same_program(told, workloads::build_pipeline_program(p, mapping, 160, options));
}

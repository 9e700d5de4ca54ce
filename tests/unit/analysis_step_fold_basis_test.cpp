// The step fold's class keys (analysis/step/step_fold.h): GPUs at the same place in machines wired
// alike, with the same program and speed scales, share a key; a GPU whose scales no other GPU has
// keeps a key of its own (its tasks are then not hashed), and GPUs that share a scale other than
// one are still told apart by place only. A shared task list is hashed once for all its readers:
// its tasks count by what they are, not by whose list holds them, and each reader's own collectives
// still count.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "analysis/step/step_fold.h"
#include "analysis/step/step_runner.h"
#include "topology/preset_registry.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;

namespace {

// GNMT data parallel over both machines' 16 GPUs: every GPU's program alike.
workloads::StepProgram dp_program(const workloads::Profile& profile, const topology::Topology& topology) {
  analysis::StepSetup s;
  s.profile = &profile;
  s.topology = &topology;
  s.placement = workloads::partition(profile, 1, workloads::default_partitioner(profile));
  s.mapping = workloads::default_mapping(topology, 16, 1);
  return analysis::build_program(s);
}

}  // namespace

TEST_CASE("step fold keys: alike GPUs share a key, a GPU alone by its speed scales has its own") {
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  const topology::Topology topology = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  workloads::StepProgram program = dp_program(profile, topology);
  const auto keys = [&] { return analysis::step_fold_basis(program, topology).key; };
  REQUIRE(program.gpus.size() == 16);
  const std::vector<std::uint64_t> even = keys();
  REQUIRE(even.size() == 16);
  for (std::size_t g = 0; g < 8; ++g) CHECK(even[g] == even[g + 8]);  // the same place in each machine
  CHECK(even[0] != even[1]);  // another place in the machine

  program.gpus[3].compute_scale = 1.5;  // no other GPU runs at 1.5
  const std::vector<std::uint64_t> one = keys();
  for (std::size_t g = 0; g < 16; ++g)
    if (g != 3) CHECK(one[g] != one[3]);
  for (std::size_t g = 0; g < 8; ++g)
    if (g != 3) CHECK(one[g] == one[g + 8]);

  program.gpus[11].compute_scale = 1.5;  // GPU 3's place in the other machine: alike again
  const std::vector<std::uint64_t> two = keys();
  CHECK(two[3] == two[11]);
  CHECK(two[3] != even[3]);  // but not alike GPUs at another scale
  program.gpus[11].sample_scale = 1.25;  // the pair of scales counts, not the compute scale alone
  CHECK(keys()[3] != keys()[11]);
  program.gpus[11].sample_scale = 1.0;

  // Sharing their scales, they are told apart by their programs: one more task on GPU 11's first stream.
  sim::TaskList& tasks = program.gpus[11].streams[0].tasks;
  REQUIRE(tasks.size() > 0);
  tasks.push_back(tasks[tasks.size() - 1]);
  CHECK(keys()[3] != keys()[11]);
}

TEST_CASE("step fold keys: a shared list counts by its tasks, and each reader's collectives by its own") {
  const workloads::Profile profile = workloads::builtin_profile("gnmt");
  const topology::Topology topology = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  workloads::StepProgram program = dp_program(profile, topology);
  const auto keys = [&] { return analysis::step_fold_basis(program, topology).key; };
  // GPU 11's compute stream reads worker 0's list, shifted; a copy of its own with the same tasks
  // is the same program, so GPU 11 stays alike to GPU 3 (a hash of the list's identity would not).
  sim::TaskList& compute = program.gpus[11].streams[0].tasks;
  REQUIRE(compute.is_shared());
  compute.mutate();
  REQUIRE_FALSE(compute.is_shared());
  const std::vector<std::uint64_t> own = keys();
  CHECK(own[3] == own[11]);
  CHECK(own[3] != own[4]);

  // One list of a kernel and a collective, read by GPUs 3 and 11 (of a fresh program) as collective 0
  // and a copy of it appended last (shifted).
  // With both the same size they stay alike; with collective 1 twice the bytes GPU 11 is told
  // apart, though the list's shape was hashed once, as GPU 3 read it.
  program = dp_program(profile, topology);
  program.collectives.push_back(program.collectives[0]);
  const auto second = static_cast<std::uint32_t>(program.collectives.size() - 1);
  sim::TaskList base{sim::Task::kernel(sim::Time::us(5), 0), sim::Task::collective(0, 0)};
  program.gpus[3].streams.push_back({"extra", sim::TaskList::shifted_from(base, 0, 0)});
  program.gpus[11].streams.push_back({"extra", sim::TaskList::shifted_from(base, 0, second)});
  REQUIRE(program.gpus[3].streams.back().tasks.same_tasks() ==
          program.gpus[11].streams.back().tasks.same_tasks());
  CHECK(keys()[3] == keys()[11]);
  program.collectives[second].size = sim::Bytes::of(2 * program.collectives[0].size.count());
  const std::vector<std::uint64_t> apart = keys();
  CHECK(apart[3] != apart[11]);
  CHECK(apart[4] == apart[12]);  // the others unchanged
}

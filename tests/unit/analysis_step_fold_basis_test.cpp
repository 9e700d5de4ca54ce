// The step fold's class keys (analysis/step/step_fold.h): GPUs at the same place in machines wired
// alike, with the same program and speed scales, share a key; a GPU whose scales no other GPU has
// keeps a key of its own (its tasks are then not hashed), and GPUs that share a scale other than
// one are still told apart by place only.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "analysis/step/step_fold.h"
#include "analysis/step/step_runner.h"
#include "topology/preset_registry.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;

namespace {

struct Case {
  workloads::Profile profile = workloads::builtin_profile("gnmt");
  topology::Topology topology = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  workloads::StepProgram program;
  Case() {
    analysis::StepSetup s;
    s.profile = &profile;
    s.topology = &topology;
    s.placement = workloads::partition(profile, 1, workloads::default_partitioner(profile));
    s.mapping = workloads::default_mapping(topology, 16, 1);
    program = analysis::build_program(s);
  }
  std::vector<std::uint64_t> keys() const { return analysis::step_fold_basis(program, topology).key; }
};

}  // namespace

TEST_CASE("step fold keys: alike GPUs share a key, a GPU alone by its speed scale has its own") {
  Case c;
  REQUIRE(c.program.gpus.size() == 16);
  const std::vector<std::uint64_t> even = c.keys();
  REQUIRE(even.size() == 16);
  for (std::size_t g = 0; g < 8; ++g) CHECK(even[g] == even[g + 8]);  // the same place in each machine
  CHECK(even[0] != even[1]);  // another place in the machine

  c.program.gpus[3].compute_scale = 1.5;  // no other GPU runs at 1.5
  const std::vector<std::uint64_t> one = c.keys();
  for (std::size_t g = 0; g < 16; ++g)
    if (g != 3) CHECK(one[g] != one[3]);
  for (std::size_t g = 0; g < 8; ++g)
    if (g != 3) CHECK(one[g] == one[g + 8]);

  c.program.gpus[11].compute_scale = 1.5;  // GPU 3's place in the other machine: alike again
  const std::vector<std::uint64_t> two = c.keys();
  CHECK(two[3] == two[11]);
  CHECK(two[3] != even[3]);  // but not alike GPUs at another scale
  // Sharing a scale, they are told apart by their programs: one more task on GPU 11's first stream.
  sim::TaskList& tasks = c.program.gpus[11].streams[0].tasks;
  REQUIRE(tasks.size() > 0);
  tasks.push_back(tasks[tasks.size() - 1]);
  CHECK(c.keys()[3] != c.keys()[11]);
}

TEST_CASE("step fold keys: the pair of speed scales makes a GPU alone, not its compute scale alone") {
  Case c;
  c.program.gpus[3].compute_scale = c.program.gpus[11].compute_scale = 1.5;
  c.program.gpus[11].sample_scale = 1.25;
  const std::vector<std::uint64_t> keys = c.keys();
  CHECK(keys[3] != keys[11]);
  for (std::size_t g = 0; g < 8; ++g)
    if (g != 3) CHECK(keys[g] == keys[g + 8]);
}

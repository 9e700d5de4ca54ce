// communication.algorithm: hierarchical needs the same number (2 or more) of a collective's GPUs on
// each of two machines or more; elsewhere the planner runs the ring. `run` ran it under the label
// asked for without a word (one machine: every all-reduce a ring); its summary now says how many
// all-reduces ran as rings and why, and `collective` refuses such a GPU list.
#include <doctest/doctest.h>

#include <string>

#include "analysis/api/hybridsim.h"
#include "analysis/step/step_report.h"
#include "topology/preset_registry.h"
#include "workloads/comm/comm_plan.h"
#include "workloads/memory/memory_model.h"

namespace api = hybridsim::api;
namespace analysis = hybridsim::analysis;
namespace topology = hybridsim::topology;
namespace workloads = hybridsim::workloads;

namespace {

api::RunReport run_gnmt(int nodes, int dp, int mp) {
  const std::string text = "cluster: {preset: dgx1-v100, nodes: " + std::to_string(nodes) +
                           "}\nworkload: {network: gnmt}\nparallelism: {dp: " + std::to_string(dp) +
                           ", mp: " + std::to_string(mp) + "}\ncommunication: {algorithm: hierarchical}\n";
  return api::run({.path = "h.yaml", .text = text}, {.write_outputs = false});
}

}  // namespace

TEST_CASE("hierarchical on one machine: every all-reduce ran as the ring, and the summary says so") {
  const api::RunReport r = run_gnmt(1, 8, 1);
  const auto& s = r.run.step.simulation;
  CHECK(s.hierarchical > 0);
  CHECK(s.hierarchical_as_ring == s.hierarchical);
  CHECK(s.hierarchical_unfit == "all on machine 0");
  const std::string table = analysis::step_summary_table(r.run.step, {});
  CHECK(table.find("all-reduce algorithm") != std::string::npos);
  CHECK(table.find("hierarchical asked; every all-reduce (" + std::to_string(s.hierarchical) +
                   ") ran as the ring: its GPUs are all on machine 0") != std::string::npos);
}

TEST_CASE("hierarchical on two machines: rings where a step's GPUs fit one, said, and two a machine run it") {
  // dp 2 × mp 4 on two DGX-1 uses 8 of the 16 GPUs, all on machine 0.
  const api::RunReport one = run_gnmt(2, 2, 4);
  CHECK(one.run.step.simulation.hierarchical > 0);
  CHECK(one.run.step.simulation.hierarchical_as_ring == one.run.step.simulation.hierarchical);
  CHECK(one.run.step.simulation.hierarchical_unfit == "all on machine 0");
  // dp 8 × mp 4 on four: two GPUs of each group on every machine, so it runs hierarchical.
  const api::RunReport two = run_gnmt(4, 8, 4);
  CHECK(two.run.step.simulation.hierarchical > 0);
  CHECK(two.run.step.simulation.hierarchical_as_ring == 0);
  CHECK(analysis::step_summary_table(two.run.step, {}).find("all-reduce algorithm") == std::string::npos);
}

TEST_CASE(
    "hierarchical where every all-reduce ran as the ring: the memory line counts the ring's NCCL buffers") {
  // NCCL's buffers: channels (6 assumed, kAssumedNcclChannels) × connections a channel × one
  // connection's buffers; the ring receives on 1 connection, hierarchical's two rings on 2. Before,
  // the one-machine step counted 2 (0.11 GiB) although every all-reduce ran as the ring.
  using workloads::MemoryPart;
  const auto buffers = [](int connections) {
    return hybridsim::sim::Bytes::of(workloads::kAssumedNcclChannels * connections *
                                     workloads::kNcclConnectionBuffers.count());
  };
  const api::RunReport one = run_gnmt(1, 8, 1);
  REQUIRE(one.run.step.simulation.hierarchical_as_ring == one.run.step.simulation.hierarchical);
  CHECK(one.run.memory.ranks.at(0).peak[MemoryPart::CommBuffers] == buffers(1));
  // dp 8 × mp 4 on four DGX-1 runs hierarchical: both ranks' groups two a machine.
  const api::RunReport four = run_gnmt(4, 8, 4);
  REQUIRE(four.run.step.simulation.hierarchical_as_ring == 0);
  for (const auto& rank : four.run.memory.ranks) CHECK(rank.peak[MemoryPart::CommBuffers] == buffers(2));
}

TEST_CASE("hierarchical_unfit: why a GPU list cannot run the hierarchical all-reduce") {
  const topology::Topology t = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  CHECK(workloads::hierarchical_unfit(t, {0, 1, 2, 3}) == "all on machine 0");
  CHECK(workloads::hierarchical_unfit(t, {0, 8}) == "one on each of 2 machines");
  CHECK(workloads::hierarchical_unfit(t, {0, 1, 2, 8}) ==
        "on machines holding unequal numbers of them (machine 0: 3, machine 1: 1)");
  CHECK(workloads::hierarchical_unfit(t, {0, 1, 8, 9}).empty());
}

// workloads::CommPlanner: what NCCL's model is told about a communicator (machines, channels, the
// per-channel payload speed), the algorithm and protocol each call gets, point-to-point copies at
// line rate, the hierarchical phases, and make_collective running what was planned.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/error.h"
#include "sim/work_progress.h"
#include "topology/preset_registry.h"
#include "workloads/comm/comm_plan.h"

using namespace hybridsim;
using workloads::AllReduceAlgorithm;

namespace {

workloads::CollectiveSpec spec_of(sim::CollectiveOp op, sim::Bytes size, std::vector<int> members) {
  workloads::CollectiveSpec s;
  s.op = op;
  s.size = size;
  s.members = std::move(members);
  return s;
}

std::vector<int> first(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

}  // namespace

TEST_CASE("comm plan: option names") {
  CHECK(workloads::parse_algorithm("auto") == AllReduceAlgorithm::Auto);
  CHECK(workloads::parse_algorithm("tree") == AllReduceAlgorithm::Tree);
  CHECK(workloads::algorithm_name(AllReduceAlgorithm::Hierarchical) == "hierarchical");
  CHECK_THROWS_WITH_AS(workloads::parse_algorithm("star"),
                       doctest::Contains("auto, ring, tree or hierarchical"), InputError);
  CHECK_FALSE(workloads::parse_protocol_option("auto"));
  CHECK(workloads::parse_protocol_option("ll128") == sim::Protocol::LL128);
  CHECK(workloads::parse_protocol_option("ideal") == sim::Protocol::Ideal);
  CHECK(workloads::protocol_option_name(sim::Protocol::Simple) == "simple");
  CHECK(workloads::protocol_option_name(std::nullopt) == "auto");
  CHECK_THROWS_WITH_AS(workloads::parse_protocol_option("fast"),
                       doctest::Contains("auto, ll, ll128, simple or ideal"), InputError);
}

TEST_CASE("comm plan: what NCCL's model is told about DGX-1 communicators") {
  const auto one = topology::build_cluster({.preset = "dgx1-v100"});
  workloads::CommPlanner planner(one, {});
  // 6 NVLink channels: a doubled NVLink (2 × 25 GB/s × 0.8 = 40 GB/s of payload) carries 2 of
  // them, a single one (20) 1: 20 GB/s a channel, NCCL's SM70_NVLINK_BW.
  const sim::NcclMachine m = planner.nccl_machine(first(8), sim::CollectiveOp::AllReduce);
  CHECK(m.ranks == 8);
  CHECK(m.nodes == 1);
  CHECK(m.channels == 6);
  CHECK(m.channel_gb_per_s == doctest::Approx(20));
  CHECK(m.intra == sim::HopKind::NVLink);
  CHECK(m.ll128);
  // Forced onto PCIe, the ring crosses QPI (2 × 19.2 GB/s at NCCL's Broadwell 6 GB/s: × 6/38.4).
  workloads::CommPlanner pcie(one, {.pcie_only = true});
  const sim::NcclMachine p = pcie.nccl_machine(first(8), sim::CollectiveOp::AllReduce);
  CHECK(p.channels == 1);
  CHECK(p.channel_gb_per_s == doctest::Approx(6));
  CHECK(p.intra == sim::HopKind::PCIe);
  CHECK_FALSE(p.ll128);
  // Four machines: one channel per NIC, each at 12.5 GB/s × 0.96 = 12 GB/s (NET_BW).
  const auto four = topology::build_cluster({.preset = "dgx1-v100", .nodes = 4});
  workloads::CommPlanner across(four, {});
  const sim::NcclMachine f = across.nccl_machine(first(32), sim::CollectiveOp::AllReduce);
  CHECK(f.nodes == 4);
  CHECK(f.channels == 4);
  CHECK(f.channel_gb_per_s == doctest::Approx(12));
}

TEST_CASE("comm plan: NCCL's choice per call, fixed choices, point-to-point copies") {
  const auto one = topology::build_cluster({.preset = "dgx1-v100"});
  workloads::CommPlanner planner(one, {});
  const auto small = planner.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::kib(1), first(8)));
  CHECK(small.algorithm == AllReduceAlgorithm::Ring);
  CHECK(small.protocol == sim::Protocol::LL);
  // 1 KiB is under one channel's 512 threads × 64 B (ring LL: 8 B × 8 ranks): NCCL launches 1
  // of the 6 channels, and its model's busBw is that channel's 20 GB/s / 4 = 5 GB/s.
  CHECK(small.channels == 1);
  CHECK(small.phases.at(0).at(0).channels.size() == 1);
  REQUIRE(small.nccl);
  CHECK(small.nccl->channels == 1);
  CHECK(small.nccl->time_us == doctest::Approx(10.18 + 1024 / (5.0 * 8 / 14 * 1000)));
  // From 6 × 32,768 B on, all 6.
  CHECK(planner.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::of(196'607), first(8))).channels == 5);
  CHECK(planner.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::of(196'608), first(8))).channels == 6);
  const auto large = planner.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::gib(1), first(8)));
  CHECK(large.protocol == sim::Protocol::Simple);
  CHECK(large.timing.hop_latency[static_cast<int>(sim::HopKind::NVLink)] == sim::Time::ns(3400));
  CHECK(large.phases.at(0).at(0).channels.size() == 6);
  // Four machines, 1 KiB: the double binary tree with LL, two trees per channel.
  const auto four = topology::build_cluster({.preset = "dgx1-v100", .nodes = 4});
  workloads::CommPlanner across(four, {});
  const auto tree = across.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::kib(1), first(32)));
  CHECK(tree.algorithm == AllReduceAlgorithm::Tree);
  CHECK(tree.protocol == sim::Protocol::LL);
  // Tree LL: 512 threads × 8 B a channel, so 1 KiB runs on 1 channel of 4: its two trees.
  CHECK(tree.channels == 1);
  REQUIRE(tree.trees != nullptr);
  CHECK(tree.trees->size() == 2);
  // 16 KiB = 4 × 4,096 B: all 4 channels, 8 trees; the first two are the 1-channel plan's.
  const auto wide = across.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::kib(16), first(32)));
  CHECK(wide.algorithm == AllReduceAlgorithm::Tree);
  CHECK(wide.channels == 4);
  REQUIRE(wide.trees != nullptr);
  REQUIRE(wide.trees->size() == 8);
  CHECK(wide.trees->at(1).parent == tree.trees->at(1).parent);
  CHECK(wide.trees->at(1).up == tree.trees->at(1).up);
  // Fixed: the ideal protocol is the α-β ring, with no NCCL estimate.
  workloads::CommPlanner ideal(one, {.protocol = sim::Protocol::Ideal});
  const auto plain = ideal.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::kib(1), first(8)));
  CHECK(plain.algorithm == AllReduceAlgorithm::Ring);
  CHECK(plain.timing.is_ideal());
  CHECK_FALSE(plain.nccl);
  CHECK(plain.channels == 6);  // not NCCL's launch: every channel at every size
  // A tree asked for an all-gather runs as a ring.
  workloads::CommPlanner trees(one, {.algorithm = AllReduceAlgorithm::Tree});
  CHECK(trees.plan(spec_of(sim::CollectiveOp::AllGather, sim::Bytes::mib(1), first(8))).algorithm ==
        AllReduceAlgorithm::Ring);
  // A model-parallel copy (a broadcast between two GPUs) moves at line rate on one channel.
  const auto copy = planner.plan(spec_of(sim::CollectiveOp::Broadcast, sim::Bytes::mib(64), {0, 3}));
  CHECK(copy.protocol == sim::Protocol::Ideal);
  CHECK(copy.channels == 1);
  CHECK_FALSE(copy.nccl);
}

TEST_CASE("comm plan: make_collective runs the plan, a copy at the NVLinks' line rate") {
  const auto one = topology::build_cluster({.preset = "dgx1-v100"});
  workloads::CommPlanner planner(one, {});
  sim::EventQueue queue;
  sim::Network network(queue, one.links());
  // GPU0 → GPU3 over their 2 NVLinks (50 GB/s, 700 ns): 64 MiB as 128 messages of 512 KiB, each
  // 10,485,760 ps on the link, back to back: 128 × 10.48576 µs + 700 ns.
  auto copy = workloads::make_collective(
      network, planner.plan(spec_of(sim::CollectiveOp::Broadcast, sim::Bytes::mib(64), {0, 3})), {});
  copy->start_all();
  queue.run();
  CHECK(copy->finish_time() == sim::Time::ps(10'485'760) * 128 + sim::Time::ns(700));
  // A tree plan runs as a TreeCollective to the end, every rank done.
  const auto four = topology::build_cluster({.preset = "dgx1-v100", .nodes = 4});
  workloads::CommPlanner across(four, {.algorithm = AllReduceAlgorithm::Tree});
  sim::EventQueue q4;
  sim::Network n4(q4, four.links());
  auto tree = workloads::make_collective(
      n4, across.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::mib(1), first(32))), {});
  tree->start_all();
  q4.run();
  CHECK(tree->is_done());
  CHECK(tree->ranks() == 32);
}

TEST_CASE("comm plan: hierarchical all-reduce in three phases, its inter-machine protocol chosen") {
  const auto two = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  workloads::CommPlanner planner(two, {.algorithm = AllReduceAlgorithm::Hierarchical});
  const auto plan = planner.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::mib(64), first(16)));
  CHECK(plan.algorithm == AllReduceAlgorithm::Hierarchical);
  REQUIRE(plan.phases.size() == 3);
  CHECK(plan.phases[0].size() == 2);  // a reduce-scatter in each machine
  CHECK(plan.phases[1].size() == 8);  // an all-reduce per local GPU index, of 64 MiB / 8
  CHECK(plan.phases[1][0].size == sim::Bytes::mib(8));
  CHECK(plan.phases[1][0].timing);
  CHECK(plan.phases[1][0].timing->protocol == plan.protocol);
  CHECK(plan.protocol != sim::Protocol::Ideal);
  // Each phase on the channels NCCL launches for its own size: the machines' 64 KiB reduce-scatters
  // run ring LL (8 B a thread × 8 ranks × 512 threads: 32,768 B a channel) on 2 channels of 6.
  const auto small = planner.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::kib(64), first(16)));
  REQUIRE(small.phases.size() == 3);
  CHECK(planner.ring_channels(first(8)).size() == 6);
  CHECK(small.phases[0][0].channels.size() == 2);
  CHECK(small.phases[2][0].channels.size() == 2);
  // Not uniform (only machine 0): the flat ring with NCCL's protocol.
  CHECK(planner.plan(spec_of(sim::CollectiveOp::AllReduce, sim::Bytes::mib(64), first(8))).algorithm !=
        AllReduceAlgorithm::Hierarchical);
}

TEST_CASE("comm plan: an all-to-all's routes between every pair are found GPU by GPU, told as they go") {
  // 4,096 GPUs of DGX-1 took minutes in these route searches, and `collective` said nothing.
  struct Told final : sim::WorkProgress {
    std::vector<std::uint64_t> done;
    std::string part, unit;
    std::uint64_t total = 0;
    void built(std::string_view p, std::uint64_t d, std::uint64_t t, std::string_view u) override {
      if (p != "finding the all-to-all's routes") return;  // the rings' search is told too
      part = p;
      unit = u;
      total = t;
      done.push_back(d);
    }
  } told;
  const auto two = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  workloads::CommPlanner planner(two, {});
  planner.set_progress(&told);
  const auto plan = planner.plan(spec_of(sim::CollectiveOp::AllToAll, sim::Bytes::mib(16), first(16)));
  REQUIRE(plan.pairs != nullptr);
  CHECK(told.part == "finding the all-to-all's routes");
  CHECK(told.unit == "GPUs");
  CHECK(told.total == 16);
  std::vector<std::uint64_t> each;  // 0 to 16: every GPU's routes told once found
  for (std::uint64_t i = 0; i <= 16; ++i) each.push_back(i);
  CHECK(told.done == each);
}

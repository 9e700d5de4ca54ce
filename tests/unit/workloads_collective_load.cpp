// What a collective takes from its GPUs while it runs (workloads/comm/collective_load.h): SMs per
// channel, memory traffic from the rate its channels receive at, shares of links crossed twice.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "sim/tree_collective.h"
#include "tests/unit/toy_profile.h"
#include "topology/presets.h"
#include "workloads/comm/collective_load.h"

using namespace hybridsim;
using namespace hybridsim::workloads;
using sim::Bandwidth;

namespace {

// Three links: L0 10 GB/s, L1 and L2 25 GB/s.
sim::LinkTable three_links() {
  sim::LinkTable t;
  t.add({sim::LinkKind::NVLink, Bandwidth::gb_per_second(10), sim::Time::ns(500), "L0"});
  t.add({sim::LinkKind::NVLink, Bandwidth::gb_per_second(25), sim::Time::ns(500), "L1"});
  t.add({sim::LinkKind::NVLink, Bandwidth::gb_per_second(25), sim::Time::ns(500), "L2"});
  return t;
}

// A plan of ring phases (no NCCL channel count: the load counts the phases' channels).
CollectivePlan phases(CollectivePhases p) {
  CollectivePlan plan;
  plan.phases = std::move(p);
  return plan;
}

sim::CollectiveChain::Part part(std::vector<sim::RingChannel> channels) {
  sim::CollectiveChain::Part p;
  p.members = {0, 1};
  p.channels = std::move(channels);
  return p;
}

}  // namespace

TEST_CASE(
    "collective load: each channel receives at its most shared link's share, NCCL: an SM per channel, 3 "
    "bytes per byte") {
  const sim::LinkTable links = three_links();
  // Channels 0 and 1 both cross L0 (10 GB/s, shared: 5 each); channel 0 also L1, channel 1 L2
  // (25 each, alone). Each runs at 5 GB/s: a rank receives 10 GB/s.
  const auto shared = part({{{0, 1}, {{0}, {1}}}, {{0, 1}, {{0}, {2}}}});
  CHECK(part_receive_rate(shared, links) == Bandwidth::gb_per_second(10));
  // One channel over L1 and L2 alone: 25 GB/s.
  const auto alone = part({{{0, 1}, {{1}, {2}}}});
  CHECK(part_receive_rate(alone, links) == Bandwidth::gb_per_second(25));
  // Among many links, of which the part crosses few, the shares are counted another way (sorted
  // copies of its links, not a table of all): the same rates.
  sim::LinkTable many = three_links();
  for (int i = 0; i < 64; ++i)
    many.add({sim::LinkKind::PCIe, Bandwidth::gb_per_second(1), sim::Time::ns(500), "X" + std::to_string(i)});
  CHECK(part_receive_rate(shared, many) == Bandwidth::gb_per_second(10));
  CHECK(part_receive_rate(alone, many) == Bandwidth::gb_per_second(25));

  CollectiveSpec spec;
  spec.role = CollectiveRole::GradientAllReduce;
  // 2 channels: 2 SMs; 3 × 10 GB/s of memory traffic.
  CHECK(collective_load(spec, phases({{shared}}), links) ==
        sim::CollectiveLoad{2, Bandwidth::gb_per_second(30)});
  // A chain takes its largest phase: 2 SMs (first phase), 3 × 25 GB/s (second).
  CHECK(collective_load(spec, phases({{shared}, {alone}}), links) ==
        sim::CollectiveLoad{2, Bandwidth::gb_per_second(75)});
  // A model-parallel copy: copy engines, no SM; 1 byte per byte.
  spec.role = CollectiveRole::Activation;
  CHECK(collective_load(spec, phases({{alone}}), links) ==
        sim::CollectiveLoad{0, Bandwidth::gb_per_second(25)});
}

TEST_CASE("collective load from a real plan: channels over the same link share it") {
  // Two GPUs joined by 20 GB/s links, 3 channels: all three cross the same link each way, so each
  // gets floor(20e9 / 3) = 6,666,666,666 B/s and a rank receives 19,999,999,998 B/s; × 3 bytes of
  // memory traffic per byte received; one SM per channel.
  const topology::Topology t =
      topology::presets::fully_connected({.gpus = 2, .bandwidth = Bandwidth::gb_per_second(20)});
  CommPlanner planner(t, {.channels = 3});
  CollectiveSpec spec;
  spec.members = {0, 1};
  spec.op = sim::CollectiveOp::AllReduce;
  spec.size = sim::Bytes::mib(64);
  CHECK(collective_load(spec, planner.plan(spec), t.links()) ==
        sim::CollectiveLoad{3, Bandwidth::bytes_per_second(59'999'999'994)});
}

TEST_CASE("collective load of trees: a link is shared by the tree channels crossing it, each counted once") {
  // Two tree channels over ranks 0 <- 1. Channel 0 goes up over L0 and down over L0 then L1: it
  // crosses L0 twice, but is one channel on it. Channel 1 goes up over L0 and down over L2. So L0
  // is shared by 2 channels (5 GB/s each; counted per crossing, 3 would give 3.33), L1 and L2 are
  // alone (25): each channel runs at 5 GB/s, a rank receives 10 GB/s, 3 x 10 of memory traffic.
  const sim::LinkTable links = three_links();
  const auto tree = [](std::vector<sim::LinkId> up, std::vector<sim::LinkId> down) {
    sim::TreeChannel t;
    t.parent = {-1, 0};
    t.up = {{}, std::move(up)};
    t.children = {{1}, {}};
    t.down = {{std::move(down)}, {}};
    return t;
  };
  CollectivePlan plan;
  plan.algorithm = AllReduceAlgorithm::Tree;
  plan.channels = 1;  // a channel's two trees share its CTA
  plan.trees = std::make_shared<const std::vector<sim::TreeChannel>>(
      std::vector<sim::TreeChannel>{tree({0}, {0, 1}), tree({0}, {2})});
  CollectiveSpec spec;
  spec.role = CollectiveRole::GradientAllReduce;
  CHECK(collective_load(spec, plan, links) == sim::CollectiveLoad{1, Bandwidth::gb_per_second(30)});
}

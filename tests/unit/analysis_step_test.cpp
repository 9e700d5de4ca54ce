// One simulated training step under DP, MP and hybrid strategies, on toy profiles whose answers can
// be derived by hand.
#include <doctest/doctest.h>

#include "analysis/step/step_runner.h"
#include "sim/error.h"
#include "sim/ring_collective.h"
#include "tests/unit/toy_profile.h"
#include "topology/preset_registry.h"
#include "topology/presets.h"
#include "workloads/profile/profile.h"

using namespace hybridsim;
using sim::Bytes;
using sim::Time;
using testing::toy_chain;
using testing::toy_op;
using testing::toy_profile;

namespace {

analysis::StepResult run(const workloads::Profile& p, const topology::Topology& t, int dp, int mp,
                         workloads::MpPlacement placement, Bytes bucket = Bytes::mib(25)) {
  analysis::StepSetup s;
  s.profile = &p;
  s.topology = &t;
  s.placement = std::move(placement);
  s.mapping = workloads::default_mapping(t, dp, mp);
  s.step.bucket_size = bucket;
  return analysis::simulate_step(s);
}

}  // namespace

TEST_CASE("one GPU: the step is exactly the sum of its kernels") {
  const auto p = toy_chain(5);
  const auto t = topology::presets::fully_connected({.gpus = 1});
  const auto r = run(p, t, 1, 1, workloads::place_all_on_first(p, 1));
  // 5 × (1 + 2) ms of kernels plus the optimizer over 20 MiB at 1 ms/GiB (4 MiB per op, rounded
  // up per op: 4 MiB / 1 GiB × 1 ms = 3.90625 us each).
  CHECK(r.step_time == Time::ms(15) + Time::ns(3906) * 5 + Time::ps(250) * 5);
  CHECK(r.step_time == p.step_time_1gpu());
  CHECK(r.mean.idle == Time::zero());
  CHECK(r.mean.exposed_communication == Time::zero());
}

TEST_CASE("DP on 2 GPUs: compute plus the exposed all-reduce, as the collective engine alone") {
  const auto p = toy_chain(4);
  const auto t =
      topology::presets::fully_connected({.gpus = 2, .bandwidth = sim::Bandwidth::gb_per_second(10)});
  // One bucket for all 16 MiB: the all-reduce starts after the whole backward, fully exposed.
  const auto r = run(p, t, 2, 1, workloads::place_all_on_first(p, 1), Bytes::gib(1));
  // The same all-reduce alone on the same plan.
  workloads::CommPlanner planner(t, {});
  workloads::CollectiveSpec spec;
  spec.op = sim::CollectiveOp::AllReduce;
  spec.size = Bytes::mib(16);
  spec.members = {0, 1};
  sim::EventQueue q;
  sim::Network net(q, t.links());
  const auto ar = workloads::make_collective(net, planner.plan(spec), {});
  ar->start_all();
  q.run();
  const Time compute = Time::ms(12);
  const Time optimizer = p.optimizer_time(2);
  CHECK(r.step_time == compute + ar->finish_time() + optimizer);
  CHECK(r.critical.exposed_communication == ar->finish_time());
}

TEST_CASE("smaller buckets hide the all-reduce behind backward, up to a point") {
  const auto p = toy_chain(8);
  const auto t =
      topology::presets::fully_connected({.gpus = 4, .bandwidth = sim::Bandwidth::gb_per_second(5)});
  auto exposed = [&](Bytes bucket) {
    return run(p, t, 4, 1, workloads::place_all_on_first(p, 1), bucket).mean.exposed_communication;
  };
  const Time one_bucket = exposed(Bytes::gib(1));
  const Time per_op = exposed(Bytes::mib(4));
  CHECK(per_op < one_bucket);
  // With per-op buckets only the last bucket (4 MiB) stays exposed: at most its all-reduce time,
  // i.e. roughly a quarter of... well under half the single-bucket exposure of 32 MiB.
  CHECK(per_op.to_seconds() < 0.5 * one_bucket.to_seconds());
}

TEST_CASE("buckets too small pay more in per-collective latency than they hide") {
  // 64 ops of 50 us backward and 256 KiB of gradients each, 4 GPUs, 10 GB/s links of 20 us latency.
  // A ring all-reduce of S bytes takes about 2·3·α + 1.5·S/B: 16 MiB in one bucket ≈ 2.6 ms, all
  // after backward; 2 MiB buckets ≈ 0.43 ms each, one per 400 us of backward, so only about the last
  // one shows; 256 KiB buckets ≈ 0.16 ms each, one per 50 us of backward: the collectives fall
  // behind and about 64 × 0.16 − 3.2 ≈ 7 ms is exposed, more than one big bucket.
  workloads::Profile p = toy_profile();
  for (int i = 0; i < 64; ++i)
    p.ops.push_back(
        toy_op("op" + std::to_string(i),
               i == 0 ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>{std::uint32_t(i - 1)},
               Time::us(25), Time::us(50), Bytes::kib(256)));
  workloads::validate_profile(p);
  const auto t = topology::presets::fully_connected(
      {.gpus = 4, .bandwidth = sim::Bandwidth::gb_per_second(10), .latency = Time::us(20)});
  auto exposed = [&](Bytes bucket) {
    return run(p, t, 4, 1, workloads::place_all_on_first(p, 1), bucket).mean.exposed_communication;
  };
  const Time one_bucket = exposed(Bytes::mib(16));
  const Time medium = exposed(Bytes::mib(2));
  const Time tiny = exposed(Bytes::kib(256));
  CAPTURE(one_bucket);
  CAPTURE(medium);
  CAPTURE(tiny);
  CHECK(medium < one_bucket / 2);
  CHECK(tiny > medium * 4);
  CHECK(tiny > one_bucket);
}

TEST_CASE("critical path: its parts add up to the step, and MP puts transfers and a second GPU on it") {
  const auto p = toy_chain(6);
  const auto t =
      topology::presets::fully_connected({.gpus = 4, .bandwidth = sim::Bandwidth::gb_per_second(10)});
  auto total = [](const analysis::CriticalPath& c) {
    return c.compute + c.gradient_communication + c.model_parallel_transfers + c.launch_gaps;
  };
  // One GPU: all compute, on that GPU.
  const auto one = run(p, t, 1, 1, workloads::place_all_on_first(p, 1));
  CHECK(one.critical_path.compute == one.step_time);
  CHECK(one.critical_path.gpus_visited == 1);
  CHECK(one.critical_path.gpu_changes == 0);
  // DP with one bucket: the whole all-reduce is on the path (nothing overlaps it).
  const auto dp = run(p, t, 4, 1, workloads::place_all_on_first(p, 1), Bytes::gib(1));
  CHECK(total(dp.critical_path) == dp.step_time);
  CHECK(dp.critical_path.gradient_communication >= dp.critical.exposed_communication);
  CHECK(dp.critical_path.model_parallel_transfers == Time::zero());
  // MP of a chain on 2 GPUs: the path runs through both GPUs and the transfers between them, and
  // the critical GPU's own idle time turns out to be the other GPU's compute.
  const auto mp = run(p, t, 1, 2, workloads::partition_layers(p, 2));
  CHECK(total(mp.critical_path) == mp.step_time);
  CHECK(mp.critical_path.gpus_visited == 2);
  CHECK(mp.critical_path.gpu_changes >= 2);  // forward to GPU 1, backward back to GPU 0
  CHECK(mp.critical_path.model_parallel_transfers > Time::zero());
  CHECK(mp.critical_path.compute > mp.critical.compute);
  // Hybrid: all three kinds of time.
  const auto hybrid = run(p, t, 2, 2, workloads::partition_layers(p, 2), Bytes::gib(1));
  CHECK(total(hybrid.critical_path) == hybrid.step_time);
  CHECK(hybrid.critical_path.gradient_communication > Time::zero());
  CHECK(hybrid.critical_path.model_parallel_transfers > Time::zero());
}

TEST_CASE("MP of a pure chain on 2 GPUs is no faster than 1 GPU") {
  const auto p = toy_chain(6);
  const auto t = topology::presets::fully_connected({.gpus = 2});
  const auto one = run(p, t, 1, 1, workloads::place_all_on_first(p, 1));
  const auto two = run(p, t, 1, 2, workloads::partition_layers(p, 2));
  CHECK(two.step_time >= one.step_time - one.step_time / 100);  // optimizer halves: ≤ 1% gain
  CHECK(two.step_time > Time::ms(18));
}

TEST_CASE("MP of two independent branches approaches 2x") {
  workloads::Profile p = toy_profile();
  p.ops.push_back(toy_op("in", {}, Time::us(10), Time::us(10), Bytes::of(0), Bytes::kib(64), "blk"));
  for (int b = 0; b < 2; ++b) {
    std::uint32_t prev = 0;
    for (int i = 0; i < 5; ++i) {
      p.ops.push_back(toy_op("br" + std::to_string(b) + "." + std::to_string(i), {prev}, Time::ms(1),
                           Time::ms(2), Bytes::mib(1), Bytes::kib(64), "blk"));
      prev = static_cast<std::uint32_t>(p.ops.size() - 1);
    }
  }
  p.ops.push_back(toy_op("join", {5, 10}, Time::us(10), Time::us(10), Bytes::of(0), Bytes::kib(64), "blk"));
  workloads::validate_profile(p);
  const auto t = topology::presets::fully_connected({.gpus = 2});
  const auto one = run(p, t, 1, 1, workloads::place_all_on_first(p, 1));
  const auto placement = workloads::partition_branches(p, 2);
  CHECK(placement.gpu_of_op[1] != placement.gpu_of_op[6]);  // the two branches are apart
  const auto two = run(p, t, 1, 2, placement);
  const double speedup = one.step_time.to_seconds() / two.step_time.to_seconds();
  CHECK(speedup > 1.9);
  CHECK(speedup <= 2.0);
}

TEST_CASE("a 2-layer unrolled LSTM split by layer approaches the wavefront bound") {
  // Cells (layer l, step t) with edges (l,t)→(l,t+1) and (0,t)→(1,t); each cell 1 ms forward,
  // 2 ms backward. One GPU: 2T cells serially. Two GPUs, one layer each: the wavefront needs
  // (T + 1) cell times forward and (T + 1) backward.
  const int steps = 20;
  workloads::Profile p = toy_profile();
  for (int l = 0; l < 2; ++l)
    for (int s = 0; s < steps; ++s) {
      std::vector<std::uint32_t> in;
      if (s > 0) in.push_back(static_cast<std::uint32_t>(l * steps + s - 1));
      if (l > 0) in.push_back(static_cast<std::uint32_t>(s));
      auto op = toy_op("L" + std::to_string(l) + ".t" + std::to_string(s), in, Time::ms(1), Time::ms(2),
                     s == 0 ? Bytes::mib(4) : Bytes::of(0), Bytes::kib(512), "L" + std::to_string(l));
      op.step = s;
      p.ops.push_back(op);
    }
  workloads::validate_profile(p);
  const auto t =
      topology::presets::fully_connected({.gpus = 2, .bandwidth = sim::Bandwidth::gb_per_second(50)});
  const auto one = run(p, t, 1, 1, workloads::place_all_on_first(p, 1));
  const auto placement = workloads::partition_layers(p, 2);
  CHECK(placement.gpu_of_op[0] == 0);
  CHECK(placement.gpu_of_op[steps] == 1);
  const auto two = run(p, t, 1, 2, placement);
  const Time bound = Time::ms(1) * (steps + 1) + Time::ms(2) * (steps + 1);
  CHECK(one.step_time > Time::ms(3) * 2 * steps);
  CHECK(two.step_time >= bound);
  // 512 KiB per transfer at 50 GB/s adds ~10 us per hand-off: within 5% of the bound.
  CHECK(two.step_time.to_seconds() < 1.05 * bound.to_seconds());
}

TEST_CASE("hybrid groups hold the right GPUs on a DGX-1") {
  const auto t = topology::presets::dgx1_v100();
  const auto m2 = workloads::default_mapping(t, 4, 2);
  // mp = 2: each worker on a doubled-NVLink pair (50 GB/s): {0,3} {1,2} {4,7} {5,6}.
  CHECK(m2.gpu_rank == std::vector<std::vector<int>>{{0, 3}, {1, 2}, {4, 7}, {5, 6}});
  CHECK(m2.dp_group(0) == std::vector<int>{0, 1, 4, 5});
  const auto m4 = workloads::default_mapping(t, 2, 4);
  // mp = 4: the two fully NVLink-connected quads.
  CHECK(m4.gpu_rank == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK_THROWS_WITH_AS(workloads::default_mapping(t, 8, 2),
                       doctest::Contains("dp × mp = 8 × 2 = 16 GPUs"), hybridsim::InputError);
}

TEST_CASE("hybrid groups on two DGX-1: workers stay inside a machine, DP groups span both") {
  const auto t = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  const auto m = workloads::default_mapping(t, 8, 2);
  // Node 1's GPUs are 8..15, paired the same way as node 0's.
  CHECK(m.gpu_rank == std::vector<std::vector<int>>{{0, 3}, {1, 2}, {4, 7}, {5, 6},
                                                    {8, 11}, {9, 10}, {12, 15}, {13, 14}});
  for (const auto& worker : m.gpu_rank) CHECK(worker[0] / 8 == worker[1] / 8);
  CHECK(m.dp_group(0) == std::vector<int>{0, 1, 4, 5, 8, 9, 12, 13});
  CHECK(m.dp_group(1) == std::vector<int>{3, 2, 7, 6, 11, 10, 15, 14});
}

TEST_CASE("a straggler GPU at half speed sets the pace of every data-parallel worker") {
  const auto p = toy_chain(4);
  const auto t =
      topology::presets::fully_connected({.gpus = 4, .bandwidth = sim::Bandwidth::gb_per_second(10)});
  analysis::StepSetup s;
  s.profile = &p;
  s.topology = &t;
  s.placement = workloads::place_all_on_first(p, 1);
  s.mapping = workloads::default_mapping(t, 4, 1);
  s.step.bucket_size = Bytes::gib(1);  // one all-reduce after backward: nothing overlaps it
  s.comm.algorithm = workloads::AllReduceAlgorithm::Ring;  // every rank waits for every other
  const auto even = analysis::simulate_step(s);
  s.step.gpu_compute_scale = {1.0, 1.0, 2.0, 1.0};  // GPU 2 takes twice as long per kernel
  const auto slow = analysis::simulate_step(s);
  // The all-reduce waits for GPU 2's backward: 12 ms more of forward and backward on it, then the
  // same all-reduce; the optimizer on GPU 2 also takes twice as long.
  CHECK(slow.step_time == even.step_time + Time::ms(12) + p.optimizer_time(4));
  CHECK(slow.critical.gpu == 2);
  // GPU 0 sits in the all-reduce, waiting for GPU 2: exposed communication, not compute.
  CHECK(slow.per_gpu[0].exposed_communication >= Time::ms(12));
  CHECK(slow.per_gpu[2].compute == even.per_gpu[2].compute * 2);
}

// What data parallelism costs each GPU beyond the one-GPU step, on a toy profile of a V100 (the GPU
// name is what gives it SMs and memory bandwidth): gradient copies around each bucket, and kernels
// slowed by the all-reduce running beside them. Expected times derived by hand from the collective
// alone on the same plan.
#include <doctest/doctest.h>

#include "analysis/step/step_runner.h"
#include "sim/ring_collective.h"
#include "tests/unit/toy_profile.h"
#include "topology/presets.h"

using namespace hybridsim;
using sim::Bytes;
using sim::Time;
using testing::toy_profile;

namespace {

workloads::Profile v100_chain(int n) {
  workloads::Profile p = testing::toy_chain(n);
  p.meta.gpu = "V100-SXM2-16GB";
  return p;
}

analysis::StepResult dp2(const workloads::Profile& p, const topology::Topology& t, Bytes bucket,
                         bool copies = true, bool contention = true) {
  analysis::StepSetup s;
  s.profile = &p;
  s.topology = &t;
  s.placement = workloads::place_all_on_first(p, 1);
  s.mapping = workloads::default_mapping(t, 2, 1);
  s.step.bucket_size = bucket;
  s.step.gradient_copies = copies;
  s.executor.contention = contention;
  return analysis::simulate_step(s);
}

// The all-reduce of `size` over GPUs 0 and 1 alone, on the plan a step uses.
Time all_reduce_alone(const topology::Topology& t, Bytes size) {
  workloads::CommPlanner planner(t, {});
  workloads::CollectiveSpec spec;
  spec.op = sim::CollectiveOp::AllReduce;
  spec.size = size;
  spec.members = {0, 1};
  sim::EventQueue q;
  sim::Network net(q, t.links());
  const auto ar = workloads::make_collective(net, planner.plan(spec), {});
  ar->start_all();
  q.run();
  return ar->finish_time();
}

}  // namespace

TEST_CASE("DP overheads: a bucket is copied in before its all-reduce and out after, at the V100's 600 GB/s") {
  const auto p = v100_chain(4);
  const auto t =
      topology::presets::fully_connected({.gpus = 2, .bandwidth = sim::Bandwidth::gb_per_second(10)});
  // One bucket of all 16 MiB after the whole backward (12 ms of kernels): copy in 2 × 16 MiB at
  // 600 GB/s = 33,554,432 B × 10^12 / (600 × 10^9) = 55,924,053.3 ps, rounded up; the all-reduce as
  // alone (nothing computes beside it); the copy out, as long; the optimizer.
  const Time copy = Time::ps(55'924'054);
  const Time ar = all_reduce_alone(t, Bytes::mib(16));
  const auto r = dp2(p, t, Bytes::gib(1));
  CHECK(r.step_time == Time::ms(12) + copy + ar + copy + p.optimizer_time(2));
  CHECK(r.critical.gradient_copies == copy * 2);
  CHECK(r.critical.compute_slowed == Time::zero());
  CHECK(r.critical_path.gradient_copies == copy * 2);
  // Off (DDP's gradient_as_bucket_view): the plain step.
  CHECK(dp2(p, t, Bytes::gib(1), false).step_time == Time::ms(12) + ar + p.optimizer_time(2));
  // A GPU nobody knows (the toy profile's empty name): nothing to price the copies with.
  workloads::Profile unknown = p;
  unknown.meta.gpu = "";
  CHECK(dp2(unknown, t, Bytes::gib(1)).step_time == Time::ms(12) + ar + p.optimizer_time(2));
}

TEST_CASE("DP overheads: the all-reduce beside backward takes its channel's SM from the kernel under it") {
  const auto p = v100_chain(2);
  const auto t =
      topology::presets::fully_connected({.gpus = 2, .bandwidth = sim::Bandwidth::gb_per_second(10)});
  // Buckets of 4 MiB: op1's gradient after its backward (ends at 4 ms), op0's after its own. Bucket
  // 0's copy in (2 × 4 MiB at 600 GB/s = 13,981,013.3 ps → 13,981,014 ps), then its all-reduce (one
  // channel: 1 of the 80 SMs) runs beside op0's 2 ms backward kernel, which does T × 79/80 of work in
  // the all-reduce's T (rounded down to the ps) and the rest at full rate: it ends T − floor(T·79/80)
  // late. Then op0's copy in, its all-reduce alone, both copies out, the optimizer.
  const Time copy = Time::ps(13'981'014);
  const Time ar = all_reduce_alone(t, Bytes::mib(4));
  const Time slowed = ar - Time::ps(ar.ps() * 79 / 80);
  const auto r = dp2(p, t, Bytes::mib(4));
  CHECK(r.critical.compute_slowed == slowed);
  CHECK(r.step_time == Time::ms(6) + copy + slowed + copy + ar + copy * 2 + p.optimizer_time(2));
  // The breakdown still adds up: compute (including copies and slowdown) + exposed + idle = step.
  CHECK(r.critical.compute + r.critical.exposed_communication + r.critical.idle == r.step_time);
  const auto& c = r.critical_path;
  CHECK(c.compute + c.gradient_communication + c.model_parallel_transfers + c.launch_gaps == r.step_time);
  CHECK(c.gradient_copies == copy * 4);
  CHECK(c.compute_slowed == slowed);
  // Contention off: the kernel runs alone.
  CHECK(dp2(p, t, Bytes::mib(4), true, false).step_time == Time::ms(6) + copy * 4 + ar + p.optimizer_time(2));
}

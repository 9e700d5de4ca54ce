// build_step_program end to end on toy profiles: which GPUs get which streams, how collectives and
// events are numbered, and the per-GPU speeds.
#include <doctest/doctest.h>

#include "tests/unit/toy_profile.h"
#include "topology/presets.h"
#include "workloads/step_program.h"

using namespace hybridsim;
using namespace hybridsim::workloads;
using sim::Bytes;
using sim::Time;
using testing::toy_profile;

namespace {

Profile chain3() { return testing::toy_chain(3); }

}  // namespace

TEST_CASE("step program: dp 2 × mp 2 on 6 GPUs — streams, collectives, events, GPUs left empty") {
  const Profile p = chain3();
  const topology::Topology t = topology::presets::fully_connected({.gpus = 6});
  const WorkerMapping m = custom_mapping(t, 2, 2, {{0, 1}, {2, 3}});
  StepOptions o;
  o.compute_scale = 0.5;
  o.gpu_compute_scale = {1, 1, 1, 3};  // GPU 3 three times slower
  const StepProgram s = build_step_program(p, MpPlacement{2, {0, 1, 1}, "t"}, m, 6, o);
  CHECK(s.dp == 2);
  CHECK(s.mp == 2);
  CHECK(s.global_batch == 64);  // 32 per worker
  CHECK(s.worker_of_gpu == std::vector<int>{0, 0, 1, 1, -1, -1});
  CHECK(s.mp_rank_of_gpu == std::vector<int>{0, 1, 0, 1, -1, -1});
  // Collectives: the two DP buckets first (rank 0's over GPUs {0, 2}, rank 1's over {1, 3}), then
  // per worker the edge a → rank 1: its activation and its gradient.
  REQUIRE(s.collectives.size() == 6);
  CHECK(s.collectives[0].members == std::vector<int>{0, 2});
  CHECK(s.collectives[0].size == Bytes::mib(4));
  CHECK(s.collectives[1].members == std::vector<int>{1, 3});
  CHECK(s.collectives[1].size == Bytes::mib(8));
  CHECK(s.collectives[2].role == CollectiveRole::Activation);
  CHECK(s.collectives[2].members == std::vector<int>{0, 1});
  CHECK(s.collectives[3].role == CollectiveRole::ActivationGradient);
  CHECK(s.collectives[3].members == std::vector<int>{1, 0});
  CHECK(s.collectives[4].members == std::vector<int>{2, 3});
  // 8 events per worker (see workloads_step_program_parts.cpp).
  CHECK(s.event_count == 16);
  // Every used GPU: compute, communication, one send and one receive stream; GPUs 4, 5 nothing.
  for (int g = 0; g < 4; ++g) REQUIRE(s.gpus[static_cast<std::size_t>(g)].streams.size() == 4);
  CHECK(s.gpus[0].streams[2].name == "send→GPU1");
  CHECK(s.gpus[3].streams[3].name == "recv←GPU2");
  CHECK(s.gpus[4].streams.empty());
  CHECK(s.gpus[0].compute_scale == 0.5);
  CHECK(s.gpus[3].compute_scale == 1.5);
  // Worker 1's second GPU joins its DP bucket as rank 1, the first transfer of worker 1 is collective 4.
  CHECK(s.gpus[3].streams[1].tasks[1].id == 1);
  CHECK(s.gpus[3].streams[1].tasks[1].rank == 1);
  CHECK(s.gpus[2].streams[2].tasks[1].id == 4);
}

TEST_CASE("step program: a sparse gradient is all-gathered with every worker's rows") {
  Profile p = chain3();
  p.ops[2].exchange = GradientExchange::SparseAllGather;
  p.ops[2].sparse_bytes_per_worker = Bytes::mib(1);
  const topology::Topology t = topology::presets::fully_connected({.gpus = 4});
  const StepProgram s = build_step_program(p, place_all_on_first(p, 1), default_mapping(t, 4, 1), 4, {});
  // Backward runs c, b, a: c's sparse gradient first (4 workers × 1 MiB gathered), then one bucket
  // of b and a (8 MiB).
  REQUIRE(s.collectives.size() == 2);
  CHECK(s.collectives[0].op == sim::CollectiveOp::AllGather);
  CHECK(s.collectives[0].size == Bytes::mib(4));
  CHECK(s.collectives[1].op == sim::CollectiveOp::AllReduce);
  CHECK(s.collectives[1].size == Bytes::mib(8));
  CHECK(s.collectives[1].bucket == 0);
}

// build_step_program end to end on toy profiles: which GPUs get which streams, how collectives and
// events are numbered, and the per-GPU speeds.
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/unit/toy_profile.h"
#include "topology/presets.h"
#include "workloads/program/step_program.h"
#include "workloads/program/step_program_parts.h"

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

TEST_CASE("step program: every worker's compute streams are the ones compute_stream builds for its events") {
  // build_step_program builds the first worker's compute streams and copies them for the others
  // with their events shifted; each must equal what compute_stream builds for that worker's own
  // events. a on MP rank 0, b → c on rank 1, dp 3: 8 events a worker (workloads_step_program_parts.cpp),
  // so worker w's are 8w … 8w + 7; rank 1 waits for the activation (8w + 1), records b's gradient
  // going back (8w + 2) and its bucket ready (8w + 6), and waits for the bucket's done (8w + 7).
  const Profile p = chain3();
  const topology::Topology t = topology::presets::fully_connected({.gpus = 6});
  const WorkerMapping m = custom_mapping(t, 3, 2, {{0, 1}, {2, 3}, {4, 5}});
  const MpPlacement placement{2, {0, 1, 1}, "t"};
  const StepProgram s = build_step_program(p, placement, m, 6, StepOptions{});
  const step_parts::StepLayout layout = step_parts::lay_out_step(p, placement, 3, StepOptions{});
  std::uint32_t next = 0;
  for (std::size_t w = 0; w < 3; ++w) {
    CAPTURE(w);
    const step_parts::WorkerEvents e = step_parts::allocate_worker_events(layout, next);
    for (int k = 0; k < 2; ++k) {
      CAPTURE(k);
      const sim::StreamProgram built = step_parts::compute_stream(p, layout, e, k);
      const sim::StreamProgram& got =
          s.gpus[static_cast<std::size_t>(m.gpu_rank[w][static_cast<std::size_t>(k)])].streams[0];
      CHECK(got.name == built.name);
      REQUIRE(got.tasks.size() == built.tasks.size());
      for (std::size_t i = 0; i < got.tasks.size(); ++i) {
        CAPTURE(i);
        CHECK(got.tasks[i].kind == built.tasks[i].kind);
        CHECK(got.tasks[i].id == built.tasks[i].id);
        CHECK(got.tasks[i].duration == built.tasks[i].duration);
        CHECK(got.tasks[i].launch_delay == built.tasks[i].launch_delay);
        CHECK(got.tasks[i].bound == built.tasks[i].bound);
        CHECK(got.tasks[i].per_sample == built.tasks[i].per_sample);
      }
    }
    // The send and receive streams too (also copied from the first worker's, events and transfers
    // shifted): worker w's transfers follow the gradient collectives, an activation and its
    // gradient per MP edge, in edge order.
    const auto first_transfer = static_cast<std::uint32_t>(
        std::find_if(s.collectives.begin(), s.collectives.end(),
                     [](const CollectiveSpec& c) { return c.role == CollectiveRole::Activation; }) -
        s.collectives.begin());
    const auto edges = static_cast<std::uint32_t>(layout.edges.edges.size());
    std::vector<std::uint32_t> activation, gradient;
    for (std::uint32_t q = 0; q < edges; ++q) {
      activation.push_back(first_transfer + static_cast<std::uint32_t>(w) * 2 * edges + 2 * q);
      gradient.push_back(activation.back() + 1);
    }
    for (int k = 0; k < 2; ++k) {
      CAPTURE(k);
      std::vector<sim::StreamProgram> built =
          step_parts::send_streams(layout, e, k, activation, gradient, m.gpu_rank[w]);
      for (auto& r : step_parts::receive_streams(layout, e, k, activation, gradient, m.gpu_rank[w]))
        built.push_back(std::move(r));
      const auto& streams =
          s.gpus[static_cast<std::size_t>(m.gpu_rank[w][static_cast<std::size_t>(k)])].streams;
      REQUIRE(streams.size() == built.size() + 2);  // compute, communication, then the transfers
      for (std::size_t i = 0; i < built.size(); ++i) {
        CAPTURE(i);
        const sim::StreamProgram& got = streams[streams.size() - built.size() + i];
        CHECK(got.name == built[i].name);
        REQUIRE(got.tasks.size() == built[i].tasks.size());
        for (std::size_t j = 0; j < got.tasks.size(); ++j) {
          CHECK(got.tasks[j].kind == built[i].tasks[j].kind);
          CHECK(got.tasks[j].id == built[i].tasks[j].id);
          CHECK(got.tasks[j].rank == built[i].tasks[j].rank);
        }
      }
    }
    const auto w32 = static_cast<std::uint32_t>(w);
    const sim::StreamProgram& rank1 = s.gpus[static_cast<std::size_t>(m.gpu_rank[w][1])].streams[0];
    REQUIRE(rank1.tasks.size() == 9);  // "w11 k2 k4 k5 k3 r12 r16 w17 k6" from 10 in the parts test
    CHECK(rank1.tasks[0].id == 8 * w32 + 1);
    CHECK(rank1.tasks[5].id == 8 * w32 + 2);
    CHECK(rank1.tasks[6].id == 8 * w32 + 6);
    CHECK(rank1.tasks[7].id == 8 * w32 + 7);
  }
}

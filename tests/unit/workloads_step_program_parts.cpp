// The named steps of build_step_program (workloads/program/step_program_parts.h), each on a toy profile
// whose labels, edges, buckets, events and streams are derived by hand in the comments.
#include <doctest/doctest.h>

#include "tests/unit/toy_profile.h"
#include "workloads/program/step_program_parts.h"

using namespace hybridsim;
using namespace hybridsim::workloads;
using namespace hybridsim::workloads::step_parts;
using sim::Bytes;
using sim::Task;
using sim::TaskKind;
using sim::Time;
using testing::toy_op;
using testing::toy_profile;

namespace {

// a → b → c, 1 ms forward and 2 ms backward each, 4 MiB of gradients each.
Profile chain3() { return testing::toy_chain(3); }

MpPlacement placed(int mp, std::vector<std::uint32_t> gpu_of_op) {
  return MpPlacement{mp, std::move(gpu_of_op), "test"};
}

// What a task is, compactly: "k2" kernel of label 2, "r11" record, "w11" wait, "c7/1" collective 7 rank 1.
std::string show(const sim::StreamProgram& s) {
  std::string out;
  for (const Task& t : s.tasks) {
    out += out.empty() ? "" : " ";
    switch (t.kind) {
      case TaskKind::Kernel: out += "k" + std::to_string(t.id); break;
      case TaskKind::Record: out += "r" + std::to_string(t.id); break;
      case TaskKind::Wait: out += "w" + std::to_string(t.id); break;
      case TaskKind::Collective: out += "c" + std::to_string(t.id) + "/" + std::to_string(t.rank); break;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("step parts: kernel labels run op by op, forward then backward, the optimizer last") {
  Profile p = chain3();
  p.ops[1].forward.push_back({"f2", Time::us(5)});  // b has two forward kernels
  const KernelLabels l = label_kernels(p);
  // a: 0 f, 1 b; b: 2 f, 3 f2, 4 b; c: 5 f, 6 b; optimizer 7.
  CHECK(l.first_of_op == std::vector<std::uint32_t>{0, 2, 5});
  CHECK(l.optimizer == 7);
  REQUIRE(l.labels.size() == 8);
  CHECK(l.labels[3].op == 1);
  CHECK(l.labels[3].phase == Phase::Forward);
  CHECK(l.labels[3].kernel == 1);
  CHECK(l.labels[4].phase == Phase::Backward);
  CHECK(l.labels[4].kernel == 0);
  CHECK(l.labels[7].phase == Phase::Optimizer);
}

TEST_CASE("step parts: gradients pack into buckets in backward order, sparse ones go alone") {
  Profile p = chain3();
  StepOptions o;
  o.bucket_size = Bytes::mib(6);
  const std::vector<std::uint32_t> backward = {2, 1, 0};
  // c's 4 MiB stay pending (< 6 MiB); b's make 8 MiB >= 6: bucket 0 closes after b's backward;
  // a's 4 MiB are left over and close bucket 1 at the end.
  CHECK(gradient_collectives(p, backward, o) ==
        std::vector<GradientCollective>{{CollectiveRole::GradientAllReduce, Bytes::mib(8), 1, 0},
                                        {CollectiveRole::GradientAllReduce, Bytes::mib(4), 0, 1}});
  // b's gradient sparse (1 MiB of rows per worker): it is all-gathered on its own, right after b's
  // backward; c and a share one dense bucket of 8 MiB, closed after a (the last one) reached 6 MiB.
  p.ops[1].exchange = GradientExchange::SparseAllGather;
  p.ops[1].sparse_bytes_per_worker = Bytes::mib(1);
  CHECK(gradient_collectives(p, backward, o) ==
        std::vector<GradientCollective>{{CollectiveRole::GradientAllGather, Bytes::mib(1), 1, -1},
                                        {CollectiveRole::GradientAllReduce, Bytes::mib(8), 0, 0}});
  // Recorded buckets replay as recorded (when asked), each right after its op's backward.
  Profile r = chain3();
  r.ops[0].buckets = {Bytes::mib(1), Bytes::mib(3)};
  r.ops[1].buckets = {Bytes::mib(4)};
  r.ops[2].buckets = {Bytes::mib(4)};
  o.recorded_buckets = true;
  CHECK(gradient_collectives(r, backward, o) ==
        std::vector<GradientCollective>{{CollectiveRole::GradientAllReduce, Bytes::mib(4), 2, 0},
                                        {CollectiveRole::GradientAllReduce, Bytes::mib(4), 1, 1},
                                        {CollectiveRole::GradientAllReduce, Bytes::mib(1), 0, 2},
                                        {CollectiveRole::GradientAllReduce, Bytes::mib(3), 0, 3}});
}

TEST_CASE("step parts: the optimizer's time follows the parameters each MP rank holds") {
  // SGD at 1 ms per GiB: 4 MiB take 1 ms / 256 = 3.90625 us = 3,906,250 ps, each op rounded alone.
  const std::vector<sim::Time> t = optimizer_times(chain3(), placed(2, {0, 0, 1}), 4);
  CHECK(t == std::vector<sim::Time>{Time::ps(7'812'500), Time::ps(3'906'250)});
}

TEST_CASE(
    "step parts: a model-parallel edge per producer and consuming GPU, its gradient after the last "
    "consumer") {
  // a on GPU 0 feeds b and c on GPU 1: one edge (a's output crosses once). Backward on GPU 1: b and
  // c have no consumers, both ready at once, so b (lower index) runs first and c last: c sends the
  // gradient back.
  Profile p = toy_profile();
  p.ops.push_back(toy_op("a", {}, Time::ms(1), Time::ms(2), Bytes()));
  p.ops.push_back(toy_op("b", {0}, Time::ms(1), Time::ms(2), Bytes()));
  p.ops.push_back(toy_op("c", {0}, Time::ms(1), Time::ms(2), Bytes()));
  const MpPlacement pl = placed(2, {0, 1, 1});
  const MpEdges e = model_parallel_edges(p, pl, order_ops(p, pl, sim::Bandwidth()));
  CHECK(e.edges == std::vector<MpEdge>{{0, 0, 1, 2}});
  CHECK(e.of_op == std::vector<std::vector<std::size_t>>{{0}, {}, {}});
  CHECK(e.gradient_after == std::vector<std::vector<std::size_t>>{{}, {}, {0}});
  CHECK(e.index.at({0, 1}) == 0);
}

TEST_CASE("step parts: a worker's events, its compute, communication, send and receive streams") {
  // a on MP rank 0, b → c on rank 1, dp 2, one 25 MiB bucket per rank: rank 0's holds a (trigger
  // a), rank 1's holds c and b (backward runs c then b: trigger b).
  const Profile p = chain3();
  const StepLayout layout = lay_out_step(p, placed(2, {0, 1, 1}), 2, StepOptions{});
  REQUIRE(layout.gradients[0].size() == 1);
  REQUIRE(layout.gradients[1].size() == 1);
  CHECK(layout.gradients[1][0].trigger == 1);
  CHECK(layout.gradients[1][0].size == Bytes::mib(8));
  // Events from 10: a's forward_done 10; the edge's activation 11, gradient ready 12, gradient
  // received 13; rank 0's bucket ready 14 and done 15; rank 1's 16 and 17.
  std::uint32_t next = 10;
  const WorkerEvents e = allocate_worker_events(layout, next);
  CHECK(next == 18);
  CHECK(e.forward_done[0] == 10);
  CHECK(e.activation_received[0] == 11);
  CHECK(e.gradient_ready[0] == 12);
  CHECK(e.gradient_received[0] == 13);
  CHECK(e.gradients_ready == std::vector<std::vector<std::uint32_t>>{{14}, {16}});
  CHECK(e.gradients_done == std::vector<std::uint32_t>{15, 17});

  // Labels: a 0 f, 1 b; b 2, 3; c 4, 5; optimizer 6. Rank 0: a's forward, record that its output
  // is done; backward after its gradient came back, then its bucket is ready; the optimizer after
  // the bucket's all-reduce, over a's 4 MiB (3.90625 us).
  const sim::StreamProgram c0 = compute_stream(p, layout, e, 0);
  CHECK(show(c0) == "k0 r10 w13 k1 r14 w15 k6");
  CHECK(c0.tasks.back().duration == Time::ps(3'906'250));
  // Rank 1: wait for a's activation, b, c; backward c, b; b's gradient goes back (12) and the
  // bucket is ready (16); the optimizer over 8 MiB after the all-reduce (17).
  const sim::StreamProgram c1 = compute_stream(p, layout, e, 1);
  CHECK(show(c1) == "w11 k2 k4 k5 k3 r12 r16 w17 k6");
  CHECK(c1.tasks.back().duration == Time::ps(7'812'500));

  const std::vector<std::uint32_t> bucket = {7};
  const auto comm = communication_stream(layout, e, 1, /*worker=*/1, bucket);
  REQUIRE(comm);
  CHECK(comm->name == "communication");
  CHECK(show(*comm) == "w16 c7/1 r17");

  // The edge's transfers are collectives 20 (activation) and 21 (its gradient); the worker's GPUs 4, 5.
  const std::vector<std::uint32_t> act = {20}, grad = {21};
  const std::vector<int> gpus = {4, 5};
  const auto send0 = send_streams(layout, e, 0, act, grad, gpus);
  REQUIRE(send0.size() == 1);
  CHECK(send0[0].name == "send→GPU5");
  CHECK(show(send0[0]) == "w10 c20/0");
  const auto send1 = send_streams(layout, e, 1, act, grad, gpus);
  REQUIRE(send1.size() == 1);
  CHECK(send1[0].name == "send→GPU4");
  CHECK(show(send1[0]) == "w12 c21/0");
  const auto recv1 = receive_streams(layout, e, 1, act, grad, gpus);
  REQUIRE(recv1.size() == 1);
  CHECK(recv1[0].name == "recv←GPU4");
  CHECK(show(recv1[0]) == "c20/1 r11");
  const auto recv0 = receive_streams(layout, e, 0, act, grad, gpus);
  REQUIRE(recv0.size() == 1);
  CHECK(recv0[0].name == "recv←GPU5");
  CHECK(show(recv0[0]) == "c21/1 r13");

  // With dp = 1 there are no gradient collectives: no communication stream, the optimizer right
  // after backward.
  const StepLayout single = lay_out_step(p, placed(2, {0, 1, 1}), 1, StepOptions{});
  std::uint32_t n1 = 0;
  const WorkerEvents e1 = allocate_worker_events(single, n1);
  CHECK(n1 == 6);  // forward_done, 3 for the edge, and a done event per rank
  CHECK_FALSE(communication_stream(single, e1, 0, 0, {}));
  CHECK(show(compute_stream(p, single, e1, 0)) == "k0 r0 w3 k1 k6");
}

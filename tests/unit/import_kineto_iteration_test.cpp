// The steps of extract_iteration (workloads/import/import_kineto_detail.h), each on a hand-made trace of
// one iteration (tests/unit/import_kineto_maker.h), so that every number below is read off it:
//
//   thread 0 (forward)          launch   GPU (stream)            thread 1 (backward)
//   aten::linear    10..30      12       gemm      30..130 (7)   evaluate ReluBackward0    200..210
//   aten::relu      40..50      42       relu     135..155 (7)   evaluate AddmmBackward0   220..240
//   _foreach_add_  305..325     310      foreach  405..425 (7)   evaluate AccumulateGrad   245..248
//                                                                 (AccumulateGrad 500 floats at 245.5)
//   backward launches: 202 relu_bwd 210..230 (7); 222 gemm_bwd 230..330 (7); 224 wgrad 300..350 (20);
//   246.5 an NCCL all-reduce of 1000 floats 350..400 (30). Flows: relu → ReluBackward0, linear →
//   AddmmBackward0. Optimizer.step#SGD.step 300..340. All in ProfilerStep#1 [0, 1000) µs.
#include <doctest/doctest.h>

#include <optional>

#include "tests/unit/import_kineto_maker.h"
#include "workloads/import/import_kineto_detail.h"

using namespace hybridsim;
using namespace hybridsim::workloads::kineto_detail;
using hybridsim::testing::TraceMaker;
using sim::Bytes;
using sim::Time;
using workloads::KinetoCpuKind;

namespace {

Time us(double v) { return TraceMaker::us(v); }

struct OneIteration {
  TraceMaker m;
  IterationWindow window{"ProfilerStep#1", us(0), us(1000), us(1000)};
  WindowContent content;
  std::uint32_t linear = 0, relu = 0, relu_bwd_op = 0, addmm_bwd_op = 0, accumulate_op = 0;
  std::uint32_t gemm = 0, relu_k = 0, relu_bwd = 0, gemm_bwd = 0, wgrad = 0, nccl = 0, foreach_k = 0;

  OneIteration() {
    const std::string eval = "autograd::engine::evaluate_function: ";
    linear = m.op("aten::linear", 0, 10, 20);
    gemm = m.launch(0, 12, 30, 100, "gemm");
    relu = m.op("aten::relu", 0, 40, 10);
    relu_k = m.launch(0, 42, 135, 20, "void relu_kernel<float>(float*)");
    relu_bwd_op = m.op(eval + "ReluBackward0", 1, 200, 10);
    relu_bwd = m.launch(1, 202, 210, 20, "relu_bwd");
    addmm_bwd_op = m.op(eval + "AddmmBackward0", 1, 220, 20);
    gemm_bwd = m.launch(1, 222, 230, 100, "gemm_bwd");
    wgrad = m.launch(1, 224, 300, 50, "wgrad", 20);
    accumulate_op = m.op(eval + "torch::autograd::AccumulateGrad", 1, 245, 3);
    const std::uint32_t shapes = m.op("torch::autograd::AccumulateGrad", 1, 245.5, 2);
    m.trace.cpu[shapes].input_elements = 500;
    m.trace.cpu[shapes].input_element_bytes = 4;
    nccl = m.launch(1, 246.5, 350, 50, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 30);
    m.collective(nccl, "allreduce", 1000);
    const std::uint32_t step = m.annotation("Optimizer.step#SGD.step", 300, 40);
    m.op("aten::_foreach_add_", 0, 305, 20);
    foreach_k = m.launch(0, 310, 405, 20, "foreach");
    m.flow(1, 0, 40.5, 1, 200.5);
    m.flow(2, 0, 10.5, 1, 220.5);
    // Listed out of GPU order on purpose: the steps sort.
    content.gpu = {foreach_k, nccl, wgrad, gemm_bwd, relu_bwd, relu_k, gemm};
    content.cpu = {shapes, step};
  }
};

}  // namespace

TEST_CASE("kineto iteration: order_activities sorts by GPU start and anchors at the launch") {
  OneIteration it;
  const KinetoIndex index(it.m.trace);
  IterationDraft d;
  const auto items = order_activities(it.m.trace, index, it.content, d);
  // GPU starts 30, 135, 210, 230, 300, 350, 405: gemm, relu, relu_bwd, gemm_bwd, wgrad, nccl, foreach.
  REQUIRE(items.size() == 7);
  const std::vector<std::uint32_t> expected{it.gemm,  it.relu_k, it.relu_bwd, it.gemm_bwd,
                                            it.wgrad, it.nccl,   it.foreach_k};
  for (std::size_t i = 0; i < 7; ++i) CHECK(items[i].gpu == expected[i]);
  CHECK(items[0].anchor == us(12));  // launched at 12 µs, ran at 30
  CHECK(items[5].nccl);
  CHECK_FALSE(items[4].nccl);
  CHECK(d.stats.activities == 7);
  CHECK(d.notes.empty());

  // Equal starts: the shorter first, then trace order; no launch record: anchored at the start.
  TraceMaker m;
  const auto a = m.gpu("a", 5, 3);
  const auto b = m.gpu("b", 5, 1);
  const auto c = m.gpu("c", 5, 1);
  IterationDraft e;
  const auto same = order_activities(m.trace, KinetoIndex(m.trace), {{a, c, b}, {}}, e);
  REQUIRE(same.size() == 3);
  CHECK(same[0].gpu == b);
  CHECK(same[1].gpu == c);
  CHECK(same[2].gpu == a);
  CHECK(same[2].anchor == us(5));
  CHECK(e.notes.at("GPU activities without a launch record, attributed by their start time") == 3);
}

TEST_CASE("kineto iteration: find_backward_ops links backward ops to their forward op's slot") {
  OneIteration it;
  const KinetoIndex index(it.m.trace);
  DraftSlots slots;
  const BackwardOps b = find_backward_ops(it.m.trace, index, it.window, slots);
  // Three backward ops by start (200, 220, 245); ReluBackward0 → relu's slot (created first, 0),
  // AddmmBackward0 → linear's (1), the unlinked AccumulateGrad → the op before it (1).
  REQUIRE(b.ops.size() == 3);
  CHECK(b.ops[0].event == it.relu_bwd_op);
  CHECK(b.begin == us(200));
  CHECK(b.owner == std::vector<std::size_t>{0, 1, 1});
  CHECK(b.position.at(it.accumulate_op) == 2);
  REQUIRE(slots.size() == 2);
  CHECK(slots[0].base == "aten::relu");
  CHECK(slots[1].base == "aten::linear");
  CHECK(slots[1].order == us(10));
  CHECK_FALSE(slots[1].own_backward);

  // Without flows each backward op is a slot of its own, named without the evaluate_function prefix.
  it.m.trace.fwdbwd.clear();
  DraftSlots own;
  const BackwardOps u = find_backward_ops(it.m.trace, KinetoIndex(it.m.trace), it.window, own);
  CHECK(u.owner == std::vector<std::size_t>{0, 1, 2});
  REQUIRE(own.size() == 3);
  CHECK(own[0].base == "ReluBackward0");
  CHECK(own[2].base == "torch::autograd::AccumulateGrad");
  CHECK(own[2].own_backward);

  // Unlinked ops before the first linked one go to the first linked one: with only the second
  // flow, ReluBackward0 (200, before AddmmBackward0) goes to linear's slot, like AccumulateGrad.
  it.m.flow(2, 0, 10.5, 1, 220.5);
  DraftSlots one;
  const BackwardOps f = find_backward_ops(it.m.trace, KinetoIndex(it.m.trace), it.window, one);
  CHECK(f.owner == std::vector<std::size_t>{0, 0, 0});
  CHECK(one[0].base == "aten::linear");
  // A window without backward ops: nothing starts it.
  DraftSlots none;
  const BackwardOps n =
      find_backward_ops(it.m.trace, KinetoIndex(it.m.trace), {"w", us(0), us(100), us(100)}, none);
  CHECK(n.ops.empty());
  CHECK(n.begin == Time::max());
}

TEST_CASE("kineto iteration: DraftSlots makes one slot per key") {
  TraceMaker m;
  const auto op = m.op("aten::add", 0, 3, 1);
  DraftSlots s;
  CHECK(s.forward_slot(m.trace, op) == 0);
  CHECK(s.orphan_slot(5, us(9)) == 1);
  CHECK(s.forward_slot(m.trace, op) == 0);  // the same op: the same slot
  CHECK(s.orphan_slot(6, us(9)) == 2);      // every orphan activity its own
  CHECK(s[1].base == "(no cpu op)");
  CHECK(s[1].order == us(9));
  CHECK(s[0].order == us(3));
  CHECK(s.size() == 3);
}

TEST_CASE("kineto iteration: covered_by and measure_span_and_nccl") {
  // [10, 20) and [30, 40) over [15, 35): 5 + 5 µs.
  const Intervals merged{{us(10), us(20)}, {us(30), us(40)}};
  CHECK(covered_by(merged, us(15), us(35)) == us(10));
  CHECK(covered_by(merged, us(20), us(30)) == Time::zero());
  CHECK(covered_by(merged, us(0), us(100)) == us(20));

  OneIteration it;
  const KinetoIndex index(it.m.trace);
  IterationDraft d;
  const auto items = order_activities(it.m.trace, index, it.content, d);
  const Intervals nccl = measure_span_and_nccl(it.m.trace, items, d);
  // From the gemm's start (30) to the foreach's end (425); the one NCCL kernel runs 350..400.
  CHECK(d.stats.span == us(395));
  CHECK(d.stats.communication == us(50));
  CHECK(nccl == Intervals{{us(350), us(400)}});

  // Overlapping NCCL kernels merge: 0..10 and 5..12 on two streams → 0..12, communication 17.
  TraceMaker m;
  const auto a = m.gpu("nccl_a", 0, 10, 30);
  const auto b = m.gpu("nccl_b", 5, 7, 31);
  IterationDraft e;
  const Intervals two = measure_span_and_nccl(m.trace, {{a, us(0), true}, {b, us(5), true}}, e);
  CHECK(two == Intervals{{us(0), us(12)}});
  CHECK(e.stats.communication == us(17));
  CHECK(e.stats.span == us(12));
}

TEST_CASE("kineto iteration: attribute_kernels clips streams, measures gaps and attributes phases") {
  for (const bool keep_gaps : {false, true}) {
    CAPTURE(keep_gaps);
    OneIteration it;
    const KinetoIndex index(it.m.trace);
    IterationDraft d;
    DraftSlots slots;
    const auto items = order_activities(it.m.trace, index, it.content, d);
    const BackwardOps bwd = find_backward_ops(it.m.trace, index, it.window, slots);
    const Intervals nccl = measure_span_and_nccl(it.m.trace, items, d);
    attribute_kernels(it.m.trace, index, items, nccl, bwd, keep_gaps, slots, d);
    // Gaps: 130→135 (5), 155→210 (55), 350→405 less the NCCL kernel's 350..400 (5).
    CHECK(d.stats.launch_gaps == us(65));
    CHECK(d.stats.gap_count == 3);
    CHECK(d.stats.largest_gap == us(55));
    // wgrad (300..350 on stream 20) overlaps gemm_bwd (until 330) by 30: 20 µs remain.
    CHECK(d.stats.stream_overlap == us(30));
    CHECK(d.stats.busy == us(100 + 20 + 20 + 100 + 20 + 20));
    CHECK(d.stats.exposed_communication == us(395 - 280 - 65));
    CHECK(d.stats.forward == us(120));
    CHECK(d.stats.backward == us(140));
    CHECK(d.stats.optimizer == us(20));  // _foreach_add_ started (305) after backward began (200)
    CHECK(d.optimizer == us(20));
    CHECK(d.optimizer_idle == (keep_gaps ? us(5) : Time::zero()));
    // Slot 0 is relu's, slot 1 linear's (created by find_backward_ops).
    REQUIRE(slots.size() == 2);
    const Time relu_gap = keep_gaps ? us(5) : Time::zero();
    const Time bwd_gap = keep_gaps ? us(55) : Time::zero();
    CHECK(slots[0].op.forward == std::vector<DraftKernel>{{"relu_kernel", us(20), 7, relu_gap}});
    CHECK(slots[0].op.backward == std::vector<DraftKernel>{{"relu_bwd", us(20), 7, bwd_gap}});
    CHECK(slots[1].op.forward == std::vector<DraftKernel>{{"gemm", us(100), 7, Time::zero()}});
    CHECK(slots[1].op.backward == std::vector<DraftKernel>{{"gemm_bwd", us(100), 7, Time::zero()},
                                                           {"wgrad", us(20), 20, Time::zero()}});
    CHECK(slots[1].streams == std::vector<std::int64_t>{7});
  }
  // A GPU activity no CPU op launched, before any backward: an "(no cpu op)" slot of its own.
  TraceMaker m;
  const auto k = m.gpu("k", 0, 4);
  const KinetoIndex index(m.trace);
  IterationDraft d;
  DraftSlots slots;
  const BackwardOps none;
  attribute_kernels(m.trace, index, {{k, us(0), false}}, {}, none, false, slots, d);
  REQUIRE(slots.size() == 1);
  CHECK(slots[0].base == "(no cpu op)");
  CHECK(d.stats.forward == us(4));
}

namespace {

// The iteration up to its gradients: slots, backward ops and the draft after attribute_kernels.
struct Attributed {
  OneIteration it;
  std::optional<KinetoIndex> index;
  IterationDraft d;
  DraftSlots slots;
  std::vector<WindowActivity> items;
  BackwardOps bwd;
  Attributed() { rebuild(); }
  // After a change to the trace.
  void rebuild() {
    index.emplace(it.m.trace);
    d = IterationDraft{};
    slots = DraftSlots{};
    items = order_activities(it.m.trace, *index, it.content, d);
    bwd = find_backward_ops(it.m.trace, *index, it.window, slots);
    attribute_kernels(it.m.trace, *index, items, measure_span_and_nccl(it.m.trace, items, d), bwd, false,
                      slots, d);
  }
};

}  // namespace

TEST_CASE("kineto iteration: anchor_slot finds the last backward op with kernels before a time") {
  Attributed a;
  // 246.5: AccumulateGrad (245) belongs to linear's slot (1), which has kernels.
  CHECK(anchor_slot(a.bwd, a.slots, us(246.5)) == 1);
  // 215: ReluBackward0 (200) → relu's slot 0.
  CHECK(anchor_slot(a.bwd, a.slots, us(215)) == 0);
  // Before the first backward op: none.
  CHECK(anchor_slot(a.bwd, a.slots, us(199)) == kNoSlot);
  // A slot without kernels is passed over: with relu's kernels gone, 215 finds nothing before it.
  a.slots[0].op = DraftOp{};
  CHECK(anchor_slot(a.bwd, a.slots, us(215)) == kNoSlot);
}

TEST_CASE("kineto iteration: attach_nccl_gradients keeps whole-world all-reduces as buckets") {
  Attributed a;
  attach_nccl_gradients(a.it.m.trace, *a.index, a.items, a.bwd, a.slots, a.d);
  // 1000 floats after AccumulateGrad (linear's slot 1): 4000 B, 50 µs, group of 2.
  REQUIRE(a.d.buckets.size() == 1);
  CHECK(a.d.buckets[0].op == 1);
  CHECK(a.d.buckets[0].bytes == Bytes::of(4000));
  CHECK(a.d.buckets[0].duration == us(50));
  CHECK(a.d.buckets[0].group_size == 2);
  CHECK(a.slots[1].op.nccl_bytes == Bytes::of(4000));
  CHECK(a.d.dtype == "Float");
  CHECK(a.d.skipped.empty());

  // What is not a bucket, and why.
  auto skipped_as = [](auto change) {
    Attributed b;
    change(b.it.m.trace.collectives[0], b.it.m.trace);
    b.rebuild();
    attach_nccl_gradients(b.it.m.trace, *b.index, b.items, b.bwd, b.slots, b.d);
    CHECK(b.d.buckets.empty());
    return b.d.skipped.size() == 1 ? b.d.skipped.begin()->first : std::string("?");
  };
  CHECK(skipped_as([](auto& c, auto&) { c.name = "broadcast"; }) ==
        "NCCL broadcast kernels: not gradient all-reduces");
  CHECK(skipped_as([](auto& c, auto&) { c.dtype = "Quaternion"; }) ==
        "NCCL all-reduces without \"In msg nelems\" or a known dtype");
  CHECK(skipped_as([](auto& c, auto& t) {
          c.group_ranks = "[1]";
          c.group_name = "3";
          t.world_size = 2;
        }) ==
        "NCCL all-reduces over process group 3 [1] (1 of 2 ranks): not the whole world, so not data-parallel "
        "gradient buckets");
  CHECK(skipped_as([](auto& c, auto&) { c.in_elements = 0; }) ==
        "NCCL all-reduces of 0 elements (nothing exchanged)");
  CHECK(skipped_as([](auto& c, auto& t) {
          c.group_ranks = "[0, 1, 2]";
          t.world_size = 2;
        }) ==
        "NCCL all-reduces over 3 ranks in a world of 2 (distributedInfo): the trace contradicts itself");
  CHECK(skipped_as([](auto&, auto& t) { t.gpu[5].collective = -1; }) ==  // the NCCL kernel, 6th launched
        "NCCL kernels without collective arguments (no message size recorded)");
}

TEST_CASE("kineto iteration: attach_accumulate_gradients and optimizer_name") {
  Attributed a;
  attach_accumulate_gradients(a.it.m.trace, a.it.content, a.bwd, a.slots, a.d);
  // 500 floats at 245.5, after AccumulateGrad's evaluate op (245, linear's slot 1).
  CHECK(a.slots[1].op.accumulate_bytes == Bytes::of(2000));
  CHECK(a.slots[0].op.accumulate_bytes == Bytes{});
  CHECK(a.d.dtype == "Float");
  CHECK(optimizer_name(a.it.m.trace, a.it.content) == "SGD");

  // An unknown element type is counted, not guessed; a later Optimizer.step annotation wins.
  Attributed b;
  b.it.m.trace.cpu[b.it.content.cpu[0]].input_element_bytes = 0;
  attach_accumulate_gradients(b.it.m.trace, b.it.content, b.bwd, b.slots, b.d);
  CHECK(b.slots[1].op.accumulate_bytes == Bytes{});
  CHECK(b.d.skipped.at("AccumulateGrad ops with an unknown dtype") == 1);
  b.it.content.cpu.push_back(b.it.m.annotation("Optimizer.step#Adam.step", 350, 10));
  CHECK(optimizer_name(b.it.m.trace, b.it.content) == "Adam");
  CHECK(optimizer_name(b.it.m.trace, {}) == "");
}

TEST_CASE("kineto iteration: finish_ops orders the slots and gives stream dependencies") {
  Attributed a;
  attach_nccl_gradients(a.it.m.trace, *a.index, a.items, a.bwd, a.slots, a.d);
  finish_ops(a.slots, a.d);
  // linear (CPU start 10) before relu (40); relu reads linear through stream 7.
  REQUIRE(a.d.ops.size() == 2);
  CHECK(a.d.ops[0].name == "aten::linear#0");
  CHECK(a.d.ops[1].name == "aten::relu#0");
  CHECK(a.d.ops[0].inputs.empty());
  CHECK(a.d.ops[1].inputs == std::vector<std::uint32_t>{0});
  CHECK(a.d.buckets[0].op == 0);  // slot 1 became op 0

  // Own backward ops go last, latest first; a slot first on its streams follows the op before it;
  // repeated names count up; slots without kernels or gradients are left out.
  DraftSlots s;
  const auto fwd_a = s.slot_for(1, "aten::add", us(5), false);
  const auto bwd_early = s.slot_for(2, "AddBackward0", us(100), true);
  const auto bwd_late = s.slot_for(3, "AddBackward0", us(200), true);
  const auto fwd_b = s.slot_for(4, "aten::mul", us(1), false);
  s.slot_for(5, "aten::view", us(2), false);  // no kernels, no gradients: left out
  s[fwd_a].op.forward.push_back({"k", us(1), 3, {}});
  s[fwd_a].streams = {3};
  s[fwd_b].op.forward.push_back({"k", us(1), 4, {}});
  s[fwd_b].streams = {4};
  s[bwd_early].op.backward.push_back({"g", us(1), 3, {}});
  s[bwd_late].op.backward.push_back({"g", us(1), 3, {}});
  IterationDraft d;
  finish_ops(s, d);
  REQUIRE(d.ops.size() == 4);
  CHECK(d.ops[0].name == "aten::mul#0");
  CHECK(d.ops[1].name == "aten::add#0");
  CHECK(d.ops[2].name == "AddBackward0#0");  // the later one (200) first
  CHECK(d.ops[3].name == "AddBackward0#1");
  CHECK(d.ops[0].inputs.empty());
  CHECK(d.ops[1].inputs == std::vector<std::uint32_t>{0});  // first on stream 3: the op before it
  CHECK(d.ops[2].inputs == std::vector<std::uint32_t>{1});  // no forward streams: the op before it
}

TEST_CASE("kineto iteration: extract_iteration runs the steps in order") {
  OneIteration it;
  const IterationDraft d =
      extract_iteration(it.m.trace, KinetoIndex(it.m.trace), it.window, it.content, true);
  CHECK(d.stats.name == "ProfilerStep#1");
  CHECK(d.stats.cpu_duration == us(1000));
  CHECK(d.stats.span == us(395));
  CHECK(d.stats.busy == us(280));
  REQUIRE(d.ops.size() == 2);
  // linear: gradients from the all-reduce (4000 B) and AccumulateGrad (2000 B) both recorded.
  CHECK(d.ops[0].nccl_bytes == Bytes::of(4000));
  CHECK(d.ops[0].accumulate_bytes == Bytes::of(2000));
  CHECK(d.ops[1].forward[0].idle_before == us(5));
  CHECK(d.optimizer_name == "SGD");
  CHECK(d.optimizer_idle == us(5));
  // An empty window: only its name and CPU time.
  const IterationDraft e = extract_iteration(it.m.trace, KinetoIndex(it.m.trace), it.window, {}, false);
  CHECK(e.ops.empty());
  CHECK(e.stats.activities == 0);
  CHECK(e.stats.cpu_duration == us(1000));
}

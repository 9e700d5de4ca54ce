// The memory model's rules on hand-made profiles small enough to follow the lifetime rule point by
// point: activations, received copies and activation gradients; parameters by precision and
// optimizer; sparse gathers, bucket copies and NCCL buffers. The built-in networks are in
// workloads_memory_builtin.cpp.
#include <doctest/doctest.h>

#include "tests/unit/toy_profile.h"
#include "topology/preset_registry.h"
#include "workloads/memory/memory_model.h"
#include "workloads/program/mapping.h"

using namespace hybridsim;
using namespace hybridsim::workloads;
using sim::Bytes;
using sim::Time;
using testing::toy_op;
using testing::toy_profile;

namespace {

// in → left, in → right, (left, right) → join: outputs of 1, 2, 4 and 8 MiB, no parameters.
Profile diamond() {
  Profile p = toy_profile();
  p.ops.push_back(toy_op("in", {}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(1)));
  p.ops.push_back(toy_op("left", {0}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(2)));
  p.ops.push_back(toy_op("right", {0}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(4)));
  p.ops.push_back(toy_op("join", {1, 2}, Time::ms(1), Time::ms(1), Bytes(), Bytes::mib(8)));
  validate_profile(p);
  return p;
}

MemoryOptions bare(int dp = 1) {
  MemoryOptions o;
  o.dp = dp;
  o.framework = Bytes();
  return o;
}

std::vector<std::int64_t> live_mib(const RankMemory& r) {
  std::vector<std::int64_t> out;
  for (const MemoryPoint& p : r.timeline) out.push_back(p.live.count() / (1 << 20));
  return out;
}

StepMemory model(const Profile& p, const MpPlacement& pl, const MemoryOptions& o) {
  return model_step_memory(p, pl, order_ops(p, pl, sim::Bandwidth::gb_per_second(25)), o);
}

}  // namespace

TEST_CASE("memory: on one GPU an output lives until its own backward, a gradient from its first consumer's") {
  // Forward in, left, right, join; backward join, left, right, in (op_order's ties by index); then
  // the optimizer. Outputs y: in 1, left 2, right 4, join 8 MiB; gradients g of the same sizes.
  //   F(in)    y_in                                   = 1
  //   F(left)  + y_left                               = 3
  //   F(right) + y_right                              = 7
  //   F(join)  + y_join                               = 15   (the sum of the outputs)
  //   B(join)  15 + g_join 8 (its seed) + g_left 2 + g_right 4 (join's backward makes both) = 29
  //   B(left)  y_join, g_join freed (−16); + g_in 1 (left is in's first consumer backward) = 14
  //   B(right) y_left, g_left freed (−4)                = 10
  //   B(in)    y_right, g_right freed (−8)              = 2
  //   optimizer: every activation freed                 = 0
  // The peak, 29 MiB, is at join's backward: more than the outputs' sum (15), less than outputs
  // and gradients summed (30), since join's own output and gradient are gone before in's gradient.
  const Profile p = diamond();
  const StepMemory m = model(p, place_all_on_first(p, 1), bare());
  REQUIRE(m.ranks.size() == 1);
  CHECK(live_mib(m.ranks[0]) == std::vector<std::int64_t>{1, 3, 7, 15, 29, 14, 10, 2, 0});
  CHECK(m.ranks[0].peak_point == 4);
  CHECK(m.ranks[0].timeline[4].phase == MemoryPhase::Backward);
  CHECK(m.ranks[0].timeline[4].op == 3);
  CHECK(m.ranks[0].peak[MemoryPart::Activations] == Bytes::mib(29));
  CHECK(m.ranks[0].peak.total() == Bytes::mib(29));
  CHECK(m.ranks[0].after_step == Bytes());
}

TEST_CASE("memory: a received activation lives on its consumer's GPU, and so does the partial gradient") {
  // in, left on GPU 0; right, join on GPU 1. GPU 0: F(in) F(left) B(left) B(in) O.
  //   F(in) 1; F(left) 1 + 2 = 3;
  //   B(left): y_in 1, y_left 2, g_left 2 (received from join's GPU), g_in 1 (left is in's first
  //            consumer here) = 6;  B(in): y_in 1 + g_in 1 = 2 (g_in also sums right's, received);  O: 0.
  // GPU 1: F(right) F(join) B(join) B(right) O.
  //   F(right): the copy of y_in 1 (received for right, its only reader here) + y_right 4 = 5;
  //   F(join): + the copy of y_left 2 + y_join 8 = 15;
  //   B(join): + g_join 8 + g_right 4 + the partial g_left 2 (sent back after join) = 29;
  //   B(right): y_join, g_join, the y_left copy and its partial gradient freed (−20); + partial
  //             g_in 1 (sent back after right) = 10;  O: 0.
  const Profile p = diamond();
  const MpPlacement pl{2, {0, 0, 1, 1}, "test"};
  const StepMemory m = model(p, pl, bare());
  REQUIRE(m.ranks.size() == 2);
  CHECK(live_mib(m.ranks[0]) == std::vector<std::int64_t>{1, 3, 6, 2, 0});
  CHECK(live_mib(m.ranks[1]) == std::vector<std::int64_t>{5, 15, 29, 10, 0});
  CHECK(m.ranks[0].peak.total() == Bytes::mib(6));
  CHECK(m.ranks[1].peak.total() == Bytes::mib(29));
  CHECK(largest_rank(m.peaks()) == 1);
}

TEST_CASE("memory: parameters keep weights, gradients and optimizer state by precision and optimizer") {
  // join gets a dense gradient of 8 MiB, in a sparse table of 16 MiB of which each worker touches
  // 1 MiB of rows. FP32 (4 B a parameter): 2 Mi + 4 Mi = 6 Mi parameters.
  Profile p = diamond();
  p.ops[3].gradient_bytes = Bytes::mib(8);
  p.ops[3].exchange = GradientExchange::DenseAllReduce;
  p.ops[0].gradient_bytes = Bytes::mib(16);
  p.ops[0].exchange = GradientExchange::SparseAllGather;
  p.ops[0].sparse_bytes_per_worker = Bytes::mib(1);
  p.optimizer.name = "adam";
  validate_profile(p);
  const MpPlacement pl = place_all_on_first(p, 1);

  SUBCASE("FP32, one GPU") {
    // Weights 24 MiB; dense gradients 8 MiB (join's, kept all step); Adam 2 states × 6 Mi × 4 B
    // = 48 MiB. in's sparse rows (1 MiB) live from in's backward to the optimizer, the last two
    // points; the activation peak (29 MiB at join's backward) is still the peak: 24 + 8 + 48 + 29.
    const StepMemory m = model(p, pl, bare());
    const MemoryBreakdown& b = m.ranks[0].peak;
    CHECK(b[MemoryPart::Weights] == Bytes::mib(24));
    CHECK(b[MemoryPart::Gradients] == Bytes::mib(8));
    CHECK(b[MemoryPart::OptimizerState] == Bytes::mib(48));
    CHECK(b[MemoryPart::MasterWeights] == Bytes());
    CHECK(b[MemoryPart::Activations] == Bytes::mib(29));
    CHECK(b.total() == Bytes::mib(109));
    CHECK(live_mib(m.ranks[0]) == std::vector<std::int64_t>{81, 83, 87, 95, 109, 94, 90, 83, 81});
    CHECK(m.ranks[0].after_step == Bytes::mib(80));
  }
  SUBCASE("FP32, 4 workers: gathered rows, bucket copies and NCCL buffers") {
    // Persistent: 80 MiB as above + DDP's flat copy of the dense gradients 8 MiB + NCCL: 2 channels
    // × 1 ring connection × (4,194,304 + 4,915,200 + 524,288 B) = 19,267,584 B.
    // From in's backward: its rows 1 MiB, every worker's gathered 4 × 1 = 4 MiB, the flat input copy
    // 1 MiB; at the optimizer also the 4 MiB copied out of the gather's flat buffer.
    //   B(in) (activations 2): 88 MiB + NCCL + 2 + 1 + 4 + 1;  optimizer: 88 MiB + NCCL + 1 + 4 + 1 + 4.
    // The peak stays at join's backward: 88 MiB + NCCL + 29 MiB.
    MemoryOptions o = bare(4);
    o.nccl_channels = 2;
    o.nccl_connections_per_channel = 1;
    const StepMemory m = model(p, pl, o);
    const RankMemory& r = m.ranks[0];
    const std::int64_t nccl = 19'267'584;
    CHECK(r.peak[MemoryPart::CommBuffers] == Bytes::of(nccl));
    CHECK(r.peak[MemoryPart::GradientBuckets] == Bytes::mib(8));
    CHECK(r.peak.total() == Bytes::of(Bytes::mib(88 + 29).count() + nccl));
    CHECK(r.timeline[7].live == Bytes::of(Bytes::mib(88 + 2 + 1 + 4 + 1).count() + nccl));
    CHECK(r.timeline[8].live == Bytes::of(Bytes::mib(88 + 1 + 4 + 1 + 4).count() + nccl));
    CHECK(r.after_step == Bytes::of(Bytes::mib(88).count() + nccl));
    // Gradient copies off (DDP's gradient_as_bucket_view): no flat copies, 8 + 1 + 4 MiB less at the end.
    o.gradient_copies = false;
    const StepMemory off = model(p, pl, o);
    CHECK(off.ranks[0].timeline[8].live == Bytes::of(Bytes::mib(80 + 1 + 4).count() + nccl));
  }
  SUBCASE("mixed precision: FP16 weights and gradients, FP32 master weights and optimizer state") {
    // Under AMP the gradient bytes are FP16 (2 B a parameter): 4 Mi + 8 Mi = 12 Mi parameters.
    // Weights 24 MiB (FP16), dense gradients 8 MiB, master weights 12 Mi × 4 B = 48 MiB, Adam
    // 12 Mi × 2 × 4 B = 96 MiB; the activation peak 29 MiB: 24 + 8 + 48 + 96 + 29 = 205 MiB.
    // fp8 the same: Transformer Engine keeps the parameters in BF16 and casts them to FP8 for each
    // GEMM, the optimizer keeping FP32 masters and state. It was counted at 4 B a parameter before:
    // 6 Mi parameters, Adam 48 MiB, no master weights, 109 MiB (half the state the run holds).
    for (const char* precision : {"amp", "fp8"}) {
      CAPTURE(precision);
      p.meta.precision = precision;
      const StepMemory m = model(p, pl, bare());
      const MemoryBreakdown& b = m.ranks[0].peak;
      CHECK(m.rule.mixed_precision);
      CHECK(m.rule.bytes_per_parameter == 2);
      CHECK(b[MemoryPart::Weights] == Bytes::mib(24));
      CHECK(b[MemoryPart::Gradients] == Bytes::mib(8));
      CHECK(b[MemoryPart::MasterWeights] == Bytes::mib(48));
      CHECK(b[MemoryPart::OptimizerState] == Bytes::mib(96));
      CHECK(b.total() == Bytes::mib(205));
    }
  }
  SUBCASE("fp16 and bf16 profiles: the same rule as AMP (16-bit values over FP32 master weights)") {
    // scenarios/README.md's workload.precision: fp16 and bf16 keep FP32 master weights, and their
    // gradient bytes are 2 B a parameter, so the same 12 Mi parameters and 205 MiB as under AMP (they
    // were counted at 4 B each: 6 Mi parameters, Adam 48 MiB, no master weights).
    for (const char* precision : {"fp16", "bf16", "BF16"}) {
      CAPTURE(precision);
      p.meta.precision = precision;
      const StepMemory m = model(p, pl, bare());
      CHECK(m.rule.bytes_per_parameter == 2);
      CHECK(m.ranks[0].peak[MemoryPart::MasterWeights] == Bytes::mib(48));
      CHECK(m.ranks[0].peak[MemoryPart::OptimizerState] == Bytes::mib(96));
      CHECK(m.ranks[0].peak.total() == Bytes::mib(205));
    }
    p.meta.precision = "tf32";  // FP32 storage: 4 B a parameter, no master copy
    CHECK(model(p, pl, bare()).ranks[0].peak[MemoryPart::MasterWeights] == Bytes());
  }
  SUBCASE("fp64: 8-byte weights and gradients, and Adam's two states in FP64 like the parameters") {
    // The gradient bytes are 8 B a parameter: 24 MiB / 8 = 3 Mi parameters. Weights 24 MiB, dense
    // gradients 8 MiB, Adam 3 Mi × 2 × 8 B = 48 MiB (PyTorch allocates the state like the parameter),
    // no master copy; activations 29 MiB: 109 MiB. The rule said 4 B a parameter (6 Mi parameters)
    // with 4-byte state, the same 48 MiB by two errors that cancel; apex's buckets, 10 M elements,
    // read the wrong size from it (analysis_training_loop_test.cpp).
    p.meta.precision = "fp64";
    const StepMemory m = model(p, pl, bare());
    const MemoryBreakdown& b = m.ranks[0].peak;
    CHECK_FALSE(m.rule.mixed_precision);
    CHECK(m.rule.bytes_per_parameter == 8);
    CHECK(m.rule.state_bytes == 8);
    CHECK(b[MemoryPart::Weights] == Bytes::mib(24));
    CHECK(b[MemoryPart::Gradients] == Bytes::mib(8));
    CHECK(b[MemoryPart::MasterWeights] == Bytes());
    CHECK(b[MemoryPart::OptimizerState] == Bytes::mib(48));
    CHECK(b.total() == Bytes::mib(109));
  }
}

TEST_CASE("memory: optimizer state per parameter by the optimizer's name") {
  Profile p = toy_profile();
  auto states = [&](const std::string& name) {
    p.optimizer.name = name;
    return parameter_rule(p).optimizer_states;
  };
  CHECK(states("sgd-momentum") == 1);  // the momentum buffer
  CHECK(states("SGD") == 1);           // the importers' name for torch.optim.SGD (momentum assumed)
  CHECK(states("adagrad") == 1);       // the accumulated squares
  CHECK(states("adam") == 2);          // first and second moments
  CHECK(states("Adam_W") == 2);
  CHECK(states("lamb") == 2);
  CHECK(states("rmsprop") == 1);
  CHECK(states("unknown") == 0);
  CHECK_FALSE(parameter_rule(p).optimizer_known);
  p.meta.precision = "fp32";
  CHECK_FALSE(parameter_rule(p).mixed_precision);
  p.meta.precision = "AMP";
  CHECK(parameter_rule(p).mixed_precision);
}

TEST_CASE("memory: NCCL connections follow the algorithm, channels the scenario") {
  // Ring 1 connection per channel, tree 3 (parent, two children), auto both (4), hierarchical two rings.
  const topology::Topology t = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  StepConfig c;
  c.mapping = default_mapping(t, 8, 1);
  c.comm.algorithm = AllReduceAlgorithm::Ring;
  CHECK(memory_options(c, t).nccl_connections_per_channel == 1);
  CHECK(memory_options(c, t).nccl_channels == kAssumedNcclChannels);
  c.comm.algorithm = AllReduceAlgorithm::Tree;
  CHECK(memory_options(c, t).nccl_connections_per_channel == 3);
  c.comm.algorithm = AllReduceAlgorithm::Hierarchical;
  CHECK(memory_options(c, t).nccl_connections_per_channel == 2);
  c.comm.algorithm = AllReduceAlgorithm::Auto;
  c.comm.channels = 12;
  const MemoryOptions o = memory_options(c, t);
  CHECK(o.nccl_connections_per_channel == 4);
  CHECK(o.nccl_channels == 12);
  CHECK(o.dp == 8);
  // One connection's buffers: Simple 4 MiB + LL128 120 × 640 × 8 × 8 B + LL 8 × 512 × 8 × 16 B.
  CHECK(kNcclConnectionBuffers == Bytes::of(4'194'304 + 4'915'200 + 524'288));
}

TEST_CASE("memory: an MP rank whose group cannot run hierarchical is counted at the ring's one connection") {
  // Hierarchical needs two machines or more holding the same number (2 or more) of the group's GPUs
  // (hierarchical_unfit); elsewhere the planner runs the ring, which receives on 1 connection a channel.
  const topology::Topology t = topology::build_cluster({.preset = "dgx1-v100", .nodes = 2});
  StepConfig c;
  c.comm.algorithm = AllReduceAlgorithm::Hierarchical;
  c.mapping = default_mapping(t, 8, 1);  // GPUs 0-7: all on machine 0
  CHECK(memory_options(c, t).ring_by_rank == std::vector<std::uint8_t>{1});
  c.mapping = default_mapping(t, 16, 1);  // 8 on each machine: hierarchical runs
  CHECK(memory_options(c, t).ring_by_rank == std::vector<std::uint8_t>{0});
  c.mapping = default_mapping(t, 8, 2);  // each rank's group of 8: 4 on each machine
  CHECK(memory_options(c, t).ring_by_rank == std::vector<std::uint8_t>{0, 0});
  c.comm.algorithm = AllReduceAlgorithm::Ring;  // nothing to fall back from
  CHECK(memory_options(c, t).ring_by_rank.empty());
}

TEST_CASE("memory: capacities come from the GPU table, read as GiB") {
  CHECK(gpu_capacity("V100-SXM2-16GB")->bytes == Bytes::gib(16));
  CHECK(gpu_capacity("V100-SXM3-32GB")->bytes == Bytes::gib(32));
  CHECK(gpu_capacity("A100-SXM4-80GB")->bytes == Bytes::gib(80));
  CHECK(gpu_capacity("H200")->bytes == Bytes::gib(141));
  CHECK_FALSE(gpu_capacity("TPU").has_value());
  CHECK(preset_gpu_capacity("dgx1-v100")->bytes == Bytes::gib(16));
  CHECK(preset_gpu_capacity("dgx1-v100")->source == "V100-SXM2-16GB of dgx1-v100");
  CHECK(preset_gpu_capacity("dgx2")->bytes == Bytes::gib(32));
  CHECK_FALSE(preset_gpu_capacity("nothing").has_value());
  // Fits when every rank is at most the capacity (equal fits).
  MemoryBreakdown a, b;
  a[MemoryPart::Weights] = Bytes::gib(16);
  b[MemoryPart::Weights] = Bytes::gib(17);
  CHECK(fits_in({a}, Bytes::gib(16)));
  CHECK_FALSE(fits_in({a, b}, Bytes::gib(16)));
  CHECK(largest_rank({a, b}) == 1);
  CHECK(largest_peak({a, b}) == Bytes::gib(17));
  CHECK(largest_peak({}) == Bytes());
}

TEST_CASE("memory: the breakdown reads in GiB") {
  MemoryBreakdown b;
  b[MemoryPart::Weights] = Bytes::of(7'107'522'040);   // 6.619 GiB
  b[MemoryPart::Activations] = Bytes::mib(1);          // 0.001 GiB
  b[MemoryPart::Framework] = Bytes::gib(1);
  CHECK(describe_parts(b) == "weights 6.62, activations <0.01, framework 1.00");
  CHECK(format_gib(b.total()) == "7.62 GiB");
  CHECK(format_gib(Bytes::gib(16)) == "16 GiB");
  CHECK(format_gib(Bytes::of(17'714'187'248)) == "16.5 GiB");
  // Under 0.005 GiB, "0.00 GiB" would read as nothing: a capacity of 1 KiB (cluster.gpu_memory) said
  // "4.96 GiB of 0.00 GiB".
  CHECK(format_gib(Bytes::of(1024)) == "1 KiB");
  CHECK(format_gib(Bytes::mib(5)) == "5 MiB");
  CHECK(format_gib(Bytes::mib(6)) == "0.01 GiB");
  // Not exact bytes ("1234567 B"): MiB or KiB as GiB are written, two decimals, one from 10, none from
  // 100 (1,234,567 B = 1.177 MiB; 5,000 B = 4.883 KiB; 50,000 B = 48.83 KiB; 500,000 B = 488.3 KiB).
  CHECK(format_gib(Bytes::of(1'234'567)) == "1.18 MiB");
  CHECK(format_gib(Bytes::of(5'000)) == "4.88 KiB");
  CHECK(format_gib(Bytes::of(50'000)) == "48.8 KiB");
  CHECK(format_gib(Bytes::of(500'000)) == "488 KiB");
  CHECK(format_gib(Bytes::of(1'000)) == "1000 B");
}

// The V100 cost model behind the built-in profiles, and the per-block time shares it gives against
// PipeDream's measured profiles (numbers quoted from the reference profiles; see workloads/README.md).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "sim/error.h"
#include "workloads/generators/profile_gen.h"

using namespace hybridsim;
using namespace hybridsim::workloads;

namespace {

// Each layer's share of forward + backward kernel time, in percent.
std::map<std::string, double> shares(const Profile& p, bool forward_only) {
  std::map<std::string, double> ms;
  double total = 0;
  for (const auto& op : p.ops) {
    const double t = (forward_only ? op.forward_time() : op.forward_time() + op.backward_time()).to_ms();
    ms[op.layer] += t;
    total += t;
  }
  for (auto& [layer, v] : ms) v = 100 * v / total;
  return ms;
}

}  // namespace

TEST_CASE("profile gen: kernels cost work / rate, rounded up to a nanosecond, never below the floor") {
  const KernelCostModel v100 = v100_fp32();
  // 6 MB at 600 GB/s is exactly 10 us.
  CHECK(v100.memory("copy", 6'000'000).duration == sim::Time::us(10));
  // 6,000,001 bytes take 10.0000017 us → 10.001 us after rounding up.
  CHECK(v100.memory("copy", 6'000'001).duration == sim::Time::ns(10'001));
  // One byte would take 1.7 ps: the 5 us launch floor wins.
  CHECK(v100.memory("tiny", 1).duration == sim::Time::us(5));
  // 9.111 TFLOP at 9.111 TFLOP/s is one second.
  CHECK(v100.gemm("gemm", 9'111'000'000'000).duration == sim::Time::s(1));
  // Inception's first conv, batch 64: 2·64·32·149·149·3·3·3 = 2,455,252,992 FLOP at 12.3 TFLOP/s
  // = 199,614.06 ns → 199,615 ns.
  CHECK(v100.conv("conv", 2'455'252'992).duration == sim::Time::ns(199'615));
  const Profile inception = builtin_profile("inception-v3");
  CHECK(inception.ops[0].forward[0].duration == sim::Time::ns(199'615));
  // SGD momentum moves 5 × the parameter bytes: 5 · 2^30 B at the streaming 800 GB/s (4/3 of the
  // 600 GB/s memory-kernel rate) = 6,710,886.4 ns → up.
  CHECK(v100.streaming_bandwidth() == sim::Bandwidth::gb_per_second(800));
  CHECK(v100.optimizer_time_per_gib(5) == sim::Time::ns(6'710'887));
  CHECK(inception.optimizer.time_per_gib == sim::Time::ns(6'710'887));
}

TEST_CASE("profile gen: Inception-V3 block shares stay close to PipeDream's measured profile") {
  // PipeDream inception_v3 (batch 128): per block, conv + BN/ReLU + pooling forward and backward
  // summed over its modules, as a percentage of the network. The aux head and the final fc are
  // dominated there by PipeDream's ~0.25 ms of synchronization per module, so they are left out.
  const std::map<std::string, double> pipedream = {
      {"stem", 27.8},    {"Mixed_5b", 5.7}, {"Mixed_5c", 5.7}, {"Mixed_5d", 6.3}, {"Mixed_6a", 6.3},
      {"Mixed_6b", 6.8}, {"Mixed_6c", 7.5}, {"Mixed_6d", 7.5}, {"Mixed_6e", 8.2}, {"Mixed_7a", 4.4},
      {"Mixed_7b", 5.3}, {"Mixed_7c", 7.0}};
  auto ours = shares(builtin_profile("inception-v3"), false);
  for (const auto& expected : pipedream) {  // (block, share); no structured binding: CAPTURE takes it
    CAPTURE(expected.first);
    CHECK(std::abs(ours[expected.first] - expected.second) <= 1.5);  // percentage points
  }
}

TEST_CASE("profile gen: GNMT-8 forward shares stay close to PipeDream's gnmt_large profile") {
  // PipeDream gnmt_large: 8+8 layers, batch 128, 25 tokens. Forward times only: they were taken with
  // a synchronize per module, while backward times leak between neighbours. Same configuration here.
  const Profile p = generate_gnmt({.layers = 8, .source_length = 25, .target_length = 25}, v100_fp32());
  CHECK(p.meta.network == "gnmt-8");
  std::map<std::string, double> ours;
  for (const auto& [layer, share] : shares(p, true)) {
    std::string group = layer;
    if (layer.rfind("enc.L0", 0) == 0) group = "enc.L0";
    else if (layer != "enc.L1" && layer.rfind("enc.", 0) == 0) group = "enc.L2-7";
    else if (layer == "dec.L0" || layer == "attention") group = "dec.L0+attention";
    else if (layer.rfind("dec.", 0) == 0) group = "dec.L1-7";
    ours[group] += share;
  }
  const std::map<std::string, double> pipedream = {
      {"enc.L0", 7.7},           {"enc.L1", 5.6},   {"enc.L2-7", 22.9},
      {"dec.L0+attention", 8.3}, {"dec.L1-7", 40.7}, {"classifier", 13.6}};
  for (const auto& expected : pipedream) {  // (group, share)
    CAPTURE(expected.first);
    CHECK(std::abs(ours[expected.first] - expected.second) <= 2.5);  // percentage points
  }
}

TEST_CASE("profile gen: configurations change what they should") {
  // Half the batch halves the GEMM work of every LSTM step (above the launch floor).
  const KernelCostModel v100 = v100_fp32();
  const Profile full = generate_gnmt({}, v100);
  const Profile half = generate_gnmt({.batch = 64}, v100);
  const auto& a = full.ops[full.op_by_name("enc.L2.t0")].forward;
  const auto& b = half.ops[half.op_by_name("enc.L2.t0")].forward;
  REQUIRE(a.size() == b.size());
  CHECK(a[1].name == "gemm_input");
  // 2·128·1024·4096 FLOP at 9.111 TFLOP/s = 117,851.1 ns → 117,852; half: 58,925.6 → 58,926.
  CHECK(a[1].duration == sim::Time::ns(117'852));
  CHECK(b[1].duration == sim::Time::ns(58'926));
  // Without the aux head Inception has the 23,834,568 parameters of the main tower.
  CHECK(generate_inception_v3({.aux_head = false}, v100).parameter_bytes().count() == 4 * 23'834'568LL);
  CHECK_THROWS_AS(generate_gnmt({.layers = 1}, v100), InputError);
}

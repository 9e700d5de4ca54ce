// NCCL's cost model (sim/nccl_model.h) evaluated by hand from the constants of NVIDIA/nccl
// tuning.cc (as tabulated in the project's sources): bandwidths, latencies, the auto choice at a
// small and a large size, and the timing a sim/ collective gets for a choice.
#include <doctest/doctest.h>

#include "sim/error.h"
#include "sim/nccl_model.h"

using namespace hybridsim::sim;

namespace {

// One DGX-1: 8 ranks, 6 ring channels at NCCL's 20 GB/s per NVLink, LL128 on.
NcclMachine dgx1(CollectiveOp op = CollectiveOp::AllReduce) {
  return {.op = op, .ranks = 8, .nodes = 1, .channels = 6, .channel_gb_per_s = 20,
          .intra = HopKind::NVLink, .ll128 = true};
}
// Four DGX-1s: 32 ranks, one channel per NIC (4) at NCCL's 12 GB/s per 100 Gb/s NIC.
NcclMachine four_dgx1() {
  return {.op = CollectiveOp::AllReduce, .ranks = 32, .nodes = 4, .channels = 4,
          .channel_gb_per_s = 12, .intra = HopKind::NVLink, .ll128 = true};
}

}  // namespace

TEST_CASE("NCCL model on one DGX-1: ring and tree bandwidths and latencies") {
  const NcclMachine m = dgx1();
  // Ring Simple: busBw = 6 × 20 = 120 GB/s, algbw = 120 × 8 / 14 = 68.571 GB/s; latency
  // 8.4 + 14 × 3.4 = 56 µs; 64 MiB: 56 + 67,108,864 / 68,571.4 = 1034.67 µs.
  const NcclEstimate simple = nccl_estimate(m, NcclAlgorithm::Ring, Protocol::Simple, Bytes::mib(64));
  CHECK(simple.usable);
  CHECK(simple.bus_gb_per_s == doctest::Approx(120));
  CHECK(simple.algo_gb_per_s == doctest::Approx(120.0 * 8 / 14));
  CHECK(simple.latency_us == doctest::Approx(56));
  CHECK(simple.time_us == doctest::Approx(1034.67).epsilon(1e-5));
  // Ring LL (at 1 MiB, on all 6 channels): busBw / 4 = 30 GB/s; latency 3.6 + 14 × 0.47 = 10.18 µs.
  const NcclEstimate ll = nccl_estimate(m, NcclAlgorithm::Ring, Protocol::LL, Bytes::mib(1));
  CHECK(ll.bus_gb_per_s == doctest::Approx(30));
  CHECK(ll.latency_us == doctest::Approx(10.18));
  CHECK(ll.time_us == doctest::Approx(10.18 + 1048576 / (30.0 * 8 / 14 * 1000)));
  // Ring LL128: min(120 × 0.92, 6 × 16.7) = 100.2 GB/s; latency 10 + 14 × 1.9 = 36.6 µs.
  const NcclEstimate ll128 = nccl_estimate(m, NcclAlgorithm::Ring, Protocol::LL128, Bytes::mib(1));
  CHECK(ll128.bus_gb_per_s == doctest::Approx(100.2));
  CHECK(ll128.latency_us == doctest::Approx(36.6));
  // Tree LL128 on one node: min(120 × 0.9, 110) × 7/9 = 84 GB/s, algbw × 0.5 = 42; latency
  // 4.4 + 2 × 7 × 1.2 = 21.2 µs.
  const NcclEstimate tree = nccl_estimate(m, NcclAlgorithm::Tree, Protocol::LL128, Bytes::mib(1));
  CHECK(tree.bus_gb_per_s == doctest::Approx(84));
  CHECK(tree.algo_gb_per_s == doctest::Approx(42));
  CHECK(tree.latency_us == doctest::Approx(21.2));
  // Trees are all-reduce only; LL128 only where enabled.
  CHECK_FALSE(
      nccl_estimate(dgx1(CollectiveOp::AllGather), NcclAlgorithm::Tree, Protocol::LL, Bytes::kib(1)).usable);
  NcclMachine pcie = m;
  pcie.ll128 = false;
  CHECK_FALSE(nccl_estimate(pcie, NcclAlgorithm::Ring, Protocol::LL128, Bytes::kib(1)).usable);
  // All-gather: 7 steps, algbw = busBw × 8/7; LL is × 1/3 on one node for ops but all-reduce.
  const NcclEstimate ag =
      nccl_estimate(dgx1(CollectiveOp::AllGather), NcclAlgorithm::Ring, Protocol::LL, Bytes::mib(1));
  CHECK(ag.bus_gb_per_s == doctest::Approx(40));
  CHECK(ag.algo_gb_per_s == doctest::Approx(40.0 * 8 / 7));
  CHECK(ag.latency_us == doctest::Approx(3.6 + 7 * 0.47));
}

TEST_CASE("NCCL model across 4 DGX-1s: network hops, LL's 1.8, the ring's plateau") {
  const NcclMachine m = four_dgx1();
  // Tree LL (16 KiB: 4 channels of 4,096 B): min(48 × 0.9, 80) / 3.8 = 11.368 GB/s; latency
  // 4.4 + 2 × (7 × 0.52 + 2 × 5.0) = 31.68 µs.
  const NcclEstimate tree = nccl_estimate(m, NcclAlgorithm::Tree, Protocol::LL, Bytes::kib(16));
  CHECK(tree.bus_gb_per_s == doctest::Approx(43.2 / 3.8));
  CHECK(tree.latency_us == doctest::Approx(31.68));
  // Ring LL: 62 steps, 6 of them between machines: 3.6 + 56 × 0.47 × 1.8 + 6 × 2.7 = 67.176 µs.
  CHECK(nccl_estimate(m, NcclAlgorithm::Ring, Protocol::LL, Bytes::kib(1)).latency_us ==
        doctest::Approx(67.176));
  // Ring Simple: 8.4 + 56 × 3.4 + 6 × 9.6 = 256.4 µs below 32/16 × 64 KiB = 128 KiB, × 1.9 from there.
  CHECK(nccl_estimate(m, NcclAlgorithm::Ring, Protocol::Simple, Bytes::of(131071)).latency_us ==
        doctest::Approx(256.4));
  const NcclEstimate big = nccl_estimate(m, NcclAlgorithm::Ring, Protocol::Simple, Bytes::gib(1));
  CHECK(big.latency_us == doctest::Approx(256.4 * 1.9));
  // busBw 48 GB/s, algbw 48 × 32/62: 487.16 + 1,073,741,824 / 24,774.2 = 43,828.3 µs.
  CHECK(big.time_us == doctest::Approx(43828.3).epsilon(1e-5));
}

TEST_CASE("NCCL's choice: LL at small sizes, Simple on the ring at large ones") {
  // One DGX-1, 1 KiB: ring LL (10.24 µs) beats tree LL (4.4 + 14 × 0.52 = 11.68 µs + ...).
  const NcclChoice small = nccl_choose(dgx1(), Bytes::kib(1));
  CHECK(small.algorithm == NcclAlgorithm::Ring);
  CHECK(small.protocol == Protocol::LL);
  // 1 GiB: ring Simple (56 µs + 15,658.7 µs) beats ring LL128 (algbw 57.3 GB/s: 18,780 µs).
  const NcclChoice large = nccl_choose(dgx1(), Bytes::gib(1));
  CHECK(large.algorithm == NcclAlgorithm::Ring);
  CHECK(large.protocol == Protocol::Simple);
  CHECK(large.estimate.time_us == doctest::Approx(56 + 1073741824 / (120.0 * 8 / 14 * 1000)));
  // Four DGX-1s, 1 KiB: the tree's log2(4) network hops (31.86 µs) beat the ring's 62 steps.
  const NcclChoice across = nccl_choose(four_dgx1(), Bytes::kib(1));
  CHECK(across.algorithm == NcclAlgorithm::Tree);
  CHECK(across.protocol == Protocol::LL);
  CHECK(nccl_choose(four_dgx1(), Bytes::gib(1)).algorithm == NcclAlgorithm::Ring);
  // Fixed algorithm or protocol.
  CHECK(nccl_choose(dgx1(), Bytes::kib(1), NcclAlgorithm::Tree).algorithm == NcclAlgorithm::Tree);
  CHECK(nccl_choose(dgx1(), Bytes::kib(1), {}, Protocol::Simple).protocol == Protocol::Simple);
  NcclMachine pcie = dgx1();
  pcie.ll128 = false;
  CHECK(nccl_choose(pcie, Bytes::mib(1), NcclAlgorithm::Ring, Protocol::LL128).protocol == Protocol::Simple);
  CHECK_THROWS_AS(nccl_choose(dgx1(), Bytes::kib(1), {}, Protocol::Ideal), hybridsim::InternalError);
}

TEST_CASE("NCCL's launch: fewer channels while size < channels × threads × bytes a thread") {
  const NcclMachine m = dgx1();
  // Ring LL on 8 ranks: 512 threads × 8 B × 8 ranks = 32,768 B a channel; 6 channels from 196,608 B.
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::LL, Bytes::of(4)) == 1);
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::LL, Bytes::of(65'535)) == 1);
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::LL, Bytes::of(65'536)) == 2);
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::LL, Bytes::of(196'607)) == 5);
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::LL, Bytes::of(196'608)) == 6);
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::LL, Bytes::gib(1)) == 6);
  // LL128: 640 × 8 = 5,120 B a channel; Simple: 512 × 64 = 32,768 B; tree LL: 512 × 8 = 4,096 B.
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::LL128, Bytes::of(30'719)) == 5);
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::LL128, Bytes::of(30'720)) == 6);
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::Simple, Bytes::of(163'839)) == 4);
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::Simple, Bytes::of(163'840)) == 5);
  CHECK(nccl_channels(m, NcclAlgorithm::Tree, Protocol::LL, Bytes::of(8'192)) == 2);
  // Simple on channels of at most PCIe's 12 GB/s in all: 256 threads, 16,384 B a channel.
  NcclMachine pcie = dgx1();
  pcie.channels = 2;
  pcie.channel_gb_per_s = 6;
  CHECK(nccl_channels(pcie, NcclAlgorithm::Ring, Protocol::Simple, Bytes::of(32'768)) == 2);
  CHECK(nccl_channels(pcie, NcclAlgorithm::Ring, Protocol::Simple, Bytes::of(32'767)) == 1);
  // The ring's LL threshold grows with the ranks: 32 ranks, 4 channels, 131,072 B a channel.
  CHECK(nccl_channels(four_dgx1(), NcclAlgorithm::Ring, Protocol::LL, Bytes::of(393'216)) == 3);
  // Not NCCL's launch: the ideal protocol and the all-to-all's direct sends keep every channel.
  CHECK(nccl_channels(m, NcclAlgorithm::Ring, Protocol::Ideal, Bytes::of(4)) == 6);
  CHECK(nccl_channels(dgx1(CollectiveOp::AllToAll), NcclAlgorithm::Ring, Protocol::Simple, Bytes::of(64)) ==
        6);
  // The closed form counts those channels: 4 B over 1 channel, busBw 20 / 4 = 5 GB/s.
  const NcclEstimate one = nccl_estimate(m, NcclAlgorithm::Ring, Protocol::LL, Bytes::of(4));
  CHECK(one.channels == 1);
  CHECK(one.bus_gb_per_s == doctest::Approx(5));
  CHECK(one.time_us == doctest::Approx(10.18 + 4 / (5.0 * 8 / 14 * 1000)));
  // NCCL chooses on every channel, then launches fewer. At 64 KiB ring LL on 6 channels (10.18 +
  // 65,536 / 17,142.9 = 14.00 µs) beats tree LL (11.68 + 65,536 / 14,210.5 = 16.29 µs), so the ring
  // runs, on 2 channels: 10.18 + 65,536 / 5,714.3 = 21.65 µs, which the tree would have beaten.
  const NcclChoice mid = nccl_choose(m, Bytes::kib(64));
  CHECK(mid.algorithm == NcclAlgorithm::Ring);
  CHECK(mid.protocol == Protocol::LL);
  CHECK(mid.estimate.channels == 2);
  CHECK(mid.estimate.time_us == doctest::Approx(10.18 + 65536 / (10.0 * 8 / 14 * 1000)));
  CHECK(nccl_estimate(m, NcclAlgorithm::Tree, Protocol::LL, Bytes::kib(64)).time_us < mid.estimate.time_us);
}

TEST_CASE("NCCL timing for sim/: payload rates, caps, latencies") {
  const auto eff = nccl_payload_efficiency();
  CHECK(eff[static_cast<int>(LinkKind::NVLink)] == doctest::Approx(0.8));       // 20 / 25
  CHECK(eff[static_cast<int>(LinkKind::InfiniBand)] == doctest::Approx(0.96));  // 12 / 12.5
  CHECK(eff[static_cast<int>(LinkKind::PCIe)] == doctest::Approx(1.0));         // 12 / 12
  CHECK(eff[static_cast<int>(LinkKind::CpuInterconnect)] == doctest::Approx(6.0 / 38.4));
  const ProtocolTiming simple = nccl_timing(dgx1(), NcclAlgorithm::Ring, Protocol::Simple, Bytes::mib(64));
  CHECK(simple.link_rate_scale[static_cast<int>(LinkKind::NVLink)] == doctest::Approx(0.8));
  CHECK(simple.base_latency == Time::ns(8400));
  CHECK(simple.hop_latency[static_cast<int>(HopKind::NVLink)] == Time::ns(3400));
  CHECK(simple.channel_cap == Bandwidth());
  const ProtocolTiming ll128 = nccl_timing(dgx1(), NcclAlgorithm::Ring, Protocol::LL128, Bytes::mib(1));
  CHECK(ll128.link_rate_scale[static_cast<int>(LinkKind::NVLink)] == doctest::Approx(0.8 * 0.92));
  CHECK(ll128.channel_cap == Bandwidth::bytes_per_second(16'700'000'000));
  // Across machines: LL's intra-node hop × 1.8 (0.846 µs), its network hop 2.7 µs; the ring/Simple
  // plateau × 1.9 on base and hops at 1 GiB.
  const ProtocolTiming ll = nccl_timing(four_dgx1(), NcclAlgorithm::Ring, Protocol::LL, Bytes::kib(1));
  CHECK(ll.hop_latency[static_cast<int>(HopKind::NVLink)] == Time::ns(846));
  CHECK(ll.hop_latency[static_cast<int>(HopKind::Network)] == Time::ns(2700));
  CHECK(ll.link_rate_scale[static_cast<int>(LinkKind::InfiniBand)] == doctest::Approx(0.96 / 4));
  const ProtocolTiming plateau =
      nccl_timing(four_dgx1(), NcclAlgorithm::Ring, Protocol::Simple, Bytes::gib(1));
  CHECK(plateau.base_latency == Time::ps(15'960'000));  // 8.4 × 1.9 µs
  CHECK(plateau.hop_latency[static_cast<int>(HopKind::Network)] == Time::ps(18'240'000));
  // Tree: × 0.9 on every link, Simple's 28 µs NVLink hop.
  const ProtocolTiming tree = nccl_timing(dgx1(), NcclAlgorithm::Tree, Protocol::Simple, Bytes::mib(1));
  CHECK(tree.link_rate_scale[static_cast<int>(LinkKind::NVLink)] == doctest::Approx(0.72));
  CHECK(tree.hop_latency[static_cast<int>(HopKind::NVLink)] == Time::us(28));
  CHECK(nccl_timing(dgx1(), NcclAlgorithm::Ring, Protocol::Ideal, Bytes::kib(1)).is_ideal());
}

// The rings found by the topology, run by sim::RingCollective: a DGX-1 all-reduce over NVLink
// rings vs. the same all-reduce forced onto PCIe.
#include <doctest/doctest.h>

#include "sim/ring_collective.h"
#include "topology/cluster.h"
#include "topology/presets.h"
#include "topology/ring_channels.h"

using namespace hybridsim;

namespace {

double all_reduce_seconds(const topology::Topology& t, const topology::RingOptions& options,
                          sim::Bytes size) {
  const auto plan = topology::find_rings(t, t.gpus(), options);
  sim::EventQueue queue;
  sim::Network network(queue, t.links());
  sim::RingCollective ar(network, sim::CollectiveOp::AllReduce,
                         static_cast<std::uint32_t>(t.gpus().size()),
                         topology::to_ring_channels(plan, t.gpus()), size,
                         {.message_size = sim::Bytes::kib(512), .reduction_bandwidth = {}});
  ar.start_all();
  queue.run();
  return ar.finish_time().to_seconds();
}

}  // namespace

TEST_CASE("ring all-reduce on a DGX-1: NVLink rings are much faster than rings forced onto PCIe") {
  const auto t = topology::presets::dgx1_v100();
  const sim::Bytes size = sim::Bytes::mib(192);
  const double nvlink = all_reduce_seconds(t, {}, size);
  const double pcie = all_reduce_seconds(t, {.pcie_only = true}, size);
  // Ring all-reduce moves 2·(n−1)/n·S through each channel's slowest link (hardware.md):
  // NVLink: 6 channels of S/6 at 25 GB/s each → 2·7/8·S / 150 GB/s ≈ 2.35 ms for 192 MiB.
  // PCIe:   1 channel at 12 GB/s → 2·7/8·S / 12 GB/s ≈ 29.4 ms (GPU3→GPU4 also crosses QPI).
  const double s = static_cast<double>(size.count());
  MESSAGE("DGX-1 all-reduce of 192 MiB: NVLink rings ", nvlink * 1e3, " ms, PCIe ring ", pcie * 1e3,
          " ms");
  // These bandwidth terms are lower bounds; the simulation adds only link latencies and pipeline
  // fill, 0.7 µs (0.03%) and 2.5 µs (0.01%) here. Relative checks (scale 0): with doctest's default
  // scale of 1 an epsilon is an absolute tolerance in seconds.
  const double nvlink_bound = 2.0 * 7 / 8 * s / 150e9;
  const double pcie_bound = 2.0 * 7 / 8 * s / 12e9;
  CHECK(nvlink > nvlink_bound);
  CHECK(pcie > pcie_bound);
  CHECK(nvlink == doctest::Approx(nvlink_bound).scale(0).epsilon(1e-3));
  CHECK(pcie == doctest::Approx(pcie_bound).scale(0).epsilon(1e-3));
  CHECK(pcie / nvlink > 10);
  const auto plan = topology::find_rings(t, t.gpus());
  const auto channels = topology::to_ring_channels(plan, t.gpus());
  REQUIRE(channels.size() == 6);
  CHECK(channels[0].order.front() == 0);
  CHECK(channels[0].routes.size() == 8);
}

TEST_CASE("ring all-reduce across 2 and 4 DGX-1s: every NIC carries one channel's share") {
  // One channel per NIC (4), each carrying S/4; the ideal protocol (links at line rate). Each
  // channel leaves every machine once, GPU → PCIe switch → its own NIC → fabric, where it moves
  // 2·(n−1)/n × S/4. The slowest links on that way are the PCIe x16 links into and out of the
  // NIC (12 GB/s, below EDR's 12.5 GB/s), so the time is bounded by 2·(n−1)/n × S / (4 × 12 GB/s),
  // a bus bandwidth of 48 GB/s. With the old 6 channels over 4 NICs (2-2-1-1) the busiest NIC's
  // PCIe link carried 2 × S/6 and capped it at 36 GB/s.
  for (const int nodes : {2, 4}) {
    const auto t = topology::presets::cluster({.node = topology::presets::Dgx1V100Params{}, .nodes = nodes});
    const sim::Bytes size = sim::Bytes::mib(256);
    const double seconds = all_reduce_seconds(t, {}, size);
    const double n = 8.0 * nodes;
    const double bound = 2 * (n - 1) / n * static_cast<double>(size.count()) / (4 * 12e9);
    MESSAGE(nodes, " DGX-1s, 256 MiB: ", seconds * 1e3, " ms, bus bandwidth ",
            static_cast<double>(size.count()) / seconds * 2 * (n - 1) / n * 1e-9, " GB/s");
    CHECK(seconds > bound);
    // Latencies and pipeline fill add 2.3% (4 machines: 62 steps of 2-3 µs over 41.6 ms) at most.
    CHECK(seconds == doctest::Approx(bound).scale(0).epsilon(0.025));
  }
}

// The NVSwitch machines of the A100 and H100 generations (dgx-a100, dgx-h100, hgx-h200): their
// per-GPU links against the data-sheet figures, the GPU each records, and ring all-reduces on one
// machine and on clusters of them, against bounds derived by hand from those figures.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "sim/ring_collective.h"
#include "topology/cluster.h"
#include "topology/preset_registry.h"
#include "topology/presets.h"
#include "topology/ring_channels.h"

using namespace hybridsim;

namespace {

// Sum of the bandwidths of the GPU's outgoing links of a kind, in B/s.
std::int64_t out_bandwidth(const topology::Topology& t, topology::DeviceId gpu, sim::LinkKind kind) {
  std::int64_t sum = 0;
  for (const sim::LinkId l : t.out_links(gpu))
    if (t.links()[l].kind == kind) sum += t.links()[l].bandwidth.bytes_per_second();
  return sum;
}

double all_reduce_seconds(const topology::Topology& t, sim::Bytes size) {
  const auto plan = topology::find_rings(t, t.gpus(), {});
  sim::EventQueue queue;
  sim::Network network(queue, t.links());
  sim::RingCollective ar(network, sim::CollectiveOp::AllReduce, static_cast<std::uint32_t>(t.gpus().size()),
                         topology::to_ring_channels(plan, t.gpus()), size,
                         {.message_size = sim::Bytes::kib(512), .reduction_bandwidth = {}});
  ar.start_all();
  queue.run();
  return ar.finish_time().to_seconds();
}

// nccl-tests' bus bandwidth of an all-reduce of `size` over n ranks in `seconds`: S/t × 2(n−1)/n.
double bus_gb_per_s(sim::Bytes size, int n, double seconds) {
  return static_cast<double>(size.count()) / seconds * 2.0 * (n - 1) / n * 1e-9;
}

}  // namespace

TEST_CASE("newer presets: per-GPU NVLink, PCIe and NIC figures of the data sheets") {
  // hardware.md, "Newer GPUs and machines": A100 12 × NVLink3 = 300 GB/s per direction, H100 and
  // H200 18 × NVLink4 = 450 GB/s (25 GB/s a link); one NIC per GPU, HDR 200 Gb/s = 25 GB/s
  // (A100), NDR 400 Gb/s = 50 GB/s (H100, H200). PCIe: the Gen3 presets' achievable 12 GB/s × 2 a
  // generation: Gen4 24 GB/s, Gen5 48 GB/s.
  struct Expected {
    const char* preset;
    const char* gpu;
    std::int64_t nvswitch_gb;
    std::int64_t pcie_gb;
    std::int64_t ib_gb;
  };
  for (const Expected e : {Expected{"dgx-a100", "A100-SXM4-80GB", 300, 24, 25},
                           Expected{"dgx-h100", "H100-SXM5-80GB", 450, 48, 50},
                           Expected{"hgx-h200", "H200-SXM-141GB", 450, 48, 50}}) {
    CAPTURE(e.preset);
    const topology::PresetInfo& p = topology::preset_by_name(e.preset);
    CHECK(p.gpu == e.gpu);
    CHECK(p.gpus.fixed());
    CHECK(p.gpus.min == 8);
    CHECK(p.ib_bandwidth.bytes_per_second() == e.ib_gb * 1'000'000'000);
    const auto t = topology::build_cluster({.preset = e.preset});
    CHECK(t.gpus().size() == 8);
    CHECK(t.devices_of_kind(topology::DeviceKind::Nic).size() == 8);
    for (const topology::DeviceId g : t.gpus()) {
      CHECK(out_bandwidth(t, g, sim::LinkKind::NVSwitch) == e.nvswitch_gb * 1'000'000'000);
      CHECK(out_bandwidth(t, g, sim::LinkKind::PCIe) == e.pcie_gb * 1'000'000'000);
      CHECK(out_bandwidth(t, g, sim::LinkKind::NVLink) == 0);
    }
    // GPU k's nearest NIC is NIC k: each GPU and its NIC on a PCIe switch.
    const auto nic = t.nic_for_gpu(t.gpu(5));
    REQUIRE(nic.has_value());
    CHECK(t.device(*nic).name == "NIC5");
    // Two machines on the fabric: every NIC's cable at the preset's InfiniBand rate.
    const auto c = topology::build_cluster({.preset = e.preset, .nodes = 2});
    CHECK(c.gpus().size() == 16);
    for (const sim::LinkId l : c.out_links(c.device_by_name("n1.NIC3")))
      if (c.links()[l].kind == sim::LinkKind::InfiniBand)
        CHECK(c.links()[l].bandwidth.bytes_per_second() == e.ib_gb * 1'000'000'000);
  }
  // H200 is the H100 chip with more memory: the same machine parameters.
  CHECK(topology::presets::dgx_h100_params().nvlinks_per_gpu == 18);
  CHECK(topology::presets::dgx_a100_params().nvlinks_per_gpu == 12);
}

TEST_CASE("newer presets: an all-reduce on one DGX H100 and one DGX A100 runs at the NVLink figure") {
  // Each ring channel's slowest link is a GPU↔NVSwitch link; the channels together use all of a
  // GPU's links, so the ring moves 2·(n−1)/n·S at the GPU's NVLink bandwidth (hardware.md's ring
  // cost model): 2·7/8·256 MiB / 450 GB/s = 1.044 ms on H100, / 300 GB/s = 1.566 ms on A100; a bus
  // bandwidth of 450 and 300 GB/s. Link latencies (2 × 350 ns per step, 14 steps) and the
  // pipeline's fill add about 1% here.
  const sim::Bytes size = sim::Bytes::mib(256);
  const double s = static_cast<double>(size.count());
  for (const auto& machine : {std::pair<const char*, double>{"dgx-h100", 450}, {"dgx-a100", 300}}) {
    const std::string name = machine.first;
    const double gb = machine.second;
    CAPTURE(name);
    const auto t = topology::build_cluster({.preset = name});
    const double seconds = all_reduce_seconds(t, size);
    const double bound = 2.0 * 7 / 8 * s / (gb * 1e9);
    MESSAGE(name, " all-reduce of 256 MiB: ", seconds * 1e3, " ms, bus bandwidth ",
            bus_gb_per_s(size, 8, seconds), " GB/s");
    CHECK(seconds > bound);
    CHECK(seconds == doctest::Approx(bound).scale(0).epsilon(0.02));
  }
}

TEST_CASE("newer presets: across two DGX H100 every NIC carries a channel, capped by its PCIe Gen5 link") {
  // 16 GPUs on 2 machines, one ring channel per NIC (8). Each channel leaves every machine once,
  // GPU → PCIe switch → its NIC → fabric, and moves 2·(n−1)/n × S/8 there; the slowest link on that
  // way is the NIC's PCIe Gen5 link (48 GB/s, below NDR's 50 GB/s), so the time is bounded by
  // 2·15/16 × S / (8 × 48 GB/s): a bus bandwidth of 384 GB/s. The same holds on rails.
  for (const auto fabric : {topology::presets::Fabric::FatTree, topology::presets::Fabric::RailOptimized}) {
    CAPTURE(topology::presets::fabric_name(fabric));
    const auto t = topology::build_cluster({.preset = "dgx-h100", .nodes = 2, .fabric = fabric});
    const sim::Bytes size = sim::Bytes::mib(256);
    const double seconds = all_reduce_seconds(t, size);
    const double bound = 2.0 * 15 / 16 * static_cast<double>(size.count()) / (8 * 48e9);
    MESSAGE("2 DGX H100 (", topology::presets::fabric_name(fabric), "), 256 MiB: ", seconds * 1e3,
            " ms, bus bandwidth ", bus_gb_per_s(size, 16, seconds), " GB/s");
    CHECK(seconds > bound);
    CHECK(seconds == doctest::Approx(bound).scale(0).epsilon(0.03));
  }
}

TEST_CASE("newer presets: a GPU's InfiniBand share is its machine's NICs, each capped by its PCIe link") {
  // DGX H100: 8 NDR NICs (50 GB/s) on PCIe Gen5 (48 GB/s) for 8 GPUs; DGX A100: 8 HDR (25 GB/s) on
  // Gen4 (24 GB/s); DGX-1: 4 EDR (12.5 GB/s) on Gen3 (12 GB/s) for 8 GPUs.
  const auto share = [](topology::ClusterSpec spec) {
    return topology::ib_share_per_gpu(spec).bytes_per_second();
  };
  CHECK(share({.preset = "dgx-h100", .nodes = 2}) == 48'000'000'000);
  CHECK(share({.preset = "dgx-a100", .nodes = 2}) == 24'000'000'000);
  CHECK(share({.preset = "dgx1-v100", .nodes = 2}) == 6'000'000'000);
  // A slower port than its PCIe link is the port's.
  topology::ClusterSpec slow{.preset = "dgx-h100", .nodes = 2};
  slow.links[sim::LinkKind::InfiniBand].bandwidth = sim::parse_bandwidth("100 Gb/s");
  CHECK(share(slow) == 12'500'000'000);
}

// Preset machines: parameter structs (defaults from public figures, see topology/README.md and
// ../shared/reference/hardware.md) and builders for a DGX-1 (V100), an NVSwitch node (DGX-2-like),
// a PCIe-only server, and two idealized validation topologies. Bandwidths in B/s per direction.
//   Topology t = presets::dgx1_v100({.pcie_bandwidth = sim::parse_bandwidth("15.75 GB/s")});
//   Topology r = presets::ideal_ring({.gpus = 4, .bandwidth = sim::Bandwidth::gb_per_second(10)});
#pragma once
#include <string_view>
#include <variant>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"
#include "topology/builder.h"
#include "topology/topology.h"

namespace hybridsim::topology::presets {

// NVIDIA DGX-1 with 8 V100-SXM2: NVLink 2.0 hybrid cube-mesh, 4 PLX PCIe Gen3 switches (2 GPUs + 1
// NIC each), 2 Xeon E5-2698 v4 sockets joined by QPI, 4 EDR InfiniBand NICs.
struct Dgx1V100Params {
  sim::Bandwidth nvlink_bandwidth = sim::Bandwidth::gb_per_second(25);  // per NVLink per direction
  sim::Time nvlink_latency = sim::Time::ns(700);
  sim::Bandwidth pcie_bandwidth = sim::Bandwidth::gb_per_second(12);  // x16 Gen3, achievable
  sim::Time pcie_latency = sim::Time::ns(500);
  sim::Bandwidth qpi_bandwidth = sim::Bandwidth::bytes_per_second(19'200'000'000);  // per QPI link
  int qpi_links = 2;
  sim::Time qpi_latency = sim::Time::ns(500);
  int nics = 4;  // 0..4; NIC k sits on PCIe switch k
};

// A node whose GPUs all reach each other through NVSwitch at full per-GPU bandwidth (DGX-2-like:
// 16 V100 with 6 NVLinks each into the switch fabric, PCIe switches with 2 GPUs + 1 NIC, 2 CPUs).
struct NvswitchNodeParams {
  int gpus = 16;
  sim::Bandwidth nvlink_bandwidth = sim::Bandwidth::gb_per_second(25);  // per NVLink, per direction
  int nvlinks_per_gpu = 6;  // a GPU's NVLinks into the switch fabric: 6 × 25 = 150 GB/s per GPU
  sim::Time nvswitch_latency = sim::Time::ns(350);  // per GPU↔switch hop
  int gpus_per_pcie_switch = 2;
  sim::Bandwidth pcie_bandwidth = sim::Bandwidth::gb_per_second(12);
  sim::Time pcie_latency = sim::Time::ns(500);
  int cpus = 2;
  sim::Bandwidth cpu_link_bandwidth = sim::Bandwidth::bytes_per_second(20'800'000'000);  // UPI
  int cpu_links = 3;
  sim::Time cpu_link_latency = sim::Time::ns(500);
  int nics = 8;
};

// The NVSwitch machines of the A100 and H100 generations as NvswitchNodeParams (hardware.md, "Newer
// GPUs and machines"; topology/README.md): 8 GPUs, NVLink at 25 GB/s per link per direction into the
// switch fabric, one NIC per GPU (each GPU and its NIC on a PCIe switch), PCIe at the Gen3 preset's
// achievable 12 GB/s × 2 per generation (Gen4 24 GB/s, Gen5 48 GB/s).
// DGX A100: 12 NVLink3 links per GPU (300 GB/s per direction), PCIe Gen4.
NvswitchNodeParams dgx_a100_params();
// DGX H100 (and HGX H200, the same fabric): 18 NVLink4 links per GPU (450 GB/s), PCIe Gen5.
NvswitchNodeParams dgx_h100_params();

// A server without NVLink: GPUs behind PCIe switches under the CPUs, NICs on the switches.
struct PcieServerParams {
  int gpus = 8;
  int gpus_per_pcie_switch = 2;
  sim::Bandwidth pcie_bandwidth = sim::Bandwidth::gb_per_second(12);
  sim::Time pcie_latency = sim::Time::ns(500);
  int cpus = 2;
  sim::Bandwidth cpu_link_bandwidth = sim::Bandwidth::bytes_per_second(19'200'000'000);  // QPI
  int cpu_links = 2;
  sim::Time cpu_link_latency = sim::Time::ns(500);
  int nics = 2;
};

// Validation topologies: GPU i ↔ GPU i+1 mod N (ring), or every pair (fully connected), with
// Generic links of the given bandwidth per direction.
struct IdealRingParams {
  int gpus = 8;
  sim::Bandwidth bandwidth = sim::Bandwidth::gb_per_second(25);
  sim::Time latency = sim::Time::us(1);
};
struct FullyConnectedParams {
  int gpus = 8;
  sim::Bandwidth bandwidth = sim::Bandwidth::gb_per_second(25);
  sim::Time latency = sim::Time::us(1);
};

Topology dgx1_v100(const Dgx1V100Params& params = {});
Topology nvswitch_node(const NvswitchNodeParams& params = {});
Topology pcie_server(const PcieServerParams& params = {});
Topology ideal_ring(const IdealRingParams& params = {});
Topology fully_connected(const FullyConnectedParams& params = {});

// The machines a cluster can be made of.
using NodeParams = std::variant<Dgx1V100Params, NvswitchNodeParams, PcieServerParams>;

// Building blocks: add one machine to a builder as node `node`, its device names prefixed (e.g.
// "n3."). Throw InputError naming the invalid field.
struct NodePorts {
  std::vector<DeviceId> gpus;  // in local order
  std::vector<DeviceId> nics;
};
NodePorts add_dgx1_v100(TopologyBuilder& b, const Dgx1V100Params& p, int node,
                        std::string_view prefix);
NodePorts add_nvswitch_node(TopologyBuilder& b, const NvswitchNodeParams& p, int node,
                            std::string_view prefix);
NodePorts add_pcie_server(TopologyBuilder& b, const PcieServerParams& p, int node,
                          std::string_view prefix);
NodePorts add_node(TopologyBuilder& b, const NodeParams& p, int node, std::string_view prefix);

}  // namespace hybridsim::topology::presets

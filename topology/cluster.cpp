#include "topology/cluster.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "sim/error.h"

namespace hybridsim::topology::presets {

std::string_view fabric_name(Fabric fabric) {
  return fabric == Fabric::FatTree ? "fat-tree" : "rail-optimized";
}

Fabric parse_fabric(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "fat-tree" || lower == "fat_tree" || lower == "fattree") return Fabric::FatTree;
  if (lower == "rail-optimized" || lower == "rail_optimized" || lower == "rail")
    return Fabric::RailOptimized;
  throw InputError("unknown fabric \"" + std::string(text) +
                   "\": expected fat-tree or rail-optimized");
}

namespace {

std::string_view machine_name(const ClusterParams& p) {
  if (!p.machine_name.empty()) return p.machine_name;
  constexpr std::string_view kByType[] = {"dgx1-v100", "nvswitch", "pcie-server"};
  return kByType[p.node.index()];
}

void validate(const ClusterParams& p) {
  if (p.nodes < 1 || p.nodes > 100'000)
    throw InputError("cluster: nodes must be in [1, 100000], got " + std::to_string(p.nodes));
  if (!std::isfinite(p.oversubscription) || p.oversubscription < 1.0)
    throw InputError("cluster: oversubscription must be a ratio >= 1 (1 is non-blocking), got " +
                     std::to_string(p.oversubscription));
  if (p.ib_bandwidth.bytes_per_second() <= 0)
    throw InputError("cluster: ib_bandwidth must be a positive bandwidth, got " +
                     sim::format_bandwidth(p.ib_bandwidth));
  if (p.ib_latency < sim::Time::zero()) throw InputError("cluster: ib_latency must be >= 0");
  if (p.leaf_radix < 1 || p.leaf_radix > 4096)
    throw InputError("cluster: leaf_radix must be in [1, 4096], got " +
                     std::to_string(p.leaf_radix));
  if (p.spines && (*p.spines < 1 || *p.spines > 4096))
    throw InputError("cluster: spines must be in [1, 4096], got " + std::to_string(*p.spines));
}

// Which leaf each (machine, NIC) plugs into; `leaves` is set to how many leaves there are.
std::vector<std::vector<int>> leaf_assignment(const ClusterParams& p, int nics, int& leaves) {
  std::vector<std::vector<int>> leaf_of(static_cast<std::size_t>(p.nodes),
                                        std::vector<int>(static_cast<std::size_t>(nics)));
  leaves = leaf_count(p.fabric, p.nodes, nics, p.leaf_radix);
  if (p.fabric == Fabric::FatTree) {
    for (int n = 0; n < p.nodes; ++n)
      for (int k = 0; k < nics; ++k)
        leaf_of[n][k] = static_cast<int>((static_cast<long>(n) * nics + k) / p.leaf_radix);
  } else {
    const int per_rail = (p.nodes + p.leaf_radix - 1) / p.leaf_radix;
    for (int n = 0; n < p.nodes; ++n)
      for (int k = 0; k < nics; ++k) leaf_of[n][k] = k * per_rail + n / p.leaf_radix;
  }
  return leaf_of;
}

}  // namespace

int leaf_count(Fabric fabric, int nodes, int nics, int leaf_radix) {
  if (fabric == Fabric::FatTree)
    return static_cast<int>((static_cast<long>(nodes) * nics + leaf_radix - 1) / leaf_radix);
  return nics * ((nodes + leaf_radix - 1) / leaf_radix);
}

Topology cluster(const ClusterParams& p, sim::WorkProgress* progress) {
  validate(p);
  TopologyBuilder b(std::to_string(p.nodes) + " × " + std::string(machine_name(p)) + " (" +
                    std::string(fabric_name(p.fabric)) + ")");
  std::vector<NodePorts> machines;
  const auto nodes = static_cast<std::uint64_t>(p.nodes);
  for (int n = 0; n < p.nodes; ++n) {
    sim::work_tick(progress, "its machines", static_cast<std::uint64_t>(n), nodes, "machines");
    std::string prefix = "n";  // (appending avoids a GCC 12 -Wrestrict false positive)
    prefix += std::to_string(n);
    prefix += '.';
    machines.push_back(add_node(b, p.node, n, prefix));
  }
  const int nics = static_cast<int>(machines.front().nics.size());
  if (nics == 0) throw InputError("cluster: the node preset has no NICs (set its nics >= 1)");

  int leaves = 0;
  const std::vector<std::vector<int>> leaf_of = leaf_assignment(p, nics, leaves);
  std::vector<DeviceId> leaf_ids;
  for (int l = 0; l < leaves; ++l)
    leaf_ids.push_back(b.add_device({.name = "leaf" + std::to_string(l),
                                     .kind = DeviceKind::NetworkSwitch,
                                     .node = {},
                                     .local_gpu = {}}));
  const LinkParams nic_link{.kind = sim::LinkKind::InfiniBand,
                            .bandwidth = p.ib_bandwidth,
                            .count = 1,
                            .latency = p.ib_latency,
                            .duplex = true,
                            .label = {}};
  for (int n = 0; n < p.nodes; ++n) {
    sim::work_tick(progress, "its machines' NIC links", static_cast<std::uint64_t>(n), nodes, "machines");
    for (int k = 0; k < nics; ++k) b.connect(machines[n].nics[k], leaf_ids[leaf_of[n][k]], nic_link);
  }

  if (leaves > 1) {
    const int spines = p.spines.value_or(
        std::max(1, static_cast<int>(std::lround(p.leaf_radix / p.oversubscription))));
    // Per leaf-spine link: leaf_radix × ib / (oversubscription × spines). When that is a whole
    // number c of IB cables, say so (count = c, per-cable bandwidth ib); else one aggregate link.
    const long double cables = static_cast<long double>(p.leaf_radix) /
                               (static_cast<long double>(p.oversubscription) * spines);
    const long double whole = std::round(cables);
    LinkParams up{.kind = sim::LinkKind::InfiniBand,
                  .bandwidth = p.ib_bandwidth,
                  .count = 1,
                  .latency = p.ib_latency,
                  .duplex = true,
                  .label = {}};
    if (whole >= 1 && std::fabs(cables - whole) < 1e-9) {
      up.count = static_cast<int>(whole);
    } else {
      up.bandwidth = sim::Bandwidth::bytes_per_second(
          std::llround(static_cast<long double>(p.ib_bandwidth.bytes_per_second()) * cables));
      if (up.bandwidth.bytes_per_second() <= 0)
        throw InputError(
            "cluster: leaf uplinks would have zero bandwidth (oversubscription too high)");
    }
    std::vector<DeviceId> spine_ids;
    for (int s = 0; s < spines; ++s)
      spine_ids.push_back(b.add_device({.name = "spine" + std::to_string(s),
                                        .kind = DeviceKind::NetworkSwitch,
                                        .node = {},
                                        .local_gpu = {}}));
    for (const DeviceId leaf : leaf_ids)
      for (const DeviceId spine : spine_ids) b.connect(leaf, spine, up);
  }
  b.set_progress(progress);
  return std::move(b).build();
}

}  // namespace hybridsim::topology::presets

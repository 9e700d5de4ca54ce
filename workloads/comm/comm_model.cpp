#include "workloads/comm/comm_model.h"

#include <algorithm>
#include <map>
#include <set>

namespace hybridsim::workloads {

sim::NcclMachine describe_for_nccl(const topology::Topology& t,
                                   std::span<const topology::DeviceId> devices,
                                   const std::vector<sim::RingChannel>& channels,
                                   sim::CollectiveOp op, bool pcie_only) {
  sim::NcclMachine m;
  m.op = op;
  m.ranks = static_cast<int>(devices.size());
  std::set<int> nodes;
  for (const auto d : devices) nodes.insert(t.device(d).node.value_or(0));
  m.nodes = static_cast<int>(nodes.size());
  m.channels = static_cast<int>(channels.size());

  // Channels crossing each link, and what the steps inside one machine cross.
  const sim::LinkTable& links = t.links();
  std::map<sim::LinkId, int> load;
  bool any_intra = false, intra_pcie = false;
  for (const auto& ch : channels)
    for (std::size_t p = 0; p < ch.routes.size(); ++p) {
      for (const sim::LinkId l : ch.routes[p]) ++load[l];
      const auto from = devices[ch.order[p]], to = devices[ch.order[(p + 1) % ch.order.size()]];
      if (ch.routes[p].empty() || t.device(from).node != t.device(to).node) continue;
      any_intra = true;
      intra_pcie = intra_pcie || sim::hop_kind(ch.routes[p], links) != sim::HopKind::NVLink;
    }
  const auto eff = sim::nccl_payload_efficiency();
  double speed = 0;
  for (const auto& [link, count] : load) {
    const double share = links[link].bandwidth.gb_per_second() *
                         eff[static_cast<std::size_t>(links[link].kind)] / count;
    speed = speed == 0 ? share : std::min(speed, share);
  }
  m.channel_gb_per_s = speed;
  bool nvlink = !intra_pcie && any_intra;
  if (!any_intra && !pcie_only && !devices.empty())
    for (const sim::LinkId l : t.out_links(devices.front()))
      nvlink = nvlink || links[l].kind == sim::LinkKind::NVLink ||
               links[l].kind == sim::LinkKind::NVSwitch;
  m.intra = nvlink ? sim::HopKind::NVLink : sim::HopKind::PCIe;
  m.ll128 = nvlink;
  return m;
}

}  // namespace hybridsim::workloads

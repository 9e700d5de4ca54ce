// Ring search: per machine, a base pattern (edge-disjoint Hamiltonian cycles of the direct GPU
// links found by search, or a nearest-neighbour order over routes), then one segment per channel
// per machine, joined machine by machine. See topology/README.md ("Ring search").
#include "topology/rings.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "sim/error.h"
#include "topology/cycle_search.h"
#include "topology/topology_impl.h"

namespace hybridsim::topology {
namespace {

using detail::Cycle;

struct Group {
  int node = -1;
  std::vector<DeviceId> gpus;
  std::vector<int> nic_of;  // local NIC index of each GPU's nearest NIC, -1 for none
  int nics = 0;
  std::vector<Cycle> cycles;    // direct mode: undirected Hamiltonian cycles (local indices)
  std::vector<int> star_order;  // star mode: a cyclic order (local indices)
  int base_channels = 1;
};

bool is_direct_kind(sim::LinkKind kind) {
  return kind == sim::LinkKind::NVLink || kind == sim::LinkKind::Generic;
}

std::vector<Group> group_by_node(const Topology& t, std::span<const DeviceId> gpus) {
  std::vector<Group> groups;
  std::unordered_set<DeviceId> seen;
  std::unordered_map<int, std::size_t> group_of;  // machine → its group, in order of appearance
  for (const DeviceId g : gpus) {
    const DeviceInfo& info = t.device(g);
    if (info.kind != DeviceKind::Gpu)
      throw InputError("find_rings: device \"" + info.name + "\" is a " +
                       std::string(device_kind_name(info.kind)) + ", not a GPU");
    if (!seen.insert(g).second)
      throw InputError("find_rings: GPU \"" + info.name + "\" is listed twice");
    const int node = info.node.value_or(-1);
    const auto [it, fresh] = group_of.emplace(node, groups.size());
    if (fresh) {
      groups.push_back({});
      groups.back().node = node;
    }
    groups[it->second].gpus.push_back(g);
  }
  return groups;
}

void find_nics(const Topology& t, Group& g) {
  std::vector<DeviceId> nics;
  std::vector<std::optional<DeviceId>> of;
  for (const DeviceId gpu : g.gpus) {
    of.push_back(t.nic_for_gpu(gpu));
    if (of.back() && std::find(nics.begin(), nics.end(), *of.back()) == nics.end())
      nics.push_back(*of.back());
  }
  std::sort(nics.begin(), nics.end());
  g.nics = static_cast<int>(nics.size());
  for (const auto& nic : of)
    g.nic_of.push_back(
        nic ? static_cast<int>(std::find(nics.begin(), nics.end(), *nic) - nics.begin()) : -1);
}

// Parallel direct links usable by a ring between each pair of the group's GPUs (both directions):
// for a direct link i→j with a link back j→i, the smaller of their counts. Sparse: a machine of
// 65,536 GPUs in a ring has 131,072 such pairs, not 65,536².
detail::Multigraph direct_caps(const Topology& t, const Group& g) {
  const int n = static_cast<int>(g.gpus.size());
  std::unordered_map<DeviceId, int> local;
  for (int i = 0; i < n; ++i) local.emplace(g.gpus[i], i);
  detail::Multigraph cap;
  cap.adj.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    for (const sim::LinkId there : t.out_links(g.gpus[i])) {
      const DeviceId to = t.link_ends(there).to;
      const auto j = local.find(to);
      if (j == local.end() || !is_direct_kind(t.links()[there].kind)) continue;
      for (const sim::LinkId back : t.out_links(to))
        if (t.link_ends(back).to == g.gpus[i])
          cap.set(i, j->second, std::min(t.link_ends(there).count, t.link_ends(back).count));
    }
  return cap;
}

Cycle directed(const Cycle& c, bool reverse) {
  if (!reverse) return c;
  Cycle r{c.front()};
  r.insert(r.end(), c.rbegin(), c.rend() - 1);
  return r;
}

// Direct mode across machines: channel c runs base cycle (c / 2) mod m, reversed when c is odd, cut
// at one step u→v so that it enters at v and leaves at u; the cut prefers a step whose two GPUs
// share a NIC, the least used NIC first. Returns the segments; `usage_out` gets the NIC use counts
// and `mixed_out` the cuts whose two GPUs do not share a NIC.
std::vector<std::vector<int>> cut_cycles(const std::vector<Cycle>& cycles,
                                         const std::vector<int>& nic_of, int nics, int channels,
                                         std::vector<int>* usage_out, int* mixed_out = nullptr) {
  std::vector<int> usage(static_cast<std::size_t>(std::max(nics, 1)), 0);
  std::vector<std::vector<int>> segments;
  int mixed = 0;
  const int m = static_cast<int>(cycles.size());
  for (int c = 0; c < channels; ++c) {
    const Cycle d = directed(cycles[static_cast<std::size_t>((c / 2) % m)], c % 2 == 1);
    const int n = static_cast<int>(d.size());
    std::tuple<int, int, int> best{3, 0, 0};
    for (int i = 0; i < n; ++i) {
      const int u = nic_of[d[i]], v = nic_of[d[(i + 1) % n]];
      std::tuple<int, int, int> key{2, 0, i};
      if (u >= 0 && u == v)
        key = {0, usage[u], i};
      else if (u >= 0)
        key = {1, usage[u], i};
      best = std::min(best, key);
    }
    const int cut = std::get<2>(best);
    if (std::get<0>(best) != 0) ++mixed;
    if (nic_of[d[cut]] >= 0) ++usage[nic_of[d[cut]]];
    std::vector<int> seg;
    for (int k = 1; k <= n; ++k) seg.push_back(d[(cut + k) % n]);
    segments.push_back(std::move(seg));
  }
  if (usage_out) *usage_out = usage;
  if (mixed_out) *mixed_out = mixed;
  return segments;
}

// Star mode across machines: channel c leaves through NIC c mod nics: rotate the cyclic order so
// that it ends at a GPU of that NIC, preferably one whose successor (the entry) shares it.
std::vector<int> rotate_for_nic(const std::vector<int>& order, const std::vector<int>& nic_of,
                                int k) {
  const int n = static_cast<int>(order.size());
  std::pair<int, int> best{3, 0};
  for (int i = 0; i < n; ++i) {
    const int u = nic_of[order[i]], v = nic_of[order[(i + 1) % n]];
    best = std::min(best, {u == k && v == k ? 0 : u == k ? 1 : 2, i});
  }
  std::vector<int> seg;
  for (int j = 1; j <= n; ++j) seg.push_back(order[(best.second + j) % n]);
  return seg;
}

void plan_star(const Topology& t, Group& g, RouteOptions ropts) {
  const int n = static_cast<int>(g.gpus.size());
  std::vector<std::vector<std::int64_t>> cost;  // [i][j]: from the group's GPU i to its GPU j
  for (const DeviceId gpu : g.gpus) cost.push_back(t.impl().costs_within_node(gpu, ropts, g.gpus));
  std::vector<char> used(static_cast<std::size_t>(n), 0);
  g.star_order = {0};
  used[0] = 1;
  while (static_cast<int>(g.star_order.size()) < n) {
    const int cur = g.star_order.back();
    int next = -1;
    for (int j = 0; j < n; ++j)
      if (!used[j] && (next < 0 || cost[cur][j] < cost[cur][next]))
        next = j;
    used[next] = 1;
    g.star_order.push_back(next);
  }
  g.base_channels = 0;
  for (int i = 0; n > 1 && i < n; ++i) {
    const sim::Route r = t.route(g.gpus[g.star_order[i]], g.gpus[g.star_order[(i + 1) % n]], ropts);
    const int count = t.link_ends(r.front()).count;
    g.base_channels = g.base_channels == 0 ? count : std::min(g.base_channels, count);
  }
  g.base_channels = std::max(g.base_channels, 1);
}

// Each machine's cycles (or its star, without direct links): machines with the same direct-link
// pattern and NIC layout share one search.
void plan_groups(const Topology& t, std::vector<Group>& groups, const RingOptions& options,
                 const RouteOptions& ropts, int multi_channels) {
  const bool multi = groups.size() > 1;
  const int max_cycles = std::max(1, options.max_channels / 2);
  std::map<std::pair<detail::Multigraph, std::vector<int>>, std::vector<Cycle>> memo;
  // Told machine by machine: a star's routes inside 8,192 DGX H100 take seconds (each looks at the
  // fabric's costs from its NICs, in case the way out and back is cheaper).
  const std::size_t machines = groups.size();
  sim::ticked_loop(options.progress, "its machines' rings", machines, "machines", [&](std::size_t m) {
    Group& g = groups[m];
    const int n = static_cast<int>(g.gpus.size());
    if (!options.pcie_only && n >= 3) {
      std::pair<detail::Multigraph, std::vector<int>> key{direct_caps(t, g), g.nic_of};
      auto it = memo.find(key);
      if (it == memo.end()) {
        detail::CycleSetScore score;
        const int perfect = 0;  // every cut at two GPUs of one NIC, NICs used evenly
        if (multi && g.nics > 1) {
          // Prefer cycle sets whose cuts spread the channels evenly over the NICs (the most and
          // least used NIC differ by at most 1, exactly 0 if the channels divide evenly) and whose
          // every channel enters and leaves through the NIC of its cut.
          score = [&g, multi_channels](const std::vector<Cycle>& cycles) {
            std::vector<int> usage;
            int mixed = 0;
            cut_cycles(cycles, g.nic_of, g.nics, multi_channels, &usage, &mixed);
            const int spread = *std::max_element(usage.begin(), usage.end()) -
                               *std::min_element(usage.begin(), usage.end());
            return -(std::max(0, spread - (multi_channels % g.nics != 0 ? 1 : 0)) + 2 * mixed);
          };
        }
        std::vector<Cycle> cycles =
            detail::find_cycle_decomposition(key.first, max_cycles, options.search_budget, score, perfect);
        it = memo.emplace(std::move(key), std::move(cycles)).first;
      }
      g.cycles = it->second;
      g.base_channels = 2 * static_cast<int>(g.cycles.size());
    }
    if (g.cycles.empty()) plan_star(t, g, ropts);
  });
}

// One machine's part of each channel's ring, as local GPU indices.
std::vector<std::vector<int>> channel_segments(const Group& g, bool multi, int channels) {
  if (!g.cycles.empty() && multi) return cut_cycles(g.cycles, g.nic_of, g.nics, channels, nullptr);
  std::vector<std::vector<int>> segments;
  for (int c = 0; c < channels; ++c) {
    if (!g.cycles.empty())
      segments.push_back(directed(g.cycles[static_cast<std::size_t>((c / 2) % g.cycles.size())], c % 2 == 1));
    else if (multi && g.nics > 0)
      segments.push_back(rotate_for_nic(g.star_order, g.nic_of, c % g.nics));
    else
      segments.push_back(g.star_order);
  }
  return segments;
}

}  // namespace

RingPlan find_rings(const Topology& t, std::span<const DeviceId> gpus, const RingOptions& options) {
  if (gpus.empty()) throw InputError("find_rings: no GPUs given");
  if (options.channels && *options.channels < 1)
    throw InputError("find_rings: channels must be >= 1, got " + std::to_string(*options.channels));
  const RouteOptions ropts{.avoid_nvlink = options.pcie_only, .gpu_relay = false};
  std::vector<Group> groups = group_by_node(t, gpus);
  const bool multi = groups.size() > 1;
  // Across machines NCCL gives every NIC the same share: one channel per NIC of a machine (each
  // channel enters and leaves the machine through one NIC), unless asked for another count.
  int nics = 0;
  for (std::size_t m = 0; m < groups.size(); ++m) {
    if (multi) sim::work_tick(options.progress, "its machines' NICs", m, groups.size(), "machines");
    if (multi) find_nics(t, groups[m]);
    nics = std::max(nics, groups[m].nics);
  }
  if (multi) sim::work_tick(options.progress, "its machines' NICs", groups.size(), groups.size(), "machines");
  const int multi_channels = options.channels.value_or(std::max(nics, 1));
  plan_groups(t, groups, options, ropts, multi_channels);

  int saturating = groups.front().base_channels;
  for (const Group& g : groups) saturating = std::min(saturating, g.base_channels);
  if (multi && nics > 0) saturating = nics;
  saturating = std::clamp(saturating, 1, std::max(1, options.max_channels));
  const int channels = options.channels.value_or(saturating);

  RingPlan plan;
  plan.saturating_channels = saturating;
  plan.route_options = ropts;
  plan.rings.assign(static_cast<std::size_t>(channels), {});
  for (const Group& g : groups) {
    const std::vector<std::vector<int>> segments = channel_segments(g, multi, channels);
    for (int c = 0; c < channels; ++c)
      for (const int local : segments[static_cast<std::size_t>(c)])
        plan.rings[static_cast<std::size_t>(c)].push_back(g.gpus[static_cast<std::size_t>(local)]);
  }
  // Position by position, every channel at each: the channels' steps at one position leave the
  // same machine, so the fabric's costs from its leaves are looked up while they are kept (a
  // channel at a time walked every leaf once per channel, past what FabricCosts keeps at 8,192
  // DGX H100). Routes depend only on their ends, not on the order they are asked for.
  const std::size_t n = gpus.size();
  plan.routes.assign(plan.rings.size(), std::vector<sim::Route>(n));
  sim::ticked_loop(options.progress, "its rings' routes", n, "ring positions", [&](std::size_t i) {
    for (std::size_t c = 0; c < plan.rings.size(); ++c)
      plan.routes[c][i] = t.route(plan.rings[c][i], plan.rings[c][(i + 1) % n], ropts);
  });
  return plan;
}

}  // namespace hybridsim::topology

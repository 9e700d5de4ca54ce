// Test helper: rings over machines whose edges leave each machine by its uplink, for the ring
// embedding tests (sim_ring_embed_test.cpp, sim_ring_embed_pass_test.cpp) and the fast path's
// contract test (sim_fast_path_contract_test.cpp), and the handler that starts a collective's ranks.
//   CoupledRings f = make_coupled_rings(8);  // rings A and B sharing each machine's uplink
// One builder, so that the three tests' fabrics cannot drift apart (the same links, the same order).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/collective.h"
#include "sim/event_queue.h"
#include "sim/link.h"

namespace hybridsim::testing {

inline sim::Bandwidth mb_per_second(std::int64_t mbps) {
  return sim::Bandwidth::bytes_per_second(mbps * 1'000'000);
}

// Machine m's uplink: 12.5 GB/s, 10 GB/s at odd m (so the pattern repeats every two machines); 500 ns.
inline sim::LinkId add_uplink(sim::LinkTable& links, std::uint32_t m) {
  return links.add({sim::LinkKind::InfiniBand, m % 2 == 0 ? mb_per_second(12'500) : mb_per_second(10'000),
                    sim::Time::ns(500), "uplink"});
}

// A ring channel over `machines` positions in order: position p's edge crosses a PCIe link of its
// own (25 GB/s), uplink(p) (which may add it), `via` (if not null), then a downlink of its own into
// the next machine (12.5 GB/s); 500 ns each. Links are added in that order, position by position.
template <typename Uplink>
sim::RingChannel machine_ring(sim::LinkTable& links, std::uint32_t machines, const Uplink& uplink,
                              const sim::LinkId* via = nullptr) {
  sim::RingChannel ch;
  for (std::uint32_t p = 0; p < machines; ++p) {
    ch.order.push_back(p);
    const sim::LinkId out =
        links.add({sim::LinkKind::PCIe, mb_per_second(25'000), sim::Time::ns(500), "pcie"});
    std::vector<sim::LinkId> route = {out, uplink(p)};
    if (via != nullptr) route.push_back(*via);
    route.push_back(
        links.add({sim::LinkKind::InfiniBand, mb_per_second(12'500), sim::Time::ns(500), "downlink"}));
    ch.routes.push_back(std::move(route));
  }
  return ch;
}

// M machines, each with one rank of ring A and one of ring B (one channel each): both rings' edges
// out of machine m share its uplink (add_uplink; added first). Ring B's position p is in machine
// p + 1: its positions meet A's of the next window on the uplinks, so the links standing for them
// must be shared across windows, not each one's own. `spine`: every edge also crosses one shared
// spine link (50 GB/s, 500 ns; a class of one link: no symmetry to fold over).
struct CoupledRings {
  sim::LinkTable links;
  std::vector<sim::RingChannel> a, b;
};

inline CoupledRings make_coupled_rings(std::uint32_t machines, bool spine = false) {
  CoupledRings f;
  std::vector<sim::LinkId> uplink;
  for (std::uint32_t m = 0; m < machines; ++m) uplink.push_back(add_uplink(f.links, m));
  const sim::LinkId core =
      f.links.add({sim::LinkKind::InfiniBand, mb_per_second(50'000), sim::Time::ns(500), "spine"});
  for (const std::uint32_t shift : {0u, 1u}) {
    const auto up = [&](std::uint32_t p) { return uplink[(p + shift) % machines]; };
    (shift == 0 ? f.a : f.b).push_back(machine_ring(f.links, machines, up, spine ? &core : nullptr));
  }
  return f;
}

// Starts its collective's rank `tag` (schedule it once per rank, at the rank's join time).
struct RankStarter final : sim::EventHandler {
  sim::Collective* collective = nullptr;
  void on_event(std::uint64_t rank) override { collective->start(static_cast<std::uint32_t>(rank)); }
};

}  // namespace hybridsim::testing

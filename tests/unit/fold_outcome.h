// What a folded collective and the same collective simulated in full (fast path off) must share,
// exactly: every rank's finish, every link's counters and busy-until, the bytes by link kind and the
// messages.
// Used by the ring and tree fold tests (sim_ring_fold_test.cpp, sim_tree_fold_test.cpp).
#pragma once
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "sim/collective.h"
#include "sim/fast/link_claims.h"
#include "sim/network.h"

namespace hybridsim::testing {

struct FoldOutcome {
  std::vector<sim::Time> finish;
  std::vector<sim::LinkCounters> links;
  std::vector<sim::Time> busy_until;  // each link's, which the next collective on it meets
  std::array<sim::Bytes, sim::kLinkKindCount> bytes{};
  std::uint64_t messages = 0;
  sim::SimulationPath path;
  bool interfered = false;
  std::uint64_t most_in_flight = 0;  // on the network it ran on (a folded one's models: path.model_in_flight)
};

// Reads a finished collective's outcome off it and its network.
inline FoldOutcome outcome_of(const sim::Collective& c, const sim::Network& net) {
  FoldOutcome o;
  for (std::uint32_t r = 0; r < c.ranks(); ++r) o.finish.push_back(c.rank_finish_time(r));
  for (sim::LinkId l = 0; l < net.links().size(); ++l) {
    o.links.push_back(net.counters(l));
    o.busy_until.push_back(net.busy_until(l));
  }
  o.bytes = c.bytes_by_link_kind();
  o.messages = c.messages_sent();
  o.path = c.simulation_path();
  o.interfered = sim::interfered(net);
  o.most_in_flight = net.most_messages_in_flight();
  return o;
}

inline void check_same(const FoldOutcome& folded, const FoldOutcome& full) {
  REQUIRE(folded.finish.size() == full.finish.size());
  for (std::size_t r = 0; r < full.finish.size(); ++r) {
    CAPTURE(r);
    CHECK(folded.finish[r] == full.finish[r]);
  }
  for (std::size_t l = 0; l < full.links.size(); ++l) {
    CAPTURE(l);
    CHECK(folded.links[l].bytes == full.links[l].bytes);
    CHECK(folded.links[l].busy == full.links[l].busy);
    CHECK(folded.links[l].messages == full.links[l].messages);
    CHECK(folded.links[l].max_queue_depth == full.links[l].max_queue_depth);
    CHECK(folded.busy_until[l] == full.busy_until[l]);
  }
  for (int k = 0; k < sim::kLinkKindCount; ++k)
    CHECK(folded.bytes[static_cast<std::size_t>(k)] == full.bytes[static_cast<std::size_t>(k)]);
  CHECK(folded.messages == full.messages);
}

}  // namespace hybridsim::testing

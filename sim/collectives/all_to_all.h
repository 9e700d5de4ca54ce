// sim::AllToAllCollective — an all-to-all (NCCL's grouped send/receive, the dispatch and combine of
// a mixture of experts' tokens) at message granularity over sim::Network. Each of n ranks holds a
// buffer of `size` bytes cut into n equal parts and sends part j to rank j: n−1 transfers of size/n
// per rank, each as messages of at most `message_size`, along the route the plan gives for that
// pair, all at once (peers in the order r+1, r+2, … so that ranks start on different targets), so
// that the links' FIFO servers share them. A rank is done when it has joined, received its n−1
// parts and had all it sent delivered. Messages may arrive before their receiver joined (NCCL's
// proxy buffers them); they count when it joins.
//   AllToAllCollective a2a(net, 8, routes, Bytes::mib(64), config);  // routes[i][j]: i → j
//   a2a.start_all();  queue.run();  a2a.finish_time();
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "sim/collective.h"
#include "sim/network.h"
#include "sim/units.h"

namespace hybridsim::sim {

// A route from every rank to every other: routes[i][j] (i ≠ j; routes[i][i] unused).
using PairRoutes = std::vector<std::vector<std::vector<LinkId>>>;

class AllToAllCollective final : public Collective {
 public:
  // Throws InternalError when routes is not ranks × ranks.
  AllToAllCollective(Network& network, std::uint32_t ranks, PairRoutes routes, Bytes size,
                     CollectiveConfig config);
  AllToAllCollective(const AllToAllCollective&) = delete;
  AllToAllCollective& operator=(const AllToAllCollective&) = delete;

  void notify_rank_done(EventHandler& handler, std::uint64_t tag_base) override;
  void start(std::uint32_t rank) override;
  std::uint32_t ranks() const override { return n_; }
  bool is_done() const override { return done_ == n_; }
  Time rank_finish_time(std::uint32_t rank) const override { return rank_[rank].finish; }
  Time finish_time() const override { return latest_finish(rank_); }
  std::uint64_t messages_sent() const override { return sent_; }
  std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const override { return by_kind_; }
  SimulationCost full_cost() const override;
  // The least full_cost() of an all-to-all of `size` over `ranks` whatever its routes (each taken as
  // one link), known before the ranks × (ranks − 1) routes are found: at 65,536 GPUs their table
  // alone passes any machine's memory, so a cap must refuse it before they are.
  static SimulationCost least_cost(std::uint32_t ranks, Bytes size, Bytes message_size);
  ExpectedEvents expected_events() const override;  // all of full_cost()'s: it runs in full
  void on_event(std::uint64_t tag) override;

  // Messages each part travels as, and the bytes of part (i → j), the same for every pair.
  std::uint32_t messages_per_part() const { return messages_per_part_; }
  Bytes part_bytes() const { return part_; }

 private:
  void finish(std::uint32_t rank);
  Network& network_;
  std::uint32_t n_;
  PairRoutes routes_;
  Bytes part_;
  CollectiveConfig config_;
  std::uint32_t messages_per_part_ = 0;
  std::uint8_t rate_class_ = 0;
  std::vector<RankProgress> rank_;
  std::uint32_t done_ = 0;
  bool charged_ = false;
  std::uint64_t sent_ = 0;
  std::array<Bytes, kLinkKindCount> by_kind_{};
  EventHandler* handler_ = nullptr;
  std::uint64_t tag_base_ = 0;
};

}  // namespace hybridsim::sim

// sim::TreeCollective — a tree all-reduce (NCCL's double binary tree) at message granularity over
// sim::Network. Each channel is a spanning tree of the ranks and carries S/C bytes in m equal
// messages, m = max(ceil((S/C) / message_size), 2 × the tree's height): a tree forwards data level
// by level, and with fewer messages than its 2·height levels (up and down) its pipeline would never
// fill, which NCCL avoids by cutting tree chunks smaller for small and medium sizes. Reduce: a rank sends message j to its parent once message j of every
// child has arrived and been reduced (leaves send at once); the root then sends message j back
// down, and every rank forwards it to its children as it arrives. Messages pipeline, so each tree
// edge carries m messages up and m down: 2(N−1)·m per channel, O(N × chunks) in all.
//   sim::TreeCollective ar(net, 8, trees, Bytes::mib(64), config);  ar.start_all();  queue.run();
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "sim/collective.h"
#include "sim/network.h"

namespace hybridsim::sim {

// One tree over the communicator's ranks 0..N-1: each rank's parent (-1 for the one root) with the
// route to it, and its children with the routes from it to each.
struct TreeChannel {
  std::vector<std::int32_t> parent;
  std::vector<std::vector<LinkId>> up;  // up[r]: r → parent[r]
  std::vector<std::vector<std::uint32_t>> children;
  std::vector<std::vector<std::vector<LinkId>>> down;  // down[r][k]: r → children[r][k]
};

class TreeCollective final : public Collective {
 public:
  // Throws InternalError when a channel is not a tree over `ranks` ranks.
  TreeCollective(Network& network, std::uint32_t ranks, std::vector<TreeChannel> channels,
                 Bytes size, CollectiveConfig config);
  TreeCollective(const TreeCollective&) = delete;
  TreeCollective& operator=(const TreeCollective&) = delete;

  void notify_rank_done(EventHandler& handler, std::uint64_t tag_base) override;
  void start(std::uint32_t rank) override;
  std::uint32_t ranks() const override { return n_; }
  bool is_done() const override { return ranks_done_ == n_; }
  Time rank_finish_time(std::uint32_t rank) const override { return rank_[rank].finish; }
  Time finish_time() const override;
  std::uint64_t messages_sent() const override { return messages_sent_; }
  std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const override { return bytes_by_kind_; }
  // Never folded: a tree already costs O(ranks × chunks) messages.
  SimulationPath simulation_path() const override {
    SimulationPath path;
    path.ranks = n_;
    path.reason = "a tree (already ranks x chunks messages)";
    return path;
  }
  SimulationCost full_cost() const override;  // sim/collective_cost.cpp
  std::uint32_t channel_count() const { return static_cast<std::uint32_t>(channels_.size()); }
  std::uint32_t messages_per_channel() const { return messages_; }
  void on_event(std::uint64_t tag) override;

 private:
  struct Node {  // one rank in one channel
    std::uint32_t first_child = 0;  // into ChannelState::child_received
    std::uint32_t child_count = 0;
    std::uint32_t slot_in_parent = 0;
    std::uint32_t reduced = 0;  // messages complete here (all children's arrived and reduced)
    Time up_delay;
    Time paced_until;
  };
  struct ChannelState {
    TreeChannel plan;
    std::vector<Node> nodes;
    std::vector<std::uint32_t> child_received;  // per child slot: messages arrived from it
    std::vector<std::vector<Time>> down_delay;  // [rank][k]
    std::int64_t bytes = 0;
  };
  std::int64_t message_bytes(const ChannelState& ch, std::uint32_t j) const;
  void send(std::uint32_t c, std::uint32_t from, Route route, Time delay, std::uint64_t low,
            std::uint32_t j, Time at);
  void send_up(std::uint32_t c, std::uint32_t r, std::uint32_t j, Time at);
  void send_down(std::uint32_t c, std::uint32_t r, std::uint32_t j, Time at);
  void handle(std::uint64_t tag);
  void check_done(std::uint32_t rank);
  // At the first rank's start: charges full_cost() to config_.budget, if any.
  void charge_budget() const;

  Network& network_;
  EventQueue& queue_;
  std::uint32_t n_;
  CollectiveConfig config_;
  std::uint32_t messages_ = 1;  // per channel
  std::uint8_t rate_class_ = 0;
  std::vector<ChannelState> channels_;
  std::vector<RankProgress> rank_;
  std::uint32_t ranks_done_ = 0;
  std::uint64_t messages_sent_ = 0;
  std::array<Bytes, kLinkKindCount> bytes_by_kind_{};
  EventHandler* done_handler_ = nullptr;
  std::uint64_t done_tag_base_ = 0;
  bool charged_ = false;
};

}  // namespace hybridsim::sim

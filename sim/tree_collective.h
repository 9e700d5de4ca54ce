// sim::TreeCollective — a tree all-reduce (NCCL's double binary tree) at message granularity over
// sim::Network. Each channel is a spanning tree of the ranks and carries S/C bytes in m equal
// messages, m = max(ceil((S/C) / message_size), 2 × the tree's height): a tree forwards data level
// by level, and with fewer messages than its 2·height levels (up and down) its pipeline would never
// fill, which NCCL avoids by cutting tree chunks smaller for small and medium sizes. Reduce: a rank sends
// message j to its parent once message j of every child has arrived and been reduced (leaves send at once);
// the root then sends message j back down, and every rank forwards it to its children as it arrives. Messages
// pipeline, so each tree edge carries m messages up and m down: 2(N−1)·m per channel, O(N × chunks) in all.
//   sim::TreeCollective ar(net, 8, trees, Bytes::mib(64), config);  ar.start_all();  queue.run();
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collective.h"
#include "sim/line_allocator.h"
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

// Channels standing for some of a larger tree collective's (sim/fast/ uses them): simulated with
// the messages per channel and the bytes of each channel of the whole. Default (messages 0): an
// ordinary tree collective. `channels`, if any: which of the plans it runs (indices, in this order;
// the bytes are theirs), so that a model of some channels shares the whole's plans, not a copy.
struct TreeSegment {
  std::uint32_t messages = 0;
  std::vector<std::int64_t> channel_bytes;  // one per channel
  std::vector<std::uint32_t> channels;
};

class TreeCollective final : public Collective {
 public:
  // Throws InternalError when a channel is not a tree over `ranks` ranks.
  TreeCollective(Network& network, std::uint32_t ranks, std::vector<TreeChannel> channels, Bytes size,
                 CollectiveConfig config, TreeSegment segment = {});
  // The same over channels it shares with others (the collectives of one member set in a step
  // have the same trees: one copy of them, not one each).
  TreeCollective(Network& network, std::uint32_t ranks,
                 std::shared_ptr<const std::vector<TreeChannel>> channels, Bytes size,
                 CollectiveConfig config, TreeSegment segment = {});
  TreeCollective(const TreeCollective&) = delete;
  TreeCollective& operator=(const TreeCollective&) = delete;

  void notify_rank_done(EventHandler& handler, std::uint64_t tag_base) override;
  void start(std::uint32_t rank) override;
  // Rank `rank` joins now, having reached the collective at `joined` (not after now), for a caller
  // that held its join back: its leaves send as they would have then (none may be due before now).
  void start_at(std::uint32_t rank, Time joined);
  // Charges full_cost() to the config's budget, if any, once (the first start does it too).
  void charge_budget();
  // What a charge names: "a tree all-reduce of 8 MiB over 16 ranks starts"; of some of its channels
  // (a folded tree's model of them), their bytes.
  std::string budget_cause() const;
  std::string budget_cause(const std::vector<std::uint32_t>& channels) const;
  // Why it is simulated message by message, as simulation_path() reports it (sim/fast/).
  void explain(std::string_view reason) { path_.reason = reason; }
  std::uint32_t ranks() const override { return n_; }
  bool is_done() const override { return ranks_done_ == n_; }
  Time rank_finish_time(std::uint32_t rank) const override;
  Time finish_time() const override;
  std::uint64_t messages_sent() const override { return messages_sent_; }
  std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const override;
  SimulationPath simulation_path() const override { return path_; }
  SimulationCost full_cost() const override;  // sim/collective_cost.cpp
  // Channel c's share of full_cost(): its messages, their events, its leaves' messages in flight and
  // its state (what a folded tree's model of some channels is charged, sim/fast/folded_tree.h).
  SimulationCost channel_cost(std::uint32_t c) const;
  ExpectedEvents expected_events() const override;  // all of full_cost()'s: it runs in full
  std::uint32_t channel_count() const { return static_cast<std::uint32_t>(channels_.size()); }
  Network& network() const { return network_; }
  const CollectiveConfig& config() const { return config_; }
  // The plan as built: channel c's tree, its bytes, the messages of every channel, the protocol
  // delay of rank r's route up and of its route to its k-th child (read from its node once it
  // runs, computed from the route's few hops before), and r's index among its parent's children.
  const TreeChannel& channel_plan(std::uint32_t c) const { return *channels_[c].plan; }
  const std::shared_ptr<const std::vector<TreeChannel>>& plans() const { return plans_; }
  std::int64_t channel_bytes(std::uint32_t c) const { return channels_[c].bytes; }
  std::uint32_t messages_per_channel() const { return messages_; }
  Time up_delay(std::uint32_t c, std::uint32_t r) const;
  Time down_delay(std::uint32_t c, std::uint32_t r, std::uint32_t k) const;
  std::uint32_t slot_in_parent(std::uint32_t c, std::uint32_t r) const;
  // Where channel c's slot of rank r's k-th child lies once laid out (null before): the layout's
  // promise that a rank's two children share one line (ChannelState::slots) is tested by it.
  const void* child_slot_address(std::uint32_t c, std::uint32_t r, std::uint32_t k) const {
    return laid_out() ? &channels_[c].slots[channels_[c].nodes[r].first_child + k] : nullptr;
  }
  // Whether its nodes are laid out: it has started (a folded tree's plain tree never does).
  bool laid_out() const { return !rank_.empty(); }
  // When channel c's position `rank` last did anything (received, had a message delivered, reduced);
  // zero before it starts.
  Time node_done(std::uint32_t c, std::uint32_t rank) const {
    return laid_out() ? channels_[c].nodes[rank].done : Time::zero();
  }
  void on_event(std::uint64_t tag) override;

 private:
  // One route of a channel with what each message on it needs, kept beside the rank's state so
  // that a message touches few cache lines: its links, its delay, and which of the collective's
  // mixes of link kinds it crosses (a message adds its bytes to that mix's count, once: the bytes
  // by kind are summed from the few mixes when asked, not per kind per message).
  struct Edge {
    const LinkId* route = nullptr;  // into ChannelState::links
    Time delay;
    std::uint8_t hops = 0;
    std::uint8_t mix = 0;  // into kind_mixes_
  };
  // One rank in one channel: all an arrival at it or from it reads and writes, in one 64-byte line
  // (an up arrival reads the parent's alone, its tag naming the sender's child slot; a down one the
  // parent's and the receiver's; with the rank's state apart, a RankProgress each, and nodes across
  // lines, it read four to six).
  // The rank's own progress is kept here per channel: its messages left, its finish so far, and its
  // join (RankProgress holds what is rare: the early arrivals, whether it is done).
  struct alignas(64) Node {
    const LinkId* up_route = nullptr;  // to its parent (none for the root), into ChannelState::links
    Time up_delay;
    Time done;
    Time finish;      // the latest it received the result or finished a reduction, in this channel
    Time ready_from;  // its join plus the protocol's base latency; Time::max() until it joins
    std::int32_t parent = -1;
    std::uint32_t first_child = 0;  // into ChannelState::slots
    std::uint32_t reduced = 0;  // messages complete here (all children's arrived and reduced)
    std::uint32_t receives_left = 0;  // messages still to arrive here, in this channel
    std::uint32_t sends_left = 0;     // messages sent from here still to be delivered
    std::uint8_t up_hops = 0;
    std::uint8_t up_mix = 0;  // into kind_mixes_
    std::uint8_t child_count = 0;
    std::uint8_t slot_in_parent = 0;
    Edge up() const { return {up_route, up_delay, up_hops, up_mix}; }
  };
  static_assert(sizeof(Node) == 64);
  struct ChildSlot {  // one child of a rank in one channel
    Edge down;  // from the rank to the child
    std::uint32_t child = 0;
    std::uint32_t received = 0;  // messages arrived from it (kept where a rank has two or more)
  };
  static_assert(sizeof(ChildSlot) * 2 == kCacheLine);
  // A channel's plan and bytes, and what it runs on. The nodes, slots, packed links and pacing (and
  // the ranks' RankProgress) are laid out when the tree first starts (run_state()): a folded tree's
  // plain tree, which its models stand for, never starts, and holds only this and its plans. Laid
  // out with the plan, the 16,384-GPU default step with `algorithm: tree` held them for its 11
  // folded trees where only the models' groups run.
  struct ChannelState {
    const TreeChannel* plan = nullptr;  // in plans_
    std::vector<Node> nodes;
    // A rank's children are nodes[r].first_child + k. A rank's two children share one line: the
    // block starts on a line and a rank of two starts at an even slot (a padding slot before it
    // if need be), so that an arrival's reads of both children's counts, and a message's sends
    // down to both, take one line, not two half the time.
    std::vector<ChildSlot, LineAllocator<ChildSlot>> slots;
    // Every route of the plan, rank by rank (its way up, then down to each child): packed, so
    // that a message reads its next link from a line its neighbours' routes share.
    std::vector<LinkId> links;
    std::vector<Time> paced_until;  // per rank, under a channel cap only: when it may send next
    std::int64_t bytes = 0;
    // Message j has base + 1 bytes if j < longer, else base; pacing and reducing it take
    // pace[0] / reduce[0] (base + 1 bytes) or pace[1] / reduce[1].
    std::int64_t base = 0;
    std::uint32_t longer = 0;
    std::array<Time, 2> pace{}, reduce{};
  };
  // At the first start: every channel's nodes, slots, packed links and pacing, and the ranks'
  // progress (the channels each has messages in).
  void run_state();
  Edge edge(ChannelState& ch, const std::vector<LinkId>& route);
  void size_messages(ChannelState& ch) const;
  // `known_not_past`: `at` is not before now (an arrival's sends), so the network need not test it.
  void send(ChannelState& ch, std::uint32_t from, const Edge& edge, std::uint64_t low, std::uint32_t j,
            Time at, bool known_not_past);
  void send_up(std::uint32_t c, std::uint32_t r, std::uint32_t j, Time at);
  void send_down(std::uint32_t c, std::uint32_t r, std::uint32_t j, Time at);
  void handle(std::uint64_t tag);  // an arrival that came before its receiver started
  void handle(ChannelState& ch, std::uint32_t c, std::uint32_t r, bool up, std::uint32_t j);
  // After an arrival counted at `node` (rank `rank`): once the node has nothing left to receive or
  // send, the rank has one channel fewer to finish, and is done after its last.
  void check_done(const Node& node, std::uint32_t rank) {
    if (close_channel_if_idle(rank_[rank], node)) finish_rank(rank);
  }
  void check_done(std::uint32_t rank) {
    if (rank_[rank].channels_left == 0) finish_rank(rank);
  }
  void finish_rank(std::uint32_t rank);  // when every channel of it has closed
  void send_leaves(std::uint32_t rank, Time at);

  Network& network_;
  EventQueue& queue_;
  std::uint32_t n_;
  CollectiveConfig config_;
  std::uint32_t messages_ = 1;  // per channel
  std::uint8_t rate_class_ = 0;
  std::shared_ptr<const std::vector<TreeChannel>> plans_;
  std::vector<ChannelState> channels_;
  // Per rank, once it runs: started, done, its start, its finish once done, the arrivals before it
  // started, its channels whose node has messages left.
  std::vector<RankProgress> rank_;
  std::uint32_t ranks_done_ = 0;
  std::uint64_t messages_sent_ = 0;
  // The routes' distinct mixes of link kinds (how many links of each kind), and the bytes sent over
  // routes of each mix.
  std::vector<std::array<std::uint8_t, kLinkKindCount>> kind_mixes_;
  std::vector<std::int64_t> mix_bytes_;
  EventHandler* done_handler_ = nullptr;
  std::uint64_t done_tag_base_ = 0;
  bool charged_ = false;
  SimulationPath path_;
};

}  // namespace hybridsim::sim

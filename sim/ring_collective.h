// sim::RingCollective — one NCCL-style ring collective (all-reduce, reduce-scatter, all-gather,
// broadcast) at message granularity over sim::Network, as a state machine stepping on arrivals.
// All-reduce of S bytes over N ranks and C channels: each channel carries S/C bytes; reduce-scatter
// then all-gather take 2(N−1) steps in which every rank sends one chunk of S/(N·C) bytes to its ring
// successor, as messages of at most `message_size`. Message j of step s+1 leaves a rank as soon as
// message j of step s has arrived there (and, in the reduce-scatter half, been reduced), so steps
// pipeline (a broadcast under an NCCL protocol in at least N−1 messages). Ranks join when their
// stream reaches the collective (`start(rank)`); a rank is done when
// it has received everything and everything it sent has been delivered.
//   sim::RingCollective ar(net, CollectiveOp::AllReduce, 8, channels, Bytes::mib(64), config);
//   ar.start_all();  queue.run();  ar.finish_time();
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collective.h"
#include "sim/network.h"

namespace hybridsim::sim {

class RingCollective;

// One message of a ring collective taken in by its receiving rank (for traces: analysis/ implements
// the observer; set it in CollectiveConfig::observer). `time` is when the rank handles it: its
// arrival, or the rank's start if it arrived before the rank joined. Broadcasts report too.
struct RingArrival {
  const RingCollective* ring;
  std::uint32_t rank;     // the receiving rank, in the ring's rank space
  std::uint32_t step;     // 0-based ring step (for a broadcast: the hop along the chain)
  std::uint32_t channel;
  Time time;
};
class RingObserver {
 public:
  virtual void on_ring_arrival(const RingArrival& arrival) = 0;

 protected:
  ~RingObserver() = default;
};

// A ring segment: a ring of `ranks` positions standing for the first positions of a longer ring of
// `ring_ranks`, whose steps it takes, with these chunk sizes (one per position) and this many
// messages per chunk; its messages travel for `party` (Network::send_at), if set. Default (ring_ranks
// 0): an ordinary ring. Segments are how sim/fast/ simulates a few positions in place of many.
struct RingSegment {
  std::uint32_t ring_ranks = 0;
  std::uint32_t messages_per_chunk = 0;
  std::vector<std::int64_t> chunk_bytes;
  const EventHandler* party = nullptr;
};

// Told as message 0 of a step reaches position 0 of channel 0, before the ring handles it; returns
// true if it took the event over (scheduled it again, later): the ring then does nothing with it.
// A plain ring has none; sim/fast/ sets one. Called once a step, not once a message.
class RingStepHook {
 public:
  virtual bool on_step_arrival(std::uint64_t tag) = 0;

 protected:
  ~RingStepHook() = default;
};

class RingCollective final : public Collective {
 public:
  // `ranks` = N; every channel's order is a permutation of 0..N-1 (for broadcast, starting at
  // `root`). Throws InternalError on an inconsistent plan.
  RingCollective(Network& network, CollectiveOp op, std::uint32_t ranks, std::vector<RingChannel> channels,
                 Bytes size, CollectiveConfig config, RingSegment segment = {});
  RingCollective(const RingCollective&) = delete;
  RingCollective& operator=(const RingCollective&) = delete;

  void notify_rank_done(EventHandler& handler, std::uint64_t tag_base) override;
  // The same, but the handler is called within the event that completes a rank (its finish, which
  // may lie later, read with rank_finish_time()), so that the one who is told schedules what
  // follows the finish then, as the ring it stands for would (a segment's owner, sim/fast/).
  void notify_rank_done_at_once(EventHandler& handler, std::uint64_t tag_base);
  void start(std::uint32_t rank) override;

  std::uint32_t ranks() const override { return n_; }
  CollectiveOp op() const { return op_; }
  Bytes size() const { return size_; }
  const CollectiveConfig& config() const { return config_; }
  Network& network() const { return network_; }
  bool is_done() const override { return ranks_done_ == n_; }
  bool started() const { return started_; }  // some rank has joined
  Time rank_start_time(std::uint32_t rank) const { return rank_.empty() ? Time::zero() : rank_[rank].start; }
  Time rank_finish_time(std::uint32_t rank) const override;
  Time finish_time() const override;  // latest finish
  std::uint64_t messages_sent() const override { return messages_sent_; }
  // The plan, for observers: steps per rank (2(N−1) for all-reduce, N−1 for the other ring ops),
  // messages a rank receives in one step of a ring op (channels × messages per chunk), and the
  // route leaving `rank` in `channel` (to its successor).
  std::uint32_t steps() const { return steps_; }
  std::uint32_t channel_count() const { return static_cast<std::uint32_t>(channels_.size()); }
  std::uint32_t messages_per_chunk() const { return messages_per_chunk_; }
  std::uint32_t messages_per_step() const { return channel_count() * messages_per_chunk_; }
  // Arrivals of steps below this are reduced before they are forwarded (N−1 for the reducing ops).
  std::uint32_t reduce_steps() const { return reduce_steps_; }
  Route route_from(std::uint32_t rank, std::uint32_t channel = 0) const {
    const ChannelState& ch = channels_[channel];
    return ch.plan.routes[ch.position_of_rank[rank]];
  }
  // Channel c's plan, the position of a rank in it, its chunk sizes, a position's protocol delay
  // and the bytes it sent so far; whether every channel's chunks are of one size.
  const RingChannel& channel_plan(std::uint32_t c) const { return channels_[c].plan; }
  std::uint32_t position_of(std::uint32_t c, std::uint32_t rank) const {
    return channels_[c].position_of_rank[rank];
  }
  const std::vector<std::int64_t>& chunk_bytes(std::uint32_t c) const { return channels_[c].chunk_bytes; }
  Time step_delay(std::uint32_t c, std::uint32_t position) const;
  std::int64_t edge_bytes(std::uint32_t c, std::uint32_t position) const;
  bool uniform_chunks() const;
  std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const override;
  SimulationPath simulation_path() const override { return path_; }
  SimulationCost full_cost() const override;  // sim/collective_cost.cpp
  // What a budget refusal says started: "a ring all-reduce of 4 MiB over 4 ranks starts in full (4 of
  // them message by message)".
  std::string budget_cause() const;
  ExpectedEvents expected_events() const override;  // all of full_cost()'s: it runs in full

  // For a caller that simulates the ring otherwise (sim/fast/): counts every message of channel c
  // as sent (its bytes by edge, exactly, and the message count), without sending any; and why the
  // ring is simulated message by message, as simulation_path() reports it.
  void count_channel_sent(std::uint32_t c);
  void explain(std::string_view reason) { path_.reason = reason; }
  void set_step_hook(RingStepHook* hook) { step_hook_ = hook; }

  // Its state as seen from `now` (sim/ring_state.cpp), for a caller that runs it alone and compares
  // its states over time: `relative` gets what must be equal for the future to repeat (times as
  // offsets from now), `counts` what only accumulates (receives and sends left, bytes per edge,
  // messages). False, appending part of it, unless every rank runs freely: joined, not done,
  // nothing waiting for its start, its protocol's base latency since joining passed.
  bool append_state(Time now, std::vector<std::int64_t>& relative, std::vector<std::int64_t>& counts) const;
  // Moves that state `dt` later (times after `now`) and sets its counts (in append_state's order).
  void shift_state(Time now, Time dt, const std::vector<std::int64_t>& counts);

  void on_event(std::uint64_t tag) override;

 private:
  // One position of a channel: all an arrival there reads and writes, in one 64-byte line (the
  // sender's, the position before, is the line beside it). Its rank's progress is kept here per
  // channel: its messages left, its finish so far, its join; RankProgress holds what is rare (the
  // early arrivals, whether it is done). With the ranks' state apart, one RankProgress each, and
  // the order, the bytes sent, the delays and the routes in arrays of their own, an arrival read
  // six or seven lines.
  struct alignas(64) Position {
    const LinkId* route = nullptr;  // to the next position, in `plan`
    Time step_delay;                // the protocol's wait before sending from here
    std::int64_t edge_bytes = 0;    // bytes sent from here
    Time paced_until;               // under a channel cap: when it may send next
    Time ready_from;  // its rank's join plus the protocol's base latency; Time::max() until then
    Time finish;      // the latest an arrival here was ready to go on (reduced)
    std::uint32_t rank = 0;
    std::uint32_t hops = 0;
    std::uint32_t receives_left = 0;  // in this channel
    std::uint32_t sends_left = 0;     // sent from here, not yet delivered
  };
  static_assert(sizeof(Position) == 64);
  // A channel's plan and what it runs on. The positions (and the ranks' RankProgress) are laid out
  // when the ring first starts (run_state()): a ring that a fold or an embedding simulates otherwise
  // never starts, and holds only its plan, its chunks and, once counted, its bytes sent. Laid out
  // with the plan, the positions of the 16,384-GPU default run's 11 folded rings took 44 MiB of its
  // 275 MB (massif), where they run nowhere.
  struct ChannelState {
    RingChannel plan;
    std::vector<std::uint32_t> position_of_rank;
    std::vector<std::int64_t> chunk_bytes;  // by chunk index (ring ops) or [0] = whole (broadcast)
    std::vector<Position> at;               // by position, once it runs
    std::vector<std::int64_t> sent;         // by position, counted (count_channel_sent) before it runs
  };
  // The constructor's parts: one channel's plan and chunks; the broadcast's pieces.
  ChannelState channel_state(std::int64_t c, std::int64_t c_count, RingChannel plan,
                             const RingSegment& segment) const;
  void size_messages(std::int64_t max_messages, const RingSegment& segment);
  // At the first start: the positions (route, delay, rank, messages to receive and send, bytes
  // counted so far) and the ranks' progress (the channels each has work in).
  void run_state();
  std::int64_t message_bytes(const ChannelState& ch, std::uint32_t chunk, std::uint32_t j) const;
  // Message j of `step` leaves position `from` of channel c at `at` (after its delay), `bytes` long.
  void send(std::uint32_t c, std::uint32_t from, std::uint32_t step, std::uint32_t j, Time at,
            std::int64_t bytes);
  void send_first_step(std::uint32_t rank);
  // Message (step, j) = high / messages_per_chunk_, high % ... of channel c reached position `to`.
  void handle_arrival(std::uint32_t c, std::uint32_t to, std::uint32_t high);
  // Inline: two calls an arrival, and most find the position with messages still to come. Once it
  // has none, its rank has one channel fewer to finish, and is done after its last.
  void check_done(const Position& at) {
    if (close_channel_if_idle(rank_[at.rank], at)) finish_rank(at.rank);
  }
  void check_done(std::uint32_t rank) {
    if (rank_[rank].channels_left == 0) finish_rank(rank);
  }
  void finish_rank(std::uint32_t rank);  // when every channel of it has closed
  // Starting: charges full_cost() to config_.budget, if any (throws past its caps), as budget_cause().
  void charge_budget() const;
  std::uint64_t encode(std::uint32_t c, std::uint32_t to, std::uint32_t step, std::uint32_t j) const;

  Network& network_;
  EventQueue& queue_;
  CollectiveOp op_;
  std::uint32_t n_;
  std::uint32_t ring_ranks_;  // the ring's ranks: n_, or more for a segment
  Bytes size_;
  CollectiveConfig config_;
  std::uint32_t steps_ = 0;         // ring steps (or chain hops for broadcast)
  std::uint32_t reduce_steps_ = 0;  // arrivals of steps < this are reduced before forwarding
  std::uint32_t messages_per_chunk_ = 1;
  std::int64_t piece_ = 0;  // the size of each message but a chunk's last (message_size, or less)
  // transfer_time of the latest message's bytes at one bandwidth: a ring's messages are mostly of
  // one size (a chunk's pieces), and pacing and reducing computed it afresh per message (a 64-bit
  // division and a call each, 15 M instructions of a 128-GPU step's 1,827 M).
  struct TimeOfBytes {
    std::int64_t bytes = -1;
    Time time;
    Time of(std::int64_t b, Bandwidth bw) {
      if (b != bytes) {
        time = transfer_time(Bytes::of(b), bw);
        bytes = b;
      }
      return time;
    }
  };
  TimeOfBytes pace_time_;    // at config_.timing.channel_cap
  TimeOfBytes reduce_time_;  // at config_.reduction_bandwidth
  std::vector<ChannelState> channels_;
  // Per rank, once it runs: started, done, its start, its finish once done, the arrivals before it
  // started, its channels whose position has messages left.
  std::vector<RankProgress> rank_;
  std::uint32_t ranks_done_ = 0;
  std::uint64_t messages_sent_ = 0;
  std::uint8_t rate_class_ = 0;
  bool pace_ = false;  // under a channel cap (Position::paced_until)
  EventHandler* done_handler_ = nullptr;
  std::uint64_t done_tag_base_ = 0;
  bool done_at_once_ = false;  // notify_rank_done_at_once
  bool started_ = false;       // some rank has joined
  SimulationPath path_;
  RingStepHook* step_hook_ = nullptr;
  const EventHandler* party_ = nullptr;  // passed with every message (RingSegment::party)
};

}  // namespace hybridsim::sim

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
#include <memory>
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

// The representatives of a folded ring (sim/README.md, "Folding"): a ring of `ranks` positions
// standing for the first positions of a ring of `ring_ranks`, whose steps it takes, with these
// chunk sizes (one per position) and this many messages per chunk. Default: an ordinary ring.
// `alone`: the model runs alone on a queue and network of its own, so it may jump over periodic
// stretches of its steps (sim/ring_jump.cpp).
struct RingFoldModel {
  std::uint32_t ring_ranks = 0;
  std::uint32_t messages_per_chunk = 0;
  std::vector<std::int64_t> chunk_bytes;
  bool alone = false;
  // Whom its messages travel for (Network::send_at): the group of an embedded ring, sim/ring_embed.h.
  const EventHandler* party = nullptr;
};

// A ring folded together with the other rings that share its links (sim/ring_embed.h): per channel,
// the first `window` positions are simulated, live on the real queue and network, each route over
// the links that stand for its links' classes; the group is told (on_event(0)) when the ring is
// done. Chunks of unequal size are modelled at the larger size; then a second model at the smaller
// size runs on `ghost` (a network of its own on the same queue, started with the first) to bound
// the first's lead (embedded_bound()).
struct RingEmbedding {
  EventHandler* group = nullptr;
  std::vector<std::uint32_t> window;                     // per channel
  std::vector<std::vector<std::vector<LinkId>>> routes;  // per channel, per simulated position
  Network* ghost = nullptr;
};

// The smallest divisor P of n such that alike(p, p mod P) for every position p (n if none smaller).
template <typename Alike>
std::uint32_t smallest_period(std::uint32_t n, Alike alike) {
  for (std::uint32_t period = 1; period < n; ++period) {
    if (n % period != 0) continue;
    bool periodic = true;
    for (std::uint32_t p = period; p < n && periodic; ++p) periodic = alike(p, p % period);
    if (periodic) return period;
  }
  return n;
}

class RingCollective final : public Collective {
 public:
  // `ranks` = N; every channel's order is a permutation of 0..N-1 (for broadcast, starting at
  // `root`). Throws InternalError on an inconsistent plan.
  RingCollective(Network& network, CollectiveOp op, std::uint32_t ranks,
                 std::vector<RingChannel> channels, Bytes size, CollectiveConfig config,
                 RingFoldModel model = {});
  RingCollective(const RingCollective&) = delete;
  RingCollective& operator=(const RingCollective&) = delete;
  ~RingCollective() override;

  void notify_rank_done(EventHandler& handler, std::uint64_t tag_base) override;
  // The same, but the handler is called within the event that completes a rank (its finish, which
  // may lie later, read with rank_finish_time()), so that the one who is told schedules what
  // follows the finish then, as a ring in full would: an embedded ring's models (ring_embed.cpp).
  void notify_rank_done_at_once(EventHandler& handler, std::uint64_t tag_base);
  void start(std::uint32_t rank) override;

  std::uint32_t ranks() const override { return n_; }
  CollectiveOp op() const { return op_; }
  Bytes size() const { return size_; }
  bool is_done() const override { return ranks_done_ == n_; }
  Time rank_start_time(std::uint32_t rank) const { return rank_[rank].start; }
  Time rank_finish_time(std::uint32_t rank) const override { return rank_[rank].finish; }
  Time finish_time() const override;  // latest finish
  std::uint64_t messages_sent() const override { return messages_sent_; }
  // The plan, for observers: steps per rank (2(N−1) for all-reduce, N−1 for the other ring ops),
  // messages a rank receives in one step of a ring op (channels × messages per chunk), and the
  // route leaving `rank` in `channel` (to its successor).
  std::uint32_t steps() const { return steps_; }
  std::uint32_t channel_count() const { return static_cast<std::uint32_t>(channels_.size()); }
  std::uint32_t messages_per_step() const { return channel_count() * messages_per_chunk_; }
  Route route_from(std::uint32_t rank, std::uint32_t channel = 0) const {
    const ChannelState& ch = channels_[channel];
    return ch.plan.routes[ch.position_of_rank[rank]];
  }
  std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const override;
  SimulationPath simulation_path() const override { return path_; }
  SimulationCost full_cost() const override;  // sim/collective_cost.cpp
  bool may_fold() const override;
  // For embedding (sim/ring_embed.cpp): whether it may be embedded (a ring op, fast path on, no
  // observer, not itself a model), its channels' plans, a position's protocol delay, whether each
  // channel's chunks are of one size; embed() before any rank starts.
  bool may_embed() const;
  const RingChannel& channel_plan(std::uint32_t c) const { return channels_[c].plan; }
  Time step_delay(std::uint32_t c, std::uint32_t position) const { return channels_[c].step_delay[position]; }
  bool uniform_chunks() const;
  FastPath fast_path() const { return config_.fast_path; }
  // Embedded: positions simulated in channel c (position p repeats p mod that); 0 if not embedded.
  std::uint32_t embedded_window(std::uint32_t c) const {
    return class_done_.empty() ? 0 : static_cast<std::uint32_t>(class_done_[c].size());
  }
  void embed(RingEmbedding embedding);
  // Embedded with chunks of unequal size, once done: whether the larger size's finishes lead the
  // smaller's by at most 0.1% of the collective's time (then path_.bound says by how much).
  bool embedded_bound_holds();
  // Ring steps a model alone on its queue skipped by jumping over periods (sim/ring_jump.cpp).
  std::uint64_t jumped_steps() const;

  void on_event(std::uint64_t tag) override;

 private:
  struct ChannelState {
    RingChannel plan;
    std::vector<std::uint32_t> position_of_rank;
    std::vector<std::int64_t> chunk_bytes;   // by chunk index (ring ops) or [0] = whole (broadcast)
    std::vector<std::int64_t> edge_bytes;    // bytes sent from position p
    std::vector<Time> step_delay;            // the protocol's wait before sending from position p
    std::vector<Time> paced_until;           // per position: the channel cap's next free time
  };
  std::int64_t message_bytes(const ChannelState& ch, std::uint32_t chunk, std::uint32_t j) const;
  void send(std::uint32_t c, std::uint32_t from, std::uint32_t step, std::uint32_t j, Time at);
  void send_first_step(std::uint32_t rank);
  // Message (step, j) = high / messages_per_chunk_, high % ... of channel c reached position `to`.
  void handle_arrival(std::uint32_t c, std::uint32_t to, std::uint32_t high);
  void check_done(std::uint32_t rank);
  // Starting in full: charges full_cost() to config_.budget, if any (throws past its caps).
  void charge_budget() const;
  std::uint64_t encode(std::uint32_t c, std::uint32_t to, std::uint32_t step, std::uint32_t j) const;

  // Folding (ring_fold.cpp). Until every rank has joined nothing is sent (Deferred); then each
  // channel's representatives are simulated on their own queue and the results applied (Folded).
  enum class Mode : std::uint8_t { Full, Deferred, Folded, Embedded };
  struct ModelRun;
  const char* fold_refusal();  // why this collective is simulated in full, or null (claims nothing)
  void claim_links();          // of every route, once fold_refusal() found none
  void release_links(std::uint32_t rank);  // of the routes leaving `rank`; every rank's if n_
  void join_deferred(std::uint32_t rank);
  std::uint32_t period_of(std::uint32_t c) const;
  ModelRun run_model(std::uint32_t c, std::uint32_t period, std::vector<std::int64_t> chunks) const;
  void run_folded();
  void apply_model(std::uint32_t c, std::uint32_t period, const ModelRun& run, std::vector<Time>& finish);
  void finish_folded_rank(std::uint32_t rank);
  // What each position sends over the whole collective (chunk (p − s) mod N at step s).
  void fill_edge_bytes(ChannelState& ch) const;
  // Embedded (ring_embed.cpp): a rank joins; model position q of channel c is done; a rank is done.
  void join_embedded(std::uint32_t rank);
  void model_rank_done(std::uint32_t c, std::uint32_t q);
  void ghost_rank_done(std::uint32_t c, std::uint32_t q);
  void finish_embedded_rank(std::uint32_t rank);  // at its channels' latest finish
  // The periodic jump (ring_jump.cpp): on for a model alone whose chunks are of one size; tried at
  // each arrival of a step's first message at position 0 (channel 0); true if it jumped (the event
  // was scheduled again, later).
  struct PeriodJump;
  struct JumpSnapshot;
  void enable_jump();
  bool jump_if_periodic(std::uint64_t tag);
  // The model's state as the event `tag` (message 0 of a step at position 0) is handled; false if
  // it may not jump now (a rank not running, something else on its queue).
  bool take_jump_snapshot(std::uint64_t tag, JumpSnapshot& snap) const;
  // Jumps `periods` periods of d steps, `then` the state one period before `snap`.
  void jump_periods(std::uint64_t tag, const JumpSnapshot& snap, const JumpSnapshot& then,
                    std::uint64_t periods, std::uint32_t d);

  Network& network_;
  EventQueue& queue_;
  CollectiveOp op_;
  std::uint32_t n_;
  std::uint32_t ring_ranks_;  // the ring's ranks: n_, or more for a fold's representatives
  Bytes size_;
  CollectiveConfig config_;
  std::uint32_t steps_ = 0;         // ring steps (or chain hops for broadcast)
  std::uint32_t reduce_steps_ = 0;  // arrivals of steps < this are reduced before forwarding
  std::uint32_t messages_per_chunk_ = 1;
  std::int64_t piece_ = 0;  // the size of each message but a chunk's last (message_size, or less)
  std::vector<ChannelState> channels_;
  std::vector<RankProgress> rank_;
  std::uint32_t ranks_done_ = 0;
  std::uint64_t messages_sent_ = 0;
  std::uint8_t rate_class_ = 0;
  EventHandler* done_handler_ = nullptr;
  std::uint64_t done_tag_base_ = 0;
  bool done_at_once_ = false;  // notify_rank_done_at_once
  Mode mode_ = Mode::Full;
  bool decided_ = false;
  std::uint32_t joined_ = 0;
  SimulationPath path_;
  std::unique_ptr<PeriodJump> jump_;
  const EventHandler* party_ = nullptr;  // passed with every message (RingFoldModel::party)
  // Embedded: per channel its model and which of its positions are done; per rank, channels done.
  std::vector<std::unique_ptr<RingCollective>> models_;
  std::vector<std::unique_ptr<RingCollective>> ghosts_;  // the smaller chunks' models, if any
  std::vector<std::vector<std::uint8_t>> class_done_;
  std::vector<std::vector<Time>> upper_finish_, lower_finish_;  // per channel and position simulated
  std::vector<std::uint32_t> channels_done_;
  EventHandler* group_ = nullptr;
};

}  // namespace hybridsim::sim

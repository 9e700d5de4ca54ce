// sim::EmbeddedRing — a ring folded together with the other rings that share its links
// (sim/README.md, "Embedding rings that share links"; the planner is sim/fast/ring_embedding.h).
// Per channel, the first `window` positions are simulated, live on the real queue and network, as
// a RingSegment whose routes run over the links that stand for their links' classes; position p of
// the ring repeats position p mod window. Chunks of unequal size are simulated at the larger size;
// then a second segment at the smaller size runs on `ghost` (a network of its own on the same
// queue, started with the first) to bound the first's lead (bound_holds()). The group is told
// (on_event(0)) when the ring is done. It holds its plan as a plain RingCollective, which counts
// its messages and bytes.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/fast/fold_cost.h"
#include "sim/ring_collective.h"

namespace hybridsim::sim {

struct RingEmbedding {
  EventHandler* group = nullptr;
  std::vector<std::uint32_t> window;                     // per channel
  std::vector<std::vector<std::vector<LinkId>>> routes;  // per channel, per simulated position
  Network* ghost = nullptr;
};

class EmbeddedRing final : public Collective {
 public:
  // `ring`: the plain ring of the plan, not started (FoldedRing::take_ring()).
  EmbeddedRing(std::unique_ptr<RingCollective> ring, RingEmbedding embedding);
  EmbeddedRing(const EmbeddedRing&) = delete;
  EmbeddedRing& operator=(const EmbeddedRing&) = delete;

  void notify_rank_done(EventHandler& handler, std::uint64_t tag_base) override;
  void start(std::uint32_t rank) override;
  std::uint32_t ranks() const override { return n_; }
  bool is_done() const override { return ranks_done_ == n_; }
  Time rank_finish_time(std::uint32_t rank) const override { return rank_[rank].finish; }
  Time finish_time() const override { return latest_finish(rank_); }
  std::uint64_t messages_sent() const override { return ring_->messages_sent(); }
  std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const override {
    return ring_->bytes_by_link_kind();
  }
  SimulationPath simulation_path() const override { return path_; }
  SimulationCost full_cost() const override { return ring_->full_cost(); }
  bool may_fold() const override { return true; }
  // Its segments' events on the step's queue (sim/fast/fold_cost.h): `window` positions per channel,
  // twice with chunks of unequal size (the ghost's too); every step, or, where its group jumps
  // (set_jumping), what the jump needs per phase plus a period's steps again for each other event
  // expected while it runs (expect_interruptions), at most every step.
  ExpectedEvents expected_events() const override;
  // Its group's segments jump over periodic steps (sim/fast/ring_embedding.cpp, attach_jumps).
  void set_jumping() { jumping_ = true; }
  // About how many events of other parties (the GPUs' kernels) fall within its run: each ends a
  // jump, and the next comes only once the state has repeated a period later.
  void expect_interruptions(std::uint64_t events) { interruptions_ = events; }
  // A segment's position finished (called within that event: notify_rank_done_at_once).
  void on_event(std::uint64_t tag) override;

  const RingCollective& ring() const { return *ring_; }
  // Positions simulated in channel c (position p repeats p mod that).
  std::uint32_t window(std::uint32_t c) const { return static_cast<std::uint32_t>(class_done_[c].size()); }
  // With chunks of unequal size, once done: whether the larger size's finishes lead the smaller's
  // by at most 0.1% of the collective's time (then simulation_path().bound says by how much).
  bool bound_holds();
  // Its segments (`ghost`: the smaller chunks', if any), for the group's jumps (sim/fast/ring_jump.h);
  // the leader is channel 0's.
  void append_segments(bool ghost, std::vector<RingCollective*>& rings,
                       std::vector<RingCollective*>& leaders) const;

 private:
  void add_channel(std::uint32_t c, std::vector<std::vector<LinkId>> routes, std::uint32_t w, Network* ghost);
  void segment_rank_done(std::uint32_t c, std::uint32_t q);
  void ghost_rank_done(std::uint32_t c, std::uint32_t q);
  void finish_rank(std::uint32_t rank);  // at its channels' latest finish
  void check_join_times();

  std::unique_ptr<RingCollective> ring_;
  Network& network_;
  EventQueue& queue_;
  std::uint32_t n_;
  EventHandler* group_;
  std::vector<RankProgress> rank_;
  std::uint32_t joined_ = 0;
  std::uint32_t ranks_done_ = 0;
  SimulationPath path_;
  EventHandler* done_handler_ = nullptr;
  std::uint64_t done_tag_base_ = 0;
  // Per channel its segment, the smaller chunks' (if any), which positions are done, and their
  // finishes at either size; per rank, channels done.
  std::vector<std::unique_ptr<RingCollective>> segments_;
  std::vector<std::unique_ptr<RingCollective>> ghosts_;
  std::vector<std::vector<std::uint8_t>> class_done_;
  std::vector<std::vector<Time>> upper_finish_, lower_finish_;
  std::vector<std::uint32_t> channels_done_;
  bool jumping_ = false;
  std::uint64_t interruptions_ = 0;
};

}  // namespace hybridsim::sim

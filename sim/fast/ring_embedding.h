// Planning rings that share links to be folded together (sim/README.md, "Embedding rings that share
// links"); the rings are sim/fast/embedded_ring.h.
// A ring folds alone only if no other traffic crosses its links. In hybrid steps with mp 4 on
// DGX-1 the data-parallel rings of two model-parallel stages leave each machine through one NIC, so
// neither folds alone. embed_coupled_rings finds such rings (those of different routes sharing a
// link) and, where the whole set is symmetric under a shift by one window of positions (the same
// machine-to-machine step for every ring), folds them together: per ring and channel only the
// positions of the first window are simulated, live on the real queue, and every link stands for
// its class (the links the shift carries it to), so that rings sharing a link in the full network
// share the link that stands for it. Each ring's last simulated position sends, over the route to
// the next window, to its first (which repeats that window). The group claims every link of every
// route; anything else crossing them marks the network interfered (the caller runs again in full).
//   EmbedPlan plan = embed_coupled_rings(collectives, network);  // before any starts
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/network.h"
#include "sim/collective.h"
#include "sim/fast/ring_jump.h"
#include "sim/work_progress.h"

namespace hybridsim::sim {

class EmbeddedRing;

// The claimant of a set of embedded rings' links. When its last ring is done it gives each link
// the use of the link that stood for it (they saw the same traffic) and releases its claims.
class EmbeddedRingGroup final : public EventHandler {
 public:
  EmbeddedRingGroup(Network& network, std::uint32_t rings, std::vector<LinkId> links,
                    std::vector<std::pair<LinkId, LinkId>> copies)
      : network_(network), rings_left_(rings), links_(std::move(links)), copies_(std::move(copies)) {}
  void on_event(std::uint64_t tag) override;  // one of its rings is done
  const std::vector<LinkId>& links() const { return links_; }
  // The links its models use: those claimed that stand for themselves.
  std::vector<LinkId> simulated_links() const;
  // One of its rings: its segments (and its ghosts, the smaller chunks', if any) are the group's.
  void add_ring(EmbeddedRing& ring);
  const std::vector<EmbeddedRing*>& rings() const { return rings_; }
  // The segments (`ghost`: the ghosts) of its rings; `leaders`: each ring's first.
  const std::vector<RingCollective*>& segments(bool ghost) const { return segments_[ghost]; }
  const std::vector<RingCollective*>& leaders(bool ghost) const { return leaders_[ghost]; }
  // Its rings' segments jump together over periodic steps where they may (sim/fast/ring_jump.h), and
  // so do the smaller chunks' on the ghost network.
  void add_jump(std::unique_ptr<RingJump> jump) { jumps_.push_back(std::move(jump)); }
  bool jumps() const { return !jumps_.empty(); }

 private:
  Network& network_;
  std::uint32_t rings_left_;
  std::vector<LinkId> links_;                        // claimed
  std::vector<std::pair<LinkId, LinkId>> copies_;    // (the link standing for it, link)
  std::vector<EmbeddedRing*> rings_;
  std::vector<RingCollective*> segments_[2], leaders_[2];
  std::vector<std::unique_ptr<RingJump>> jumps_;
};

struct EmbedPlan {
  std::vector<std::unique_ptr<EmbeddedRingGroup>> groups;
  std::unique_ptr<Network> ghost;  // where the smaller chunks' models run, if any ring has them
  std::uint32_t rings = 0;         // embedded
  bool bounded = false;            // some embedded ring's chunks are of unequal size (fast path bounded)
  // About `events` of other parties (a simulated GPU's kernels) will fall within the run of each
  // group that jumps: each of its rings expects its share (EmbeddedRing::expect_interruptions), as a
  // group's rings, of one plan on the same links, run mostly one after another.
  void expect_interruptions(std::uint64_t events) const;
};

// Embeds, before any rank starts, the rings of `collectives` (FoldedRings, sim/fast/folded_ring.h)
// that share links with rings of other routes and fold together exactly, or, with chunks of unequal
// size under FastPath::Bounded, at the larger size (check EmbeddedRing::bound_holds() once they are
// done): each is replaced in `collectives` by an EmbeddedRing. The plan must outlive their run.
// `progress` (null: nobody) is told ring by ring of the rings that may embed (sim/work_progress.h):
// at 16,384 GPUs embedding them takes seconds.
EmbedPlan embed_coupled_rings(std::vector<std::unique_ptr<Collective>>& collectives, Network& network,
                              WorkProgress* progress = nullptr);

}  // namespace hybridsim::sim

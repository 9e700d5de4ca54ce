// sim::FoldedRing — a ring collective simulated on the representatives of its equivalent ranks
// (sim/README.md, "Folding"). It holds the plan as a plain RingCollective, which it falls back to:
// at the first join it asks whether folding is exact here (refusal(): a query, it claims nothing);
// if not, it says why and forwards every join to the plain ring, whose messages then travel the
// network as they would without it. If so, it claims the ring's links (sim/fast/link_claims.h),
// waits for every rank, simulates each channel's repeating positions on a queue and links of their
// own (a RingSegment, which may jump over periodic steps, sim/fast/ring_jump.h), and copies the
// result to the positions they stand for.
//   auto ring = make_ring_collective(network, op, n, channels, size, config);  // sim/fast/fast_path.h
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/fast/fold_cost.h"
#include "sim/ring_collective.h"

namespace hybridsim::sim {

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

// Whether two routes have links of the same timing (kind, bandwidth, latency), hop by hop.
inline bool same_route_timing(const std::vector<LinkId>& a, const std::vector<LinkId>& b,
                              const LinkTable& links) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_timing(links[a[i]], links[b[i]])) return false;
  return true;
}

class FoldedRing final : public Collective {
 public:
  FoldedRing(Network& network, CollectiveOp op, std::uint32_t ranks, std::vector<RingChannel> channels,
             Bytes size, CollectiveConfig config);
  FoldedRing(const FoldedRing&) = delete;
  FoldedRing& operator=(const FoldedRing&) = delete;

  // Why a ring of this op and size may never fold under `config` (the fast path off, a broadcast,
  // a single rank), or null: the factory then builds a plain ring.
  static const char* plan_refusal(CollectiveOp op, std::uint32_t ranks, const CollectiveConfig& config);
  // Why it would be simulated message by message if it started now, or null. Claims nothing.
  const char* refusal();
  // refusal()'s reasons its plan alone gives (plan_refusal, two ring edges on one link), or null:
  // known before any rank joins (a folded step's estimate, analysis/step/).
  const char* plan_only_refusal() const;
  // refusal()'s reason where a link of its routes is busy with other messages as it starts: what a
  // folded step's estimate that foresees that (analysis/step/fold_forecast.h) says the run would.
  static const char* busy_refusal() { return "its links are still busy"; }
  // Takes `earlier`'s answer to whether two ring edges share a link, if it has one and the two
  // rings take the same routes (same_ring_routes): the caller that asks plan_only_refusal() of a
  // step's rings in turn (analysis/step/) hands each the previous one's. Whether it took it.
  bool share_edge_answer(const FoldedRing& earlier);

  void notify_rank_done(EventHandler& handler, std::uint64_t tag_base) override;
  void start(std::uint32_t rank) override;
  std::uint32_t ranks() const override { return n_; }
  bool is_done() const override { return ranks_.empty() ? ring_->is_done() : ranks_done_ == n_; }
  Time rank_finish_time(std::uint32_t rank) const override {
    return ranks_.empty() ? ring_->rank_finish_time(rank) : ranks_[rank].finish;
  }
  Time finish_time() const override;
  std::uint64_t messages_sent() const override { return ring_->messages_sent(); }
  std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const override {
    return ring_->bytes_by_link_kind();
  }
  SimulationPath simulation_path() const override { return folded_ ? path_ : ring_->simulation_path(); }
  SimulationCost full_cost() const override { return ring_->full_cost(); }
  bool may_fold() const override;
  // Its models' events (sim/fast/fold_cost.h): per channel the period of its plan, the channel in
  // full where chunks of unequal size lead under auto; in full if it may not fold.
  ExpectedEvents expected_events() const override;
  void on_event(std::uint64_t rank) override;  // a folded rank's finish

  // The plain ring of its plan. Before any rank joins, an embedding (sim/fast/embedded_ring.h) may
  // take it over; whether it may: no rank joined, nothing observes its messages.
  const RingCollective& ring() const { return *ring_; }
  bool may_embed() const;
  std::unique_ptr<RingCollective> take_ring();

 private:
  struct ModelRun;
  void claim_links();                      // of every route, once refusal() found none
  void release_links(std::uint32_t rank);  // of the routes leaving `rank`; every rank's if n_
  void join(std::uint32_t rank);
  std::uint32_t period_of(std::uint32_t c) const;
  ModelRun run_model(std::uint32_t c, std::uint32_t period, std::vector<std::int64_t> chunks) const;
  // Channel c folded on `period` positions (the chunks' sizes checked), or in full on its own queue.
  ModelRun run_channel(std::uint32_t c, std::uint32_t& period, std::string_view& reason);
  void run_folded();
  void apply_model(std::uint32_t c, std::uint32_t period, const ModelRun& run, std::vector<Time>& finish);

  std::unique_ptr<RingCollective> ring_;
  Network& network_;
  EventQueue& queue_;
  std::uint32_t n_;
  bool decided_ = false;  // at the first join
  // ring_edges_share_a_link(*ring_) once known (-1: not yet): it sorts every link of every route, and
  // a step asks it of each ring twice (plan_only_refusal, expected_events): asked once, the 16,384-GPU
  // default run (README) took 0.93-0.94 s of CPU where it took 1.00-1.04. Its buckets' rings, of one
  // plan, take it from the first (share_edge_answer).
  mutable std::int8_t shares_edges_ = -1;
  bool full_ = false;     // refused: the plain ring runs
  bool folded_ = false;   // every rank joined and the result was applied
  std::uint32_t joined_ = 0;
  std::uint32_t ranks_done_ = 0;
  // Per rank while it folds (none if it never started, or fell back): when it joined and finishes.
  struct Joined {
    Time start;
    Time finish;
    bool started = false;
  };
  std::vector<Joined> ranks_;
  SimulationPath path_;
  EventHandler* done_handler_ = nullptr;
  std::uint64_t done_tag_base_ = 0;
};

}  // namespace hybridsim::sim

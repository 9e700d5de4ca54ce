// The embedded ring (sim/fast/embedded_ring.h; sim/README.md, "Embedding rings that share links"):
// its segments run on the real queue and network as the group's planner set them up; each rank
// finishes when every channel's position it repeats has.
#include "sim/fast/embedded_ring.h"

#include <algorithm>
#include <string>

#include "sim/error.h"
#include "sim/fast/fold_cost.h"
#include "sim/fast/link_claims.h"

namespace hybridsim::sim {

namespace {

// Tags of the segments' done notifications: (which << 32) | (channel · N + position).
constexpr std::uint64_t kSegment = 0, kGhost = 1;

}  // namespace

EmbeddedRing::EmbeddedRing(std::unique_ptr<RingCollective> ring, RingEmbedding e)
    : ring_(std::move(ring)),
      network_(ring_->network()),
      queue_(network_.queue()),
      n_(ring_->ranks()),
      group_(e.group),
      rank_(n_),
      path_(ring_->simulation_path()) {
  const std::uint32_t channels = ring_->channel_count();
  if (e.group == nullptr || e.window.size() != channels || e.routes.size() != channels)
    throw InternalError("a ring is embedded once, before it starts, with a window per channel");
  path_.simulated = 0;
  for (std::uint32_t c = 0; c < channels; ++c) add_channel(c, std::move(e.routes[c]), e.window[c], e.ghost);
  channels_done_.assign(n_, 0);
  path_.folded = true;
  path_.reason = ring_->uniform_chunks() ? std::string_view() : "bounded: chunks of unequal size";
  path_.unit = "ring positions, with the rings sharing its links";
}

void EmbeddedRing::add_channel(std::uint32_t c, std::vector<std::vector<LinkId>> routes, std::uint32_t w,
                               Network* ghost) {
  if (w == 0 || w >= n_ || n_ % w != 0 || routes.size() != w)
    throw InternalError("an embedded ring's window must divide it");
  const std::vector<std::int64_t>& chunks = ring_->chunk_bytes(c);
  const auto [small, large] = std::minmax_element(chunks.begin(), chunks.end());
  std::vector<RingChannel> plans(1);
  for (std::uint32_t q = 0; q < w; ++q) plans[0].order.push_back(q);
  plans[0].routes = std::move(routes);
  CollectiveConfig config = ring_->config();
  config.fast_path = FastPath::Off;
  const std::uint64_t tags = std::uint64_t{c} * n_;
  if (*small != *large && ghost == nullptr)
    throw InternalError("an embedded ring of unequal chunks needs a ghost network");
  const std::uint32_t per_chunk = ring_->messages_per_chunk();
  if (ghost != nullptr) {
    ghosts_.push_back(
        std::make_unique<RingCollective>(*ghost, ring_->op(), w, plans, ring_->size(), config,
                                         RingSegment{n_, per_chunk, std::vector<std::int64_t>(w, *small)}));
    ghosts_.back()->notify_rank_done_at_once(*this, (kGhost << 32) | tags);
  } else {
    ghosts_.emplace_back();
  }
  segments_.push_back(std::make_unique<RingCollective>(
      network_, ring_->op(), w, std::move(plans), ring_->size(), config,
      RingSegment{n_, per_chunk, std::vector<std::int64_t>(w, *large), group_}));
  segments_.back()->notify_rank_done_at_once(*this, (kSegment << 32) | tags);
  LinkClaims& claims = LinkClaims::of(network_);
  for (const std::vector<LinkId>& route : segments_.back()->channel_plan(0).routes)
    claims.add_route(route, this);
  class_done_.emplace_back(w, 0);
  upper_finish_.emplace_back(w, Time::zero());
  lower_finish_.emplace_back(w, Time::zero());
  ring_->count_channel_sent(c);
  path_.simulated = std::max(path_.simulated, w);
}

ExpectedEvents EmbeddedRing::expected_events() const {
  // Live, a segment runs every step. Jumping, the jump ends before each other party's event (a
  // kernel's end on the step's queue) and comes again only once the state has been seen to repeat
  // a period (at most `window` steps) after it: about window + 1 steps per such event, all of them
  // at most. Counted as every step, the 65,536-GPU DGX H100 step's one-family group said 692 M
  // events where 6.49 M ran (its first ring beside the backward pass's kernels took 4.9 M).
  std::uint64_t live = 0, jumping = 0;
  for (std::uint32_t c = 0; c < segments_.size(); ++c) {
    const std::uint64_t copies = ghosts_[c] != nullptr ? 2 : 1;
    const WindowCosts costs = ring_window_costs(*ring_, c, window(c));
    const std::uint64_t every = costs.live.events;
    const std::uint64_t alone = costs.alone.events;
    const std::uint64_t per_step = every / std::max<std::uint64_t>(1, ring_->steps());
    live += copies * every;
    jumping += copies * std::min(every, alone + interruptions_ * (window(c) + 1) * per_step);
  }
  // Each rank's done is an event of the step's queue too (finish_rank), once the step is told.
  return {.queue = (jumping_ ? jumping : live) + n_};
}

void EmbeddedRing::append_segments(bool ghost, std::vector<RingCollective*>& rings,
                                   std::vector<RingCollective*>& leaders) const {
  const auto& segments = ghost ? ghosts_ : segments_;
  if (segments[0] == nullptr) return;
  for (const auto& segment : segments) rings.push_back(segment.get());
  leaders.push_back(segments[0].get());
}

void EmbeddedRing::notify_rank_done(EventHandler& handler, std::uint64_t tag_base) {
  done_handler_ = &handler;
  done_tag_base_ = tag_base;
}

void EmbeddedRing::start(std::uint32_t rank) {
  RankProgress& rs = rank_[rank];
  if (rs.started) throw InternalError("rank " + std::to_string(rank) + " started twice");
  rs.started = true;
  rs.start = queue_.now();
  rs.finish = rs.start;
  bool late = false;
  for (std::uint32_t c = 0; c < segments_.size(); ++c) {
    const std::uint32_t p = ring_->position_of(c, rank);
    const std::uint32_t w = window(c);
    if (p < w) {
      segments_[c]->start(p);
      if (ghosts_[c] != nullptr) ghosts_[c]->start(p);
    } else if (class_done_[c][p % w] != 0) {
      late = true;
      rs.finish = max(rs.finish, upper_finish_[c][p % w]);
      ++channels_done_[rank];
    }
  }
  // It repeats a position that finished before it joined: the symmetry did not hold.
  if (late) LinkClaims::of(network_).mark_interfered();
  if (channels_done_[rank] == segments_.size()) finish_rank(rank);
  if (++joined_ == n_) check_join_times();
}

void EmbeddedRing::check_join_times() {
  // Each position repeats the one a window before it only if it joined at the same time.
  for (std::uint32_t c = 0; c < segments_.size(); ++c) {
    const RingChannel& plan = ring_->channel_plan(c);
    const std::uint32_t w = window(c);
    for (std::uint32_t p = w; p < n_; ++p)
      if (rank_[plan.order[p]].start != rank_[plan.order[p % w]].start) {
        LinkClaims::of(network_).mark_interfered();
        return;
      }
  }
}

void EmbeddedRing::on_event(std::uint64_t tag) {
  const auto low = static_cast<std::uint32_t>(tag & 0xffffffffu);
  if ((tag >> 32) == kGhost)
    ghost_rank_done(low / n_, low % n_);
  else
    segment_rank_done(low / n_, low % n_);
}

void EmbeddedRing::ghost_rank_done(std::uint32_t c, std::uint32_t q) {
  lower_finish_[c][q] = ghosts_[c]->rank_finish_time(q);
}

bool EmbeddedRing::bound_holds() {
  // As a folded ring's (folded_ring.cpp): every time is a max of sums of service times, each growing
  // with its message's bytes; the ghosts of every ring of the group share the ghost network's
  // links as the rings share the real ones, and start when they do.
  Time lead, span;
  for (std::uint32_t c = 0; c < segments_.size(); ++c) {
    if (ghosts_[c] == nullptr) continue;
    if (!ghosts_[c]->is_done()) return false;
    for (std::uint32_t q = 0; q < upper_finish_[c].size(); ++q) {
      const Time upper = upper_finish_[c][q];
      const Time lower = lower_finish_[c][q];
      lead = max(lead, max(upper, lower) - min(upper, lower));
      span = max(span, lower - rank_[ring_->channel_plan(c).order[q]].start);
    }
  }
  path_.bound = lead;
  return lead.ps() * 1000 <= span.ps();
}

// Called within the segment's event that completes position q (notify_rank_done_at_once): each
// rank at a position it stands for is told then, and its done scheduled at its finish, as in full.
void EmbeddedRing::segment_rank_done(std::uint32_t c, std::uint32_t q) {
  class_done_[c][q] = 1;
  const Time finish = segments_[c]->rank_finish_time(q);
  upper_finish_[c][q] = finish;
  const std::uint32_t w = window(c);
  for (std::uint32_t p = q; p < n_; p += w) {
    const std::uint32_t r = ring_->channel_plan(c).order[p];
    if (!rank_[r].started) continue;
    rank_[r].finish = max(rank_[r].finish, finish);
    if (++channels_done_[r] == segments_.size()) finish_rank(r);
  }
}

void EmbeddedRing::finish_rank(std::uint32_t rank) {
  RankProgress& rs = rank_[rank];
  rs.done = true;
  rs.receives_left = 0;
  rs.sends_left = 0;
  rs.finish = max(rs.finish, queue_.now());
  if (done_handler_ != nullptr) queue_.schedule_at(rs.finish, *done_handler_, done_tag_base_ + rank);
  if (++ranks_done_ == n_) group_->on_event(0);
}

}  // namespace hybridsim::sim

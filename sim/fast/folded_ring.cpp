// Folding a ring collective onto the representatives of its equivalent ranks (sim/README.md,
// "Folding"). Ring positions p and p + P behave alike when, for every p, the routes leaving them
// have the same links (kind, bandwidth, latency, hop by hop), the same protocol delay, and their
// ranks joined at the same time: position p then sees exactly the timeline of position p mod P,
// provided no two ring edges share a link and nothing else crosses them while the ring runs. So
// P positions per channel are simulated, message by message, on a queue and links of their own,
// and the result (each rank's finish, each link's use) is copied to the positions they stand for.
#include "sim/fast/folded_ring.h"

#include <algorithm>
#include <string>

#include "sim/error.h"
#include "sim/fast/fold_cost.h"
#include "sim/fast/link_claims.h"
#include "sim/fast/rank_starter.h"
#include "sim/fast/ring_jump.h"
#include "sim/model_progress.h"

namespace hybridsim::sim {
namespace {
constexpr std::string_view kUnequalChunks = "chunks of unequal size change its timing";
constexpr const char* kSharedEdges = "two ring edges share a link";

// Whether a trace records the ring's messages: it then runs in full (refusal()).
bool observed(const RingCollective& ring, const Network& network) {
  return ring.config().observer != nullptr || network.observer() != nullptr;
}
}  // namespace

struct FoldedRing::ModelRun {
  std::vector<Time> finish;             // per model position
  std::vector<std::size_t> first_link;  // per model position: its route's first model link
  std::vector<LinkCounters> use;        // per model link
  std::vector<Time> busy_until;         // per model link
  std::uint64_t events = 0;
  std::uint64_t jumped_steps = 0;
  std::uint64_t most_in_flight = 0;  // on its own network at once; of the channel's runs, one after another
};

FoldedRing::FoldedRing(Network& network, CollectiveOp op, std::uint32_t ranks,
                       std::vector<RingChannel> channels, Bytes size, CollectiveConfig config)
    : ring_(std::make_unique<RingCollective>(network, op, ranks, std::move(channels), size, config)),
      network_(network),
      queue_(network.queue()),
      n_(ranks) {}

const char* FoldedRing::plan_refusal(CollectiveOp op, std::uint32_t ranks, const CollectiveConfig& config) {
  if (config.fast_path == FastPath::Off) return "fast path off";
  if (op == CollectiveOp::Broadcast) return "a broadcast (its root breaks the symmetry)";
  if (ranks < 2) return "a single rank";
  return nullptr;
}

bool FoldedRing::may_fold() const {
  // A traced run's rings all run in full (try_fold), and are counted so up front.
  return plan_refusal(ring_->op(), n_, ring_->config()) == nullptr && !observed(*ring_, network_);
}

const char* FoldedRing::plan_only_refusal() const {
  if (const char* why = plan_refusal(ring_->op(), n_, ring_->config())) return why;
  if (shares_edges_ < 0) shares_edges_ = ring_edges_share_a_link(*ring_) ? 1 : 0;
  return shares_edges_ != 0 ? kSharedEdges : nullptr;
}

bool FoldedRing::share_edge_answer(const FoldedRing& earlier) {
  if (shares_edges_ >= 0 || earlier.shares_edges_ < 0 || !same_ring_routes(*ring_, *earlier.ring_))
    return false;
  shares_edges_ = earlier.shares_edges_;
  return true;
}

bool FoldedRing::may_embed() const {
  return may_fold() && !decided_;
}

std::unique_ptr<RingCollective> FoldedRing::take_ring() {
  if (!may_embed()) throw InternalError("a ring is taken over once, before it starts");
  decided_ = true;
  return std::move(ring_);
}

const char* FoldedRing::refusal() {
  if (const char* why = plan_refusal(ring_->op(), n_, ring_->config())) return why;
  if (observed(*ring_, network_)) return "a trace records every message";
  // Every link of every route must be used by one ring edge only, and idle and unclaimed, or held
  // by one folded collective (the previous bucket on this ring, still finishing elsewhere) and
  // promised to no other: claim_links() then has it handed over when that holder's rank there
  // finishes, and each rank checks as it joins that its links are ours and idle (join()).
  // A claim that ended by now (a folded tree's) is no claim: the ledger passes it on first.
  LinkClaims& claims = LinkClaims::of(network_);
  std::vector<std::uint8_t> seen(network_.links().size(), 0);
  for (std::uint32_t c = 0; c < ring_->channel_count(); ++c)
    for (const auto& route : ring_->channel_plan(c).routes)
      for (const LinkId l : route) {
        claims.settle(l, queue_.now());
        const bool held = claims.holder(l) != nullptr;
        if (seen[l] != 0) return kSharedEdges;
        if (!held && !network_.is_idle(l)) return busy_refusal();
        if (held && claims.promised(l) != nullptr) return "two other folded collectives hold its links";
        seen[l] = 1;
      }
  return nullptr;
}

void FoldedRing::claim_links() {
  LinkClaims& claims = LinkClaims::of(network_);
  for (std::uint32_t c = 0; c < ring_->channel_count(); ++c)
    for (const auto& route : ring_->channel_plan(c).routes)
      for (const LinkId l : route) {
        if (claims.holder(l) == nullptr)
          claims.claim(l, this);
        else
          claims.promise(l, this);
      }
}

void FoldedRing::release_links(std::uint32_t rank) {
  LinkClaims& claims = LinkClaims::of(network_);
  for (std::uint32_t c = 0; c < ring_->channel_count(); ++c) {
    const std::uint32_t first = rank == n_ ? 0 : ring_->position_of(c, rank);
    const std::uint32_t last = rank == n_ ? n_ : first + 1;
    for (std::uint32_t p = first; p < last; ++p)
      for (const LinkId l : ring_->channel_plan(c).routes[p]) {
        claims.withdraw(l, this);
        claims.release(l, this);
      }
  }
}

void FoldedRing::notify_rank_done(EventHandler& handler, std::uint64_t tag_base) {
  done_handler_ = &handler;
  done_tag_base_ = tag_base;
  ring_->notify_rank_done(handler, tag_base);
}

void FoldedRing::start(std::uint32_t rank) {
  if (!decided_) {
    decided_ = true;
    if (const char* why = refusal(); why != nullptr) {
      full_ = true;
      ring_->explain(why);
    } else {
      claim_links();
      ranks_.resize(n_);
    }
  }
  if (full_) {
    ring_->start(rank);
    return;
  }
  Joined& rs = ranks_[rank];
  if (rs.started) throw InternalError("rank " + std::to_string(rank) + " started twice");
  rs.started = true;
  rs.start = queue_.now();
  rs.finish = rs.start;
  join(rank);  // nothing can arrive before every rank has sent
}

void FoldedRing::join(std::uint32_t rank) {
  // The fold assumes each rank's outgoing links are free when it joins: claimed by this collective
  // (a promised one handed over by now) and idle. If not, the previous holder still runs there, its
  // traffic would meet ours, and the step must be simulated again in full.
  LinkClaims& claims = LinkClaims::of(network_);
  for (std::uint32_t c = 0; c < ring_->channel_count(); ++c)
    for (const LinkId l : ring_->channel_plan(c).routes[ring_->position_of(c, rank)]) {
      if (claims.holder(l) != this && claims.promised(l) == this && claims.end(l) <= queue_.now())
        claims.hand_over(l);  // the holder's claim has ended by time: hand it over
      if (claims.holder(l) != this || !network_.is_idle(l)) claims.mark_interfered();
    }
  if (++joined_ == n_) run_folded();
}

std::uint32_t FoldedRing::period_of(std::uint32_t c) const {
  const RingChannel& plan = ring_->channel_plan(c);
  const auto alike = [&](std::uint32_t p, std::uint32_t q) {
    return ranks_[plan.order[p]].start == ranks_[plan.order[q]].start &&
           ring_positions_alike(*ring_, c, p, q);
  };
  return smallest_period(n_, alike);
}

ExpectedEvents FoldedRing::expected_events() const {
  // Busy links and join times are only known as it starts: taken free and alike. may_fold() is
  // plan_only_refusal()'s plan_refusal() and the trace: each asked once.
  if (observed(*ring_, network_) || plan_only_refusal() != nullptr)
    return {.queue = ring_->full_cost().events};
  SimulationCost cost;
  for (std::uint32_t c = 0; c < ring_->channel_count(); ++c) {
    // run_channel(): one model at the larger chunks; with unequal chunks also one at the smaller,
    // and under auto (where they lead) the channel in full instead, whose events alone are counted.
    const std::uint32_t period = ring_plan_period(*ring_, c);
    const auto [small, large] =
        std::minmax_element(ring_->chunk_bytes(c).begin(), ring_->chunk_bytes(c).end());
    const bool bounded = ring_->config().fast_path == FastPath::Bounded;
    if (*small != *large && !bounded) {
      cost += ring_window_cost(*ring_, c, n_, Jumps::Alone);
      continue;
    }
    cost += ring_window_cost(*ring_, c, period, Jumps::Alone);
    if (*small != *large && period < n_) cost += ring_window_cost(*ring_, c, period, Jumps::Alone);
  }
  // Each rank's done is an event of the step's queue (run_folded): 720,896 of the 867,788 events
  // the 65,536-GPU dp 32,768 x mp 2 step runs, once its models jump.
  return {.queue = n_, .models = cost.events};
}

FoldedRing::ModelRun FoldedRing::run_model(std::uint32_t c, std::uint32_t period,
                                           std::vector<std::int64_t> chunks) const {
  const RingChannel& real = ring_->channel_plan(c);
  ModelRun out;
  LinkTable links;
  std::vector<RingChannel> plans(1);
  for (std::uint32_t p = 0; p < period; ++p) {
    plans[0].order.push_back(p);
    out.first_link.push_back(links.size());
    std::vector<LinkId> route;
    for (const LinkId l : real.routes[p]) route.push_back(links.add(network_.links()[l]));
    plans[0].routes.push_back(std::move(route));
  }
  EventQueue queue;
  Network network(queue, links, network_.switching());
  CollectiveConfig config = ring_->config();
  config.fast_path = FastPath::Off;
  config.observer = nullptr;
  // Charged here, before its first message, with the steps it runs where it jumps (fold_cost.h), as
  // the step's estimate counts it: charged at its start as a ring in full, every step of every
  // position, each of the 16,384-GPU DGX-1 step's 84 models charged 2.8 M events where the whole
  // step ran 1.27 M, refusing it at --max-events 100000000 and telling "about 7 min left" of a 4-s
  // run (issue 31).
  SimulationBudget* budget = config.budget;
  config.budget = nullptr;
  RingCollective model(network, ring_->op(), period, std::move(plans), ring_->size(), config,
                       RingSegment{n_, ring_->messages_per_chunk(), std::move(chunks), nullptr});
  if (budget != nullptr)
    budget->charge(ring_window_cost(*ring_, c, period, Jumps::Alone), model.budget_cause());
  RingJump jump(model);  // alone on its queue: it may jump over periodic stretches of its steps
  if (jump.applies()) jump.attach();
  RankStarter starter(model);
  for (std::uint32_t p = 0; p < period; ++p) queue.schedule_at(ranks_[real.order[p]].start, starter, p);
  run_counted(queue, config.model_progress);
  if (!model.is_done()) throw InternalError("a folded ring's model did not finish");
  for (std::uint32_t p = 0; p < period; ++p) out.finish.push_back(model.rank_finish_time(p));
  for (LinkId l = 0; l < links.size(); ++l) {
    out.use.push_back(network.counters(l));
    out.busy_until.push_back(network.busy_until(l));
  }
  out.most_in_flight = network.most_messages_in_flight();
  out.events = queue.events_processed() - period;  // the starters stand for the real ranks' joins
  out.jumped_steps = jump.jumped_steps();
  return out;
}

FoldedRing::ModelRun FoldedRing::run_channel(std::uint32_t c, std::uint32_t& period,
                                             std::string_view& reason) {
  const std::vector<std::int64_t>& chunks = ring_->chunk_bytes(c);
  period = period_of(c);
  ModelRun run;
  if (period == n_) {
    reason = "no repeating pattern of ring edges and join times";
    return run_model(c, n_, chunks);
  }
  const auto [small, large] = std::minmax_element(chunks.begin(), chunks.end());
  run = run_model(c, period, std::vector<std::int64_t>(period, *large));
  if (*small == *large) return run;
  // Every time in a ring is a max of sums of service times, each growing with its message's
  // bytes: all chunks at the smaller size give a lower bound, at the larger an upper one.
  const ModelRun lower = run_model(c, period, std::vector<std::int64_t>(period, *small));
  Time lead, span;
  for (std::uint32_t p = 0; p < period; ++p) {
    lead = max(lead, run.finish[p] - lower.finish[p]);
    span = max(span, lower.finish[p] - ranks_[ring_->channel_plan(c).order[p]].start);
  }
  const bool within = lead.ps() * 1000 <= span.ps();
  const bool bounded = ring_->config().fast_path == FastPath::Bounded && within;
  if (lead > Time::zero() && !bounded) {
    period = n_;
    reason = kUnequalChunks;
    // Auto: an unfolded path's bound is what bounded would have folded it within (sim/README.md,
    // "Folding"), for the run to say; the layers above word it.
    if (within) path_.bound = max(path_.bound, lead);
    ModelRun full = run_model(c, n_, chunks);
    full.most_in_flight = std::max({full.most_in_flight, run.most_in_flight, lower.most_in_flight});
    return full;
  }
  path_.bound = max(path_.bound, lead);
  run.most_in_flight = std::max(run.most_in_flight, lower.most_in_flight);
  run.events += lower.events;
  run.jumped_steps += lower.jumped_steps;
  return run;
}

void FoldedRing::run_folded() {
  std::vector<Time> finish(n_, Time::zero());
  path_ = ring_->simulation_path();
  path_.simulated = 0;
  std::string_view reason;
  for (std::uint32_t c = 0; c < ring_->channel_count(); ++c) {
    std::uint32_t period = n_;
    const ModelRun run = run_channel(c, period, reason);
    apply_model(c, period, run, finish);
    path_.simulated = std::max(path_.simulated, period);
    path_.private_events += run.events;
    path_.jumped_steps += run.jumped_steps;
    path_.model_in_flight = std::max(path_.model_in_flight, run.most_in_flight);
  }
  path_.folded = path_.simulated < n_;
  path_.reason = path_.folded ? std::string_view() : reason;
  if (!path_.folded && reason != kUnequalChunks) path_.bound = Time::zero();  // only they have one
  if (path_.folded && path_.bound > Time::zero()) path_.reason = "bounded: chunks of unequal size";
  folded_ = true;
  for (std::uint32_t r = 0; r < n_; ++r) {
    Joined& rs = ranks_[r];
    rs.finish = max(max(rs.finish, finish[r]), queue_.now());
    queue_.schedule_at(rs.finish, *this, r);
  }
}

void FoldedRing::apply_model(std::uint32_t c, std::uint32_t period, const ModelRun& run,
                             std::vector<Time>& finish) {
  ring_->count_channel_sent(c);  // exactly: the model's chunks may have been rounded
  const RingChannel& plan = ring_->channel_plan(c);
  for (std::uint32_t p = 0; p < n_; ++p) {
    const std::uint32_t q = p % period;
    const std::uint32_t r = plan.order[p];
    finish[r] = max(finish[r], run.finish[q]);
    const auto& route = plan.routes[p];
    for (std::size_t i = 0; i < route.size(); ++i) {
      LinkCounters use = run.use[run.first_link[q] + i];
      use.bytes = Bytes::of(ring_->edge_bytes(c, p));
      network_.add_use(route[i], use, run.busy_until[run.first_link[q] + i]);
    }
  }
}

Time FoldedRing::finish_time() const {
  if (ranks_.empty()) return ring_->finish_time();
  Time latest = Time::zero();
  for (const Joined& r : ranks_) latest = max(latest, r.finish);
  return latest;
}

void FoldedRing::on_event(std::uint64_t rank) {
  release_links(static_cast<std::uint32_t>(rank));  // everything it sent has been delivered
  if (++ranks_done_ == n_) release_links(n_);
  if (done_handler_ != nullptr) done_handler_->on_event(done_tag_base_ + rank);
}

}  // namespace hybridsim::sim

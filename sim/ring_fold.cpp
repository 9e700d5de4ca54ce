// Folding a ring collective onto the representatives of its equivalent ranks (sim/README.md,
// "Folding"). Ring positions p and p + P behave alike when, for every p, the routes leaving them
// have the same links (kind, bandwidth, latency, hop by hop), the same protocol delay, and their
// ranks joined at the same time: position p then sees exactly the timeline of position p mod P,
// provided no two ring edges share a link and nothing else crosses them while the ring runs. So
// P positions per channel are simulated, message by message, on a queue and links of their own,
// and the result (each rank's finish, each link's use) is copied to the positions they stand for.
#include <algorithm>
#include <numeric>
#include <string>

#include "sim/error.h"
#include "sim/fast/link_claims.h"
#include "sim/ring_collective.h"

namespace hybridsim::sim {

namespace {

// Starts a model's ranks on its own queue at the times their real ranks joined.
class ModelStarter final : public EventHandler {
 public:
  explicit ModelStarter(RingCollective& ring) : ring_(ring) {}
  void on_event(std::uint64_t rank) override { ring_.start(static_cast<std::uint32_t>(rank)); }

 private:
  RingCollective& ring_;
};

}  // namespace

struct RingCollective::ModelRun {
  std::vector<Time> finish;                // per model position
  std::vector<std::size_t> first_link;     // per model position: its route's first model link
  std::vector<LinkCounters> use;           // per model link
  std::vector<Time> busy_until;            // per model link
  std::uint64_t events = 0;
  std::uint64_t jumped_steps = 0;
};

const char* RingCollective::fold_refusal() {
  if (config_.fast_path == FastPath::Off) return "fast path off";
  if (op_ == CollectiveOp::Broadcast) return "a broadcast (its root breaks the symmetry)";
  if (n_ < 2 || steps_ == 0) return "a single rank";
  if (ring_ranks_ != n_) return "a fold's own model";
  if (config_.observer != nullptr || network_.observer() != nullptr) return "a trace records every message";
  // Every link of every route must be used by one ring edge only, and idle and unclaimed, or held
  // by one folded collective (the previous bucket on this ring, still finishing elsewhere) and
  // promised to no other: claim_links() then has it handed over when that holder's rank there
  // finishes, and each rank checks as it joins that its links are ours and idle (join_deferred).
  // A claim that ended by now (a folded tree's) is no claim: the ledger passes it on first.
  LinkClaims& claims = LinkClaims::of(network_);
  std::vector<std::uint8_t> seen(network_.links().size(), 0);
  for (const auto& ch : channels_)
    for (const auto& route : ch.plan.routes)
      for (const LinkId l : route) {
        claims.settle(l, queue_.now());
        const bool held = claims.holder(l) != nullptr;
        if (seen[l] != 0) return "two ring edges share a link";
        if (!held && !network_.is_idle(l)) return "its links are still busy";
        if (held && claims.promised(l) != nullptr) return "two other folded collectives hold its links";
        seen[l] = 1;
      }
  return nullptr;
}

void RingCollective::claim_links() {
  LinkClaims& claims = LinkClaims::of(network_);
  for (const auto& ch : channels_)
    for (const auto& route : ch.plan.routes)
      for (const LinkId l : route) {
        if (claims.holder(l) == nullptr) claims.claim(l, this);
        else claims.promise(l, this);
      }
}

void RingCollective::release_links(std::uint32_t rank) {
  LinkClaims& claims = LinkClaims::of(network_);
  for (const auto& ch : channels_) {
    const std::uint32_t first = rank == n_ ? 0 : ch.position_of_rank[rank];
    const std::uint32_t last = rank == n_ ? n_ : first + 1;
    for (std::uint32_t p = first; p < last; ++p)
      for (const LinkId l : ch.plan.routes[p]) {
        claims.withdraw(l, this);
        claims.release(l, this);
      }
  }
}

void RingCollective::join_deferred(std::uint32_t rank) {
  // The fold assumes each rank's outgoing links are free when it joins: claimed by this collective
  // (a promised one handed over by now) and idle. If not, the previous holder still runs there, its
  // traffic would meet ours, and the step must be simulated again in full.
  LinkClaims& claims = LinkClaims::of(network_);
  for (const auto& ch : channels_)
    for (const LinkId l : ch.plan.routes[ch.position_of_rank[rank]]) {
      if (claims.holder(l) != this && claims.promised(l) == this && claims.end(l) <= queue_.now())
        claims.hand_over(l);  // the holder's claim has ended by time: hand it over
      if (claims.holder(l) != this || !network_.is_idle(l)) claims.mark_interfered();
    }
  if (++joined_ == n_) run_folded();
}

std::uint32_t RingCollective::period_of(std::uint32_t c) const {
  const ChannelState& ch = channels_[c];
  const LinkTable& links = network_.links();
  const auto alike = [&](std::uint32_t p, std::uint32_t q) {
    if (rank_[ch.plan.order[p]].start != rank_[ch.plan.order[q]].start) return false;
    if (ch.step_delay[p] != ch.step_delay[q]) return false;
    const auto& a = ch.plan.routes[p];
    const auto& b = ch.plan.routes[q];
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same_timing(links[a[i]], links[b[i]])) return false;
    return true;
  };
  return smallest_period(n_, alike);
}

RingCollective::ModelRun RingCollective::run_model(std::uint32_t c, std::uint32_t period,
                                                   std::vector<std::int64_t> chunks) const {
  const ChannelState& ch = channels_[c];
  ModelRun out;
  LinkTable links;
  RingChannel plan;
  for (std::uint32_t p = 0; p < period; ++p) {
    plan.order.push_back(p);
    out.first_link.push_back(links.size());
    std::vector<LinkId> route;
    for (const LinkId l : ch.plan.routes[p]) route.push_back(links.add(network_.links()[l]));
    plan.routes.push_back(std::move(route));
  }
  EventQueue queue;
  Network network(queue, links, network_.switching());
  CollectiveConfig config = config_;
  config.fast_path = FastPath::Off;
  config.observer = nullptr;
  std::vector<RingChannel> plans;
  plans.push_back(std::move(plan));
  RingCollective model(network, op_, period, std::move(plans), size_, config,
                       RingFoldModel{n_, messages_per_chunk_, std::move(chunks), true});
  ModelStarter starter(model);
  for (std::uint32_t p = 0; p < period; ++p) queue.schedule_at(rank_[ch.plan.order[p]].start, starter, p);
  queue.run();
  if (!model.is_done()) throw InternalError("a folded ring's model did not finish");
  for (std::uint32_t p = 0; p < period; ++p) out.finish.push_back(model.rank_finish_time(p));
  for (LinkId l = 0; l < links.size(); ++l) {
    out.use.push_back(network.counters(l));
    out.busy_until.push_back(network.busy_until(l));
  }
  out.events = queue.events_processed() - period;  // the starters stand for the real ranks' joins
  out.jumped_steps = model.jumped_steps();
  return out;
}

void RingCollective::run_folded() {
  std::vector<Time> finish(n_, Time::zero());
  path_.simulated = 0;
  std::string_view reason;
  for (std::uint32_t c = 0; c < channels_.size(); ++c) {
    const std::vector<std::int64_t>& chunks = channels_[c].chunk_bytes;
    std::uint32_t period = period_of(c);
    ModelRun run;
    if (period < n_) {
      const auto [small, large] = std::minmax_element(chunks.begin(), chunks.end());
      run = run_model(c, period, std::vector<std::int64_t>(period, *large));
      if (*small != *large) {
        // Every time in a ring is a max of sums of service times, each growing with its message's
        // bytes: all chunks at the smaller size give a lower bound, at the larger an upper one.
        const ModelRun lower = run_model(c, period, std::vector<std::int64_t>(period, *small));
        Time lead, span;
        for (std::uint32_t p = 0; p < period; ++p) {
          lead = max(lead, run.finish[p] - lower.finish[p]);
          span = max(span, lower.finish[p] - rank_[channels_[c].plan.order[p]].start);
        }
        const bool bounded = config_.fast_path == FastPath::Bounded && lead.ps() * 1000 <= span.ps();
        if (lead > Time::zero() && !bounded) {
          period = n_;
          reason = "chunks of unequal size change its timing";
        } else {
          path_.bound = max(path_.bound, lead);
          run.events += lower.events;
          run.jumped_steps += lower.jumped_steps;
        }
      }
    } else {
      reason = "no repeating pattern of ring edges and join times";
    }
    if (period == n_) run = run_model(c, n_, chunks);
    apply_model(c, period, run, finish);
    path_.simulated = std::max(path_.simulated, period);
    path_.private_events += run.events;
    path_.jumped_steps += run.jumped_steps;
  }
  path_.folded = path_.simulated < n_;
  path_.reason = path_.folded ? std::string_view() : reason;
  if (path_.folded && path_.bound > Time::zero()) path_.reason = "bounded: chunks of unequal size";
  mode_ = Mode::Folded;
  for (std::uint32_t r = 0; r < n_; ++r) {
    RankProgress& rs = rank_[r];
    rs.finish = max(max(rs.finish, finish[r]), queue_.now());
    queue_.schedule_at(rs.finish, *this, (std::uint64_t{0xffffffffu} << 32) | r);
  }
}

void RingCollective::apply_model(std::uint32_t c, std::uint32_t period, const ModelRun& run,
                                 std::vector<Time>& finish) {
  ChannelState& ch = channels_[c];
  fill_edge_bytes(ch);  // exactly: the model's chunks may have been rounded
  for (std::uint32_t p = 0; p < n_; ++p) {
    const std::uint32_t q = p % period;
    const std::uint32_t r = ch.plan.order[p];
    finish[r] = max(finish[r], run.finish[q]);
    const auto& route = ch.plan.routes[p];
    for (std::size_t i = 0; i < route.size(); ++i) {
      LinkCounters use = run.use[run.first_link[q] + i];
      use.bytes = Bytes::of(ch.edge_bytes[p]);
      network_.add_use(route[i], use, run.busy_until[run.first_link[q] + i]);
    }
  }
  messages_sent_ += static_cast<std::uint64_t>(n_) * steps_ * messages_per_chunk_;
}

void RingCollective::fill_edge_bytes(ChannelState& ch) const {
  // At step s position p sends chunk (p − s) mod N, every message of it.
  std::vector<std::int64_t> prefix(2 * static_cast<std::size_t>(n_) + 1, 0);
  for (std::size_t k = 0; k < 2 * static_cast<std::size_t>(n_); ++k)
    prefix[k + 1] = prefix[k] + ch.chunk_bytes[k % n_];
  const std::int64_t cycles = steps_ / n_;
  const std::uint32_t rest = steps_ % n_;
  for (std::uint32_t p = 0; p < n_; ++p) {
    // Chunks p, p−1, …, p−rest+1 (mod N) beyond the whole cycles: indices p+N−rest+1 … p+N.
    ch.edge_bytes[p] = cycles * prefix[n_] + prefix[p + n_ + 1] - prefix[p + n_ + 1 - rest];
  }
}

void RingCollective::finish_folded_rank(std::uint32_t rank) {
  RankProgress& rs = rank_[rank];
  rs.done = true;
  rs.receives_left = 0;
  rs.sends_left = 0;
  release_links(rank);  // everything it sent has been delivered
  if (++ranks_done_ == n_) release_links(n_);
  if (done_handler_ != nullptr) done_handler_->on_event(done_tag_base_ + rank);
}

}  // namespace hybridsim::sim

// The periodic jump of a folded ring's private model (sim/README.md, "Jumping over periodic ring
// steps"). The model runs alone on its own queue and network, its chunks all of one size, so what
// happens next depends only on its state: the pending events, the messages in flight, the links'
// busy times and queued starts, the ranks' finish and pacing times, all seen from now. Nothing in
// it reads the absolute time or the step number, except through two boundaries: arrivals before
// step R are reduced, and the last step's are not forwarded. So if the state when message 0 of step
// s reaches position 0 equals, shifted by T in time and d in steps, the state when message 0 of step
// s − d did, the model is periodic: the next d steps repeat the last d, T later, and so on while no
// step crosses a boundary. The model then jumps k periods at once: every pending event k·T later
// and k·d steps on, the links and ranks shifted alike, and the additive counts (bytes, busy time,
// messages, receives and sends left) grown by k times what one period added. Exact by construction:
// the jumped state is the one the step-by-step run would reach.
#include <algorithm>

#include "sim/error.h"
#include "sim/ring_jump.h"

namespace hybridsim::sim {

RingCollective::~RingCollective() = default;

std::uint64_t RingCollective::jumped_steps() const { return jump_ ? jump_->jumped_steps : 0; }

void RingCollective::enable_jump() {
  if (steps_ < kRingJumpMinSteps) return;  // too few steps to win back the comparisons
  if (op_ == CollectiveOp::Broadcast) return;  // its forwarding rule is not the ring ops' boundaries
  for (const auto& ch : channels_)
    for (const std::int64_t b : ch.chunk_bytes)
      if (b != ch.chunk_bytes[0]) return;  // a step's bytes would depend on the step
  if (config_.observer != nullptr || network_.observer() != nullptr) return;
  jump_ = std::make_unique<PeriodJump>();
}

bool RingCollective::take_jump_snapshot(std::uint64_t tag, JumpSnapshot& snap) const {
  const std::uint32_t step = static_cast<std::uint32_t>(tag >> 32) / messages_per_chunk_;
  snap.state.clear();
  snap.links.clear();
  snap.counts.clear();
  snap.now = queue_.now();
  snap.step = step;
  snap.lowest_step = step;
  snap.highest_step = step;
  const auto relative = [&](Time t) { return max(t, snap.now).ps() - snap.now.ps(); };
  // The ranks: every one joined, none done, nothing waiting for its start, its protocol's latency
  // since joining passed (arrivals are then handled at their own time).
  for (const RankProgress& rs : rank_) {
    if (!rs.started || rs.done || !rs.early_arrivals.empty() ||
        rs.start + config_.timing.base_latency > snap.now)
      return false;
    snap.state.push_back(relative(rs.finish));
    snap.counts.push_back(rs.receives_left);
    snap.counts.push_back(rs.sends_left);
  }
  for (const auto& ch : channels_) {
    for (const Time t : ch.paced_until) snap.state.push_back(relative(t));
    snap.counts.insert(snap.counts.end(), ch.edge_bytes.begin(), ch.edge_bytes.end());
  }
  snap.counts.push_back(static_cast<std::int64_t>(messages_sent_));
  // The pending events, in the order they fire; each names its message by channel, receiving
  // position, message index and step relative to this one.
  const auto ring_tag = [&](std::uint64_t t) {
    const auto low = static_cast<std::uint32_t>(t & 0xffffffffu);
    const auto high = static_cast<std::uint32_t>(t >> 32);
    const std::uint32_t s = high / messages_per_chunk_;
    snap.lowest_step = std::min(snap.lowest_step, s);
    snap.highest_step = std::max(snap.highest_step, s);
    snap.state.push_back(low);
    snap.state.push_back(high % messages_per_chunk_);
    snap.state.push_back(static_cast<std::int64_t>(s) - step);
  };
  for (const PendingEvent& e : queue_.pending_events()) {
    snap.state.push_back(e.time.ps() - snap.now.ps());
    if (e.handler == &network_) {
      const Network::InFlight m = network_.in_flight(e.tag);
      if (m.receiver != this) return false;
      snap.state.push_back(0);
      snap.state.push_back(reinterpret_cast<std::intptr_t>(m.route));
      snap.state.push_back(m.next_hop);
      snap.state.push_back(m.bytes);
      snap.state.push_back(m.rate_class);
      snap.state.push_back(relative(m.tail_ready));
      ring_tag(m.tag);
    } else if (e.handler == this && (e.tag >> 32) != 0xffffffffu) {
      snap.state.push_back(1);
      ring_tag(e.tag);
    } else {
      return false;  // something else shares the queue: the model is not alone
    }
  }
  snap.state.push_back(-1 - static_cast<std::int64_t>(snap.state.size()));  // events end here
  network_.append_link_state(snap.state);
  for (LinkId l = 0; l < network_.links().size(); ++l) snap.links.push_back(network_.counters(l));
  snap.hops = network_.hops_processed();
  return true;
}

void RingCollective::jump_periods(std::uint64_t tag, const JumpSnapshot& snap, const JumpSnapshot& then,
                                  std::uint64_t periods, std::uint32_t d) {
  const Time period = snap.now - then.now;
  const Time dt = Time::ps(static_cast<std::int64_t>(periods) * period.ps());
  const std::uint32_t ds = static_cast<std::uint32_t>(periods * d);
  const std::uint64_t dhigh = static_cast<std::uint64_t>(ds) * messages_per_chunk_ << 32;
  // Every event again, k·T later and k·d steps on, the one being handled first (it fires before
  // every pending one), the rest in their order, so ties keep their order.
  std::vector<PendingEvent> pending = queue_.take_pending_events();
  queue_.schedule_at(snap.now + dt, *this, tag + dhigh);
  for (const PendingEvent& e : pending) {
    if (e.handler == &network_)
      network_.shift_message(e.tag, dt, network_.in_flight(e.tag).tag + dhigh);
    queue_.schedule_at(e.time + dt, *e.handler, e.handler == &network_ ? e.tag : e.tag + dhigh);
  }
  std::vector<LinkCounters> extra(snap.links.size());
  for (std::size_t l = 0; l < extra.size(); ++l) {
    const auto k = static_cast<std::int64_t>(periods);
    extra[l].bytes = Bytes::of(k * (snap.links[l].bytes - then.links[l].bytes).count());
    extra[l].busy = Time::ps(k * (snap.links[l].busy - then.links[l].busy).ps());
    extra[l].messages = periods * (snap.links[l].messages - then.links[l].messages);
  }
  network_.shift_links(dt, extra, periods * (snap.hops - then.hops));
  // The counts, in the order they were taken.
  std::size_t next_count = 0;
  const auto grown = [&] {
    const std::size_t i = next_count++;
    return snap.counts[i] + static_cast<std::int64_t>(periods) * (snap.counts[i] - then.counts[i]);
  };
  for (RankProgress& rs : rank_) {
    if (rs.finish > snap.now) rs.finish += dt;
    rs.receives_left = grown();
    rs.sends_left = grown();
  }
  for (auto& ch : channels_) {
    for (Time& t : ch.paced_until)
      if (t > snap.now) t += dt;
    for (std::int64_t& b : ch.edge_bytes) b = grown();
  }
  messages_sent_ = static_cast<std::uint64_t>(grown());
  jump_->jumped_steps += ds;
}

bool RingCollective::jump_if_periodic(std::uint64_t tag) {
  PeriodJump& jump = *jump_;
  // The buffers of the last snapshot dropped are reused: a long model takes thousands.
  JumpSnapshot snap = std::move(jump.spare);
  if (!take_jump_snapshot(tag, snap)) {
    jump.spare = std::move(snap);
    return false;
  }
  // A period: an earlier snapshot with the same state. Steps of one phase repeat alike; the phases
  // change where arrivals stop being reduced (step R) and at the last step (not forwarded).
  for (const JumpSnapshot& then : jump.history) {
    if (then.state != snap.state || then.now >= snap.now) continue;
    const std::uint32_t d = snap.step - then.step;
    std::uint32_t boundary = steps_ - 1;
    if (reduce_steps_ > then.lowest_step && reduce_steps_ < boundary) boundary = reduce_steps_;
    if (boundary <= snap.highest_step) break;
    const std::uint64_t periods = (boundary - 1 - snap.highest_step) / d;
    if (periods == 0) break;
    jump_periods(tag, snap, then, periods, d);
    jump.history.clear();
    jump.words = 0;
    return true;
  }
  jump.words += snap.state.size();
  jump.history.push_front(std::move(snap));
  // A period can be as long as the model has positions (a pattern of unlike edges moves on one
  // position a step); a large model (one that found no pattern) keeps fewer, to bound memory.
  while (jump.history.size() > std::clamp<std::size_t>(n_, kRingJumpHistory, 4 * kRingJumpHistory) ||
         (jump.history.size() > 1 && jump.words > kRingJumpMaxWords)) {
    jump.words -= jump.history.back().state.size();
    jump.spare = std::move(jump.history.back());
    jump.history.pop_back();
  }
  return false;
}

}  // namespace hybridsim::sim

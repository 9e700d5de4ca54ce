// The periodic jump of a ring run alone (sim/README.md, "Jumping over periodic ring steps"). The
// ring runs alone on its own queue and network, its chunks all of one size, so what happens next
// depends only on its state: the pending events, the messages in flight, the links' busy times and
// queued starts, the ranks' finish and pacing times, all seen from now. Nothing in it reads the
// absolute time or the step number, except through two boundaries: arrivals before step R are
// reduced, and the last step's are not forwarded. So if the state when message 0 of step s reaches
// position 0 equals, shifted by T in time and d in steps, the state when message 0 of step s − d
// did, the run is periodic: the next d steps repeat the last d, T later, and so on while no step
// crosses a boundary. It then jumps k periods at once: every pending event k·T later and k·d steps
// on, the links and ranks shifted alike, and the additive counts (bytes, busy time, messages,
// receives and sends left) grown by k times what one period added. Exact by construction: the
// jumped state is the one the step-by-step run would reach.
#include "sim/fast/ring_jump.h"

#include <algorithm>

namespace hybridsim::sim {

bool RingJump::applies() const {
  if (ring_.steps() < kRingJumpMinSteps) return false;      // too few steps to win back the comparisons
  if (ring_.op() == CollectiveOp::Broadcast) return false;  // its forwarding is not the ring ops'
  if (!ring_.uniform_chunks()) return false;                // a step's bytes would depend on the step
  return ring_.config().observer == nullptr && network_.observer() == nullptr;
}

bool RingJump::take_snapshot(std::uint64_t tag, Snapshot& snap) const {
  const std::uint32_t step = static_cast<std::uint32_t>(tag >> 32) / ring_.messages_per_chunk();
  snap.state.clear();
  snap.links.clear();
  snap.counts.clear();
  snap.now = network_.queue().now();
  snap.step = step;
  snap.lowest_step = step;
  snap.highest_step = step;
  // The ranks: every one joined, none done, nothing waiting for its start, its protocol's latency
  // since joining passed (arrivals are then handled at their own time).
  if (!ring_.append_state(snap.now, snap.state, snap.counts)) return false;
  if (!append_events(snap)) return false;
  snap.state.push_back(-1 - static_cast<std::int64_t>(snap.state.size()));  // events end here
  network_.append_link_state(snap.state);
  for (LinkId l = 0; l < network_.links().size(); ++l) snap.links.push_back(network_.counters(l));
  snap.hops = network_.hops_processed();
  return true;
}

bool RingJump::append_events(Snapshot& snap) const {
  const std::uint32_t per_chunk = ring_.messages_per_chunk();
  // Each event names its message by channel, receiving position, message index and step relative
  // to this one.
  const auto ring_tag = [&](std::uint64_t t) {
    const auto low = static_cast<std::uint32_t>(t & 0xffffffffu);
    const auto high = static_cast<std::uint32_t>(t >> 32);
    const std::uint32_t s = high / per_chunk;
    snap.lowest_step = std::min(snap.lowest_step, s);
    snap.highest_step = std::max(snap.highest_step, s);
    snap.state.push_back(low);
    snap.state.push_back(high % per_chunk);
    snap.state.push_back(static_cast<std::int64_t>(s) - snap.step);
  };
  const auto relative = [&](Time t) { return max(t, snap.now).ps() - snap.now.ps(); };
  for (const PendingEvent& e : network_.queue().pending_events()) {
    snap.state.push_back(e.time.ps() - snap.now.ps());
    if (e.handler == &network_) {
      const Network::InFlight m = network_.in_flight(e.tag);
      if (m.receiver != &ring_) return false;
      snap.state.push_back(0);
      snap.state.push_back(reinterpret_cast<std::intptr_t>(m.route));
      snap.state.push_back(m.next_hop);
      snap.state.push_back(m.bytes);
      snap.state.push_back(m.rate_class);
      snap.state.push_back(relative(m.tail_ready));
      ring_tag(m.tag);
    } else if (e.handler == &ring_) {
      snap.state.push_back(1);
      ring_tag(e.tag);
    } else {
      return false;  // something else shares the queue: the ring is not alone
    }
  }
  return true;
}

void RingJump::jump(std::uint64_t tag, const Snapshot& snap, const Snapshot& then, std::uint64_t periods,
                    std::uint32_t d) {
  EventQueue& queue = network_.queue();
  const Time period = snap.now - then.now;
  const Time dt = Time::ps(static_cast<std::int64_t>(periods) * period.ps());
  const std::uint32_t ds = static_cast<std::uint32_t>(periods * d);
  const std::uint64_t dhigh = static_cast<std::uint64_t>(ds) * ring_.messages_per_chunk() << 32;
  // Every event again, k·T later and k·d steps on, the one being handled first (it fires before
  // every pending one), the rest in their order, so ties keep their order.
  std::vector<PendingEvent> pending = queue.take_pending_events();
  queue.schedule_at(snap.now + dt, ring_, tag + dhigh);
  for (const PendingEvent& e : pending) {
    if (e.handler == &network_) network_.shift_message(e.tag, dt, network_.in_flight(e.tag).tag + dhigh);
    queue.schedule_at(e.time + dt, *e.handler, e.handler == &network_ ? e.tag : e.tag + dhigh);
  }
  const auto k = static_cast<std::int64_t>(periods);
  std::vector<LinkCounters> extra(snap.links.size());
  for (std::size_t l = 0; l < extra.size(); ++l) {
    extra[l].bytes = Bytes::of(k * (snap.links[l].bytes - then.links[l].bytes).count());
    extra[l].busy = Time::ps(k * (snap.links[l].busy - then.links[l].busy).ps());
    extra[l].messages = periods * (snap.links[l].messages - then.links[l].messages);
  }
  network_.shift_links(dt, extra, periods * (snap.hops - then.hops));
  std::vector<std::int64_t> grown(snap.counts.size());
  for (std::size_t i = 0; i < grown.size(); ++i)
    grown[i] = snap.counts[i] + k * (snap.counts[i] - then.counts[i]);
  ring_.shift_state(snap.now, dt, grown);
  jumped_steps_ += ds;
}

bool RingJump::on_step_arrival(std::uint64_t tag) {
  // The buffers of the last snapshot dropped are reused: a long run takes thousands.
  Snapshot snap = std::move(spare_);
  if (!take_snapshot(tag, snap)) {
    spare_ = std::move(snap);
    return false;
  }
  // A period: an earlier snapshot with the same state. Steps of one phase repeat alike; the phases
  // change where arrivals stop being reduced (step R) and at the last step (not forwarded).
  for (const Snapshot& then : history_) {
    if (then.state != snap.state || then.now >= snap.now) continue;
    const std::uint32_t d = snap.step - then.step;
    std::uint32_t boundary = ring_.steps() - 1;
    const std::uint32_t reduce = ring_.reduce_steps();
    if (reduce > then.lowest_step && reduce < boundary) boundary = reduce;
    if (boundary <= snap.highest_step) break;
    const std::uint64_t periods = (boundary - 1 - snap.highest_step) / d;
    if (periods == 0) break;
    jump(tag, snap, then, periods, d);
    history_.clear();
    words_ = 0;
    return true;
  }
  keep(std::move(snap));
  return false;
}

void RingJump::keep(Snapshot snap) {
  words_ += snap.state.size();
  history_.push_front(std::move(snap));
  // A period can be as long as the ring has positions (a pattern of unlike edges moves on one
  // position a step); a large ring (one that found no pattern) keeps fewer, to bound memory.
  while (history_.size() > std::clamp<std::size_t>(ring_.ranks(), kRingJumpHistory, 4 * kRingJumpHistory) ||
         (history_.size() > 1 && words_ > kRingJumpMaxWords)) {
    words_ -= history_.back().state.size();
    spare_ = std::move(history_.back());
    history_.pop_back();
  }
}

}  // namespace hybridsim::sim

// The periodic jump of rings (sim/README.md, "Jumping over periodic ring steps"). Rings whose chunks
// are all of one size, with nothing else crossing their links, have a future that depends only on
// their state: the pending events, the messages in flight, the links' busy times and queued starts,
// the ranks' finish and pacing times, all seen from now. Nothing in it reads the absolute time or the
// step number, except through two boundaries per ring: arrivals before step R are reduced, and the
// last step's are not forwarded. So if the state when message 0 of step s reaches position 0 of a
// leading ring equals, shifted by T in time and d in steps, the state when message 0 of step s − d
// did, the run is periodic: the next d steps repeat the last d, T later, and so on while no step
// crosses a boundary and no other event comes due. It then jumps k periods at once: every pending
// event of the rings k·T later and k·d steps on, their links and ranks shifted alike, and the
// additive counts (bytes, busy time, messages, receives and sends left) grown by k times what one
// period added. Exact by construction: the jumped state is the one the step-by-step run would reach.
#include "sim/fast/ring_jump.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "sim/fast/link_claims.h"

namespace hybridsim::sim {

RingJump::RingJump(RingJumpScope scope) : scope_(std::move(scope)), leaders_(scope_.leaders.size()) {
  for (std::size_t i = 0; i < scope_.rings.size(); ++i) {
    RingCollective* ring = scope_.rings[i];
    if (std::find(networks_.begin(), networks_.end(), &ring->network()) == networks_.end())
      networks_.push_back(&ring->network());
    history_size_ = std::max<std::size_t>(history_size_, ring->ranks());
    handlers_.emplace_back(ring, static_cast<std::int64_t>(i));
  }
  for (const RingCollective* ring : scope_.beside) handlers_.emplace_back(ring, kPassed);
  std::sort(handlers_.begin(), handlers_.end(), [](const auto& a, const auto& b) {
    return std::less<const EventHandler*>()(a.first, b.first);
  });
  history_size_ = std::min(history_size_, 4 * kRingJumpHistory);
  for (std::size_t i = 0; i < leaders_.size(); ++i) {
    leaders_[i].jump = this;
    leaders_[i].ring = static_cast<std::uint32_t>(handler_of(scope_.leaders[i]));
  }
}

bool RingJump::applies() const {
  for (const RingCollective* ring : scope_.rings) {
    if (ring->steps() < kRingJumpMinSteps) return false;      // too few steps to win back the comparisons
    if (ring->op() == CollectiveOp::Broadcast) return false;  // its forwarding is not the ring ops'
    if (!ring->uniform_chunks()) return false;                // a step's bytes would depend on the step
    if (ring->config().observer != nullptr) return false;
  }
  for (const Network* network : networks_)
    if (network->observer() != nullptr) return false;
  return !scope_.rings.empty();
}

void RingJump::attach() {
  for (std::size_t i = 0; i < leaders_.size(); ++i) scope_.leaders[i]->set_step_hook(&leaders_[i]);
}

std::int64_t RingJump::handler_of(const EventHandler* handler) const {
  const auto it = std::lower_bound(
      handlers_.begin(), handlers_.end(), handler,
      [](const auto& entry, auto* h) { return std::less<const EventHandler*>()(entry.first, h); });
  return it != handlers_.end() && it->first == handler ? it->second : kForeign;
}

std::int64_t RingJump::network_of(const EventHandler* handler) const {
  for (std::size_t i = 0; i < networks_.size(); ++i)
    if (networks_[i] == handler) return static_cast<std::int64_t>(i);
  return -1;
}

RingJump::Owner RingJump::owner(const PendingEvent& e) const {
  if (scope_.beside_network != nullptr && e.handler == scope_.beside_network) return {kPassed, e.tag};
  if (const std::int64_t n = network_of(e.handler); n >= 0) {
    const Network::InFlight m = networks_[static_cast<std::size_t>(n)]->in_flight(e.tag);
    return {handler_of(m.receiver), m.tag};
  }
  if (scope_.carrier != nullptr && e.handler == scope_.carrier) {
    const bool passed = handler_of(scope_.carrier->in_flight(e.tag).receiver) == kPassed;
    return {passed ? kPassed : kForeign, e.tag};
  }
  const std::int64_t ring = handler_of(e.handler);
  return {ring, e.tag};
}

void RingJump::interfere() {
  if (scope_.guard != nullptr)
    scope_.guard->mark_interfered();
  else
    LinkClaims::of(*networks_[0]).mark_interfered();
}

std::size_t RingJump::rings_started() const {
  std::size_t started = 0;
  for (const RingCollective* ring : scope_.rings) started += ring->started() ? 1 : 0;
  return started;
}

bool RingJump::take_snapshot(std::uint32_t leader, std::uint64_t tag, Snapshot& snap) const {
  const RingCollective& lead = *scope_.rings[leader];
  snap.state.clear();
  snap.links.clear();
  snap.counts.clear();
  snap.rings.clear();
  snap.count_ends.clear();
  snap.hops.clear();
  snap.now = networks_[0]->queue().now();
  snap.leader = leader;
  snap.step = static_cast<std::uint32_t>(tag >> 32) / lead.messages_per_chunk();
  snap.state.push_back(leader);
  // The rings: each one running has every rank joined, none done, nothing waiting for its start,
  // its protocol's latency since joining passed (arrivals are then handled at their own time).
  for (std::uint32_t i = 0; i < scope_.rings.size(); ++i) {
    const RingCollective& ring = *scope_.rings[i];
    if (!ring.started() || ring.is_done()) continue;
    snap.state.push_back(-2 - static_cast<std::int64_t>(i));
    if (!ring.append_state(snap.now, snap.state, snap.counts)) return false;
    snap.rings.push_back(i);
    snap.count_ends.push_back(snap.counts.size());
  }
  snap.lowest.assign(scope_.rings.size(), std::numeric_limits<std::uint32_t>::max());
  snap.highest.assign(scope_.rings.size(), 0);
  snap.lowest[leader] = snap.highest[leader] = snap.step;
  if (!append_events(snap)) return false;
  snap.state.push_back(-1 - static_cast<std::int64_t>(snap.state.size()));  // events end here
  const std::vector<LinkId>* only = scope_.links.empty() ? nullptr : &scope_.links;
  for (const Network* network : networks_) {
    network->append_link_state(snap.state, only);
    const std::size_t count = only != nullptr ? only->size() : network->links().size();
    for (std::size_t i = 0; i < count; ++i)
      snap.links.push_back(network->counters(only != nullptr ? (*only)[i] : static_cast<LinkId>(i)));
    snap.hops.push_back(network->hops_processed());
  }
  return true;
}

bool RingJump::append_events(Snapshot& snap) const {
  snap.foreign = Time::max();
  snap.foreign_events = 0;
  for (const PendingEvent& e : networks_[0]->queue().pending_events()) {
    const Owner o = owner(e);
    if (o.ring == kPassed) continue;
    if (o.ring == kForeign) {  // something else shares the queue
      if (!scope_.shared_queue) return false;
      snap.foreign = min(snap.foreign, e.time);
      ++snap.foreign_events;
      continue;
    }
    append_event(e, static_cast<std::uint32_t>(o.ring), o.tag, snap);
  }
  return true;
}

// Each event names its ring, the message by channel, receiving position, message index and step
// relative to the leader's.
void RingJump::append_event(const PendingEvent& e, std::uint32_t ring, std::uint64_t tag,
                            Snapshot& snap) const {
  const std::uint32_t per_chunk = scope_.rings[ring]->messages_per_chunk();
  snap.state.push_back(e.time.ps() - snap.now.ps());
  if (const std::int64_t n = network_of(e.handler); n >= 0) {
    const Network::InFlight m = networks_[static_cast<std::size_t>(n)]->in_flight(e.tag);
    snap.state.push_back(n);
    snap.state.push_back(reinterpret_cast<std::intptr_t>(m.route));
    snap.state.push_back(m.next_hop);
    snap.state.push_back(m.bytes);
    snap.state.push_back(m.rate_class);
    snap.state.push_back(max(m.tail_ready, snap.now).ps() - snap.now.ps());
  } else {
    snap.state.push_back(-1);
  }
  const auto low = static_cast<std::uint32_t>(tag & 0xffffffffu);
  const auto high = static_cast<std::uint32_t>(tag >> 32);
  const std::uint32_t s = high / per_chunk;
  snap.lowest[ring] = std::min(snap.lowest[ring], s);
  snap.highest[ring] = std::max(snap.highest[ring], s);
  snap.state.push_back(ring);
  snap.state.push_back(low);
  snap.state.push_back(high % per_chunk);
  snap.state.push_back(static_cast<std::int64_t>(s) - snap.step);
}

std::uint64_t RingJump::periods(const Snapshot& snap, const Snapshot& then, std::uint32_t d) const {
  std::uint64_t periods = std::numeric_limits<std::uint64_t>::max();
  for (const std::uint32_t i : snap.rings) {
    if (snap.highest[i] < snap.lowest[i]) continue;  // nothing pending: it does not move
    const RingCollective& ring = *scope_.rings[i];
    std::uint32_t boundary = ring.steps() - 1;
    const std::uint32_t reduce = ring.reduce_steps();
    if (reduce > then.lowest[i] && reduce < boundary) boundary = reduce;
    if (boundary <= snap.highest[i]) return 0;
    periods = std::min<std::uint64_t>(periods, (boundary - 1 - snap.highest[i]) / d);
  }
  // Nothing else may have happened over the last period, nor come due before the jump's end.
  if (then.foreign <= snap.now || then.foreign_events != snap.foreign_events) return 0;
  // Nor may another party's message have met them (one that a passed event led to may have come
  // and gone within the period: no count of pending events shows it).
  if (scope_.guard != nullptr && scope_.guard->met_since(scope_.links, then.now)) return 0;
  if (snap.foreign != Time::max()) {
    if (snap.foreign <= snap.now) return 0;
    const auto room = static_cast<std::uint64_t>((snap.foreign - snap.now).ps() - 1);
    periods = std::min<std::uint64_t>(periods, room / static_cast<std::uint64_t>((snap.now - then.now).ps()));
  }
  return periods == std::numeric_limits<std::uint64_t>::max() ? 0 : periods;
}

void RingJump::shift_events(std::uint64_t tag, const Snapshot& snap, Time dt, std::uint32_t ds) {
  EventQueue& queue = networks_[0]->queue();
  const auto shifted = [&](std::uint32_t ring, std::uint64_t t) {
    return t + (static_cast<std::uint64_t>(ds) * scope_.rings[ring]->messages_per_chunk() << 32);
  };
  // Only the rings' own events move; every other party's stays pending where it is, under its own
  // EventId (a kernel's finish that a later re-rate cancels: taken and scheduled again, its id went
  // stale, the cancel missed, and the kernel ended twice). They were scheduled before the rings' moved
  // ones, so at a tie they still fire first, as in the step-by-step run. Then the one being handled
  // (it fires before every pending one of the rings), k·T later and k·d steps on, then the rest of
  // theirs in their order, so ties keep their order.
  std::vector<PendingEvent> pending = queue.pending_events();
  std::vector<std::int64_t> ring(pending.size(), -1);
  for (std::size_t i = 0; i < pending.size(); ++i) ring[i] = owner(pending[i]).ring;
  // By owner, not by id: the links' hops and arrivals are posted (EventQueue::post_at), without one.
  queue.cancel_if([&](const PendingEvent& e) { return owner(e).ring >= 0; });
  queue.schedule_at(snap.now + dt, *scope_.rings[snap.leader], shifted(snap.leader, tag));
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (ring[i] < 0) continue;
    const PendingEvent& e = pending[i];
    const auto r = static_cast<std::uint32_t>(ring[i]);
    if (const std::int64_t n = network_of(e.handler); n >= 0) {
      Network& network = *networks_[static_cast<std::size_t>(n)];
      network.shift_message(e.tag, dt, shifted(r, network.in_flight(e.tag).tag));
      queue.schedule_at(e.time + dt, *e.handler, e.tag);
    } else {
      queue.schedule_at(e.time + dt, *e.handler, shifted(r, e.tag));
    }
  }
}

void RingJump::jump(std::uint64_t tag, const Snapshot& snap, const Snapshot& then, std::uint64_t periods,
                    std::uint32_t d) {
  const Time period = snap.now - then.now;
  const Time dt = Time::ps(static_cast<std::int64_t>(periods) * period.ps());
  const std::uint32_t ds = static_cast<std::uint32_t>(periods * d);
  shift_events(tag, snap, dt, ds);
  const auto k = static_cast<std::int64_t>(periods);
  const std::vector<LinkId>* only = scope_.links.empty() ? nullptr : &scope_.links;
  std::size_t next = 0;
  for (std::size_t n = 0; n < networks_.size(); ++n) {
    const std::size_t count = only != nullptr ? only->size() : networks_[n]->links().size();
    std::vector<LinkCounters> extra(count);
    std::uint64_t hops = 0;  // on its links: the events passed over may have crossed others
    for (std::size_t l = 0; l < count; ++l, ++next) {
      extra[l].bytes = Bytes::of(k * (snap.links[next].bytes - then.links[next].bytes).count());
      extra[l].busy = Time::ps(k * (snap.links[next].busy - then.links[next].busy).ps());
      extra[l].messages = periods * (snap.links[next].messages - then.links[next].messages);
      hops += extra[l].messages;
    }
    networks_[n]->shift_links(dt, extra, only != nullptr ? hops : periods * (snap.hops[n] - then.hops[n]),
                              only);
  }
  if (scope_.guard != nullptr && only != nullptr)
    for (const LinkId l : *only) scope_.guard->jumped(l, snap.now + dt);
  std::size_t begin = 0;
  for (std::size_t j = 0; j < snap.rings.size(); ++j) {
    std::vector<std::int64_t> grown(snap.count_ends[j] - begin);
    for (std::size_t i = 0; i < grown.size(); ++i, ++begin)
      grown[i] = snap.counts[begin] + k * (snap.counts[begin] - then.counts[begin]);
    scope_.rings[snap.rings[j]]->shift_state(snap.now, dt, grown);
  }
  jumped_steps_ += ds;
  started_at_jump_ = rings_started();
  check_starts_ = true;
}

bool RingJump::on_step_arrival(std::uint32_t leader, std::uint64_t tag) {
  if (check_starts_) {  // the first arrival after a jump, at its end: did a ring start within it?
    check_starts_ = false;
    if (rings_started() != started_at_jump_) interfere();
  }
  // The buffers of the last snapshot dropped are reused: a long run takes thousands.
  Snapshot snap = std::move(spare_);
  if (!take_snapshot(leader, tag, snap)) {
    spare_ = std::move(snap);
    return false;
  }
  // A period: an earlier snapshot with the same state. Steps of one phase repeat alike; the phases
  // change where arrivals stop being reduced (step R) and at the last step (not forwarded).
  for (const Snapshot& then : history_) {
    if (then.state != snap.state || then.now >= snap.now) continue;
    const std::uint32_t d = snap.step - then.step;
    const std::uint64_t k = periods(snap, then, d);
    if (k == 0) break;
    jump(tag, snap, then, k, d);
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
  // A period can be as long as a ring has positions (a pattern of unlike edges moves on one
  // position a step); a large ring (one that found no pattern) keeps fewer, to bound memory.
  while (history_.size() > history_size_ || (history_.size() > 1 && words_ > kRingJumpMaxWords)) {
    words_ -= history_.back().state.size();
    spare_ = std::move(history_.back());
    history_.pop_back();
  }
}

}  // namespace hybridsim::sim

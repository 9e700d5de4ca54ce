#include "sim/network.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "sim/error.h"

namespace hybridsim::sim {

Network::Network(EventQueue& queue, const LinkTable& links, Switching switching, WorkProgress* progress)
    : queue_(queue), links_(links), switching_(switching) {
  servers_.reserve(links.size());
  watch_end_.reserve(links.size());
  queues_.reserve(links.size());
  ticked_batches(progress, "preparing its links", links.size(), "links", kStateBatch,
                 [&](std::size_t begin, std::size_t end) {
                   servers_.resize(end);
                   watch_end_.resize(end, Time::max());
                   queues_.resize(end);
                   for (std::size_t id = begin; id < end; ++id)
                     servers_[id].latency = links[static_cast<LinkId>(id)].latency;
                 });
}

namespace {
// Out of line, so that a send's frame is not sized and saved for building these messages (14
// instructions a send).
[[noreturn, gnu::noinline, gnu::cold]] void refuse_send(Time at, std::uint8_t rate_class, Time now) {
  if (at < now)
    throw InternalError("message sent into the past: at " + format_time(at) + ", now " + format_time(now));
  throw InternalError("unknown rate class " + std::to_string(rate_class));
}
}  // namespace

void Network::send(Route route, Bytes bytes, EventHandler& receiver, std::uint64_t tag) {
  send_at(queue_.now(), route, bytes, receiver, tag);
}

std::uint8_t Network::rate_class(const std::array<double, kLinkKindCount>& scale) {
  bool ones = true;
  for (const double s : scale) {
    if (!(s > 0) || !std::isfinite(s)) throw InternalError("a rate scale must be positive");
    ones = ones && s == 1.0;
  }
  if (ones) return 0;
  for (std::size_t c = 0; c < class_scales_.size(); ++c)
    if (class_scales_[c] == scale) return static_cast<std::uint8_t>(c + 1);
  if (class_scales_.size() >= 254) throw InternalError("too many rate classes");
  class_scales_.push_back(scale);
  class_count_ = static_cast<std::uint8_t>(class_scales_.size());
  for (LinkId id = 0; id < links_.size(); ++id) {
    const double bps = static_cast<double>(links_[id].bandwidth.bytes_per_second()) *
                       scale[static_cast<std::size_t>(links_[id].kind)];
    class_bandwidth_.push_back(
        Bandwidth::bytes_per_second(std::max<std::int64_t>(1, std::llround(bps))));
  }
  return static_cast<std::uint8_t>(class_scales_.size());
}

void Network::send_rare(Time at, Route route, Bytes bytes, EventHandler& receiver, std::uint64_t tag,
                        std::uint8_t rate_class, const EventHandler* party) {
  if (route.empty()) {
    queue_.post_at(at, receiver, tag);
    return;
  }
  // Checked before a slot is taken, so a rejected send leaves nothing behind.
  if (rate_class > class_count_ || at < queue_.now()) refuse_send(at, rate_class, queue_.now());
  add_message_slot();  // none was free
  send_at(at, route, bytes, receiver, tag, rate_class, party);
}

void Network::add_message_slot() {
  messages_.emplace_back();
  messages_.back().next_hop = free_message_;
  free_message_ = static_cast<std::uint32_t>(messages_.size() - 1);
}

std::size_t Network::messages_in_flight() const {
  std::size_t free = 0;
  for (std::uint32_t i = free_message_; i != kNoMessage; i = messages_[i].next_hop) ++free;
  return messages_.size() - free;
}

void Network::attach_watcher(std::unique_ptr<ArrivalWatcher> watcher) {
  watcher_ = std::move(watcher);
  for (LinkServer& server : servers_) server.watched = kUnwatched;
  std::fill(watch_end_.begin(), watch_end_.end(), Time::max());
}

void Network::add_use(LinkId link, const LinkCounters& use, Time busy_until) {
  LinkServer& server = servers_[link];
  server.bytes += use.bytes;
  server.busy += use.busy;
  server.messages += use.messages;
  server.max_queue_depth = std::max(server.max_queue_depth, use.max_queue_depth);
  server.busy_until = max(server.busy_until, busy_until);
}

void Network::append_link_state(std::vector<std::int64_t>& words, const std::vector<LinkId>* only) const {
  const Time now = queue_.now();
  const std::size_t count = only != nullptr ? only->size() : servers_.size();
  for (std::size_t i = 0; i < count; ++i) {
    const LinkId l = only != nullptr ? (*only)[i] : static_cast<LinkId>(i);
    // A link free by now is as free as one free long ago: every later arrival is at now or after.
    words.push_back(max(servers_[l].busy_until, now).ps() - now.ps());
    // Starts at or before now are dropped by the next arrival (note_queue); later ones still count.
    const LinkQueue& q = queues_[l];
    std::int64_t later = 0;
    for (std::size_t k = q.head; k < q.starts.size(); ++k)
      if (q.starts[k] > now) {
        words.push_back(q.starts[k].ps() - now.ps());
        ++later;
      }
    words.push_back(-1 - later);  // a separator no relative time can be
  }
}

void Network::shift_message(std::uint64_t hop, Time dt, std::uint64_t tag) {
  Message& m = messages_[message_of(hop)];
  m.tail_ready = m.tail_ready + dt;
  m.tag = tag;
}

void Network::shift_links(Time dt, const std::vector<LinkCounters>& extra, std::uint64_t extra_hops,
                          const std::vector<LinkId>* only) {
  const Time now = queue_.now();
  const std::size_t count = only != nullptr ? only->size() : servers_.size();
  for (std::size_t i = 0; i < count; ++i) {
    const LinkId l = only != nullptr ? (*only)[i] : static_cast<LinkId>(i);
    LinkServer& s = servers_[l];
    if (s.busy_until > now) s.busy_until = s.busy_until + dt;
    LinkQueue& q = queues_[l];
    for (std::size_t k = q.head; k < q.starts.size(); ++k)
      if (q.starts[k] > now) q.starts[k] = q.starts[k] + dt;  // the list stays sorted
    s.bytes += extra[i].bytes;
    s.busy += extra[i].busy;
    s.messages += extra[i].messages;
  }
  hops_ += extra_hops;
}

// Inlined into hop_in_full, its one caller: as a call, its frame and the saves around it cost a
// waiting hop about 30 instructions (3.5 M of the 1,024-GPU step's 18 M hops wait).
[[gnu::always_inline]] inline void Network::note_queue(LinkServer& server, LinkQueue& queue, Time arrival,
                                                       Time start) {
  // Drop messages that had started by the time this one arrived; the rest are waiting ahead of it.
  auto& starts = queue.starts;
  while (queue.head < starts.size() && starts[queue.head] <= arrival) ++queue.head;
  if (queue.head == starts.size()) {
    starts.clear();
    queue.head = 0;
  } else if (queue.head > 64 && queue.head * 2 > starts.size()) {
    starts.erase(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(queue.head));
    queue.head = 0;
  }
  if (start > arrival) {
    starts.push_back(start);
    const auto waiting = static_cast<std::uint32_t>(starts.size() - queue.head);
    if (waiting > server.max_queue_depth) server.max_queue_depth = waiting;
  }
}

inline void Network::serve(std::uint32_t index, Message& m, LinkServer& server, Time start, Time finish) {
  server.busy_until = finish;
  server.bytes += Bytes::of(m.bytes);
  server.busy += finish - start;
  ++server.messages;
  ++hops_;
  const Time tail_arrives = finish + server.latency;
  if (++m.next_hop == m.hops) {
    EventHandler& receiver = *m.receiver;
    const std::uint64_t tag = m.tag;
    m.next_hop = free_message_;  // the slot is free once the tail is on its last link
    free_message_ = index;
    queue_.post_at(tail_arrives, receiver, tag);
  } else {
    m.tail_ready = tail_arrives;
    const LinkId next = m.route[m.next_hop];
    // The next hop's first read is that link's line, mostly gone from the cache by then (1.8 M of the
    // 128-GPU step's 16.3 M D1 misses, 0.8 a hop): asked for now, it comes while this hop's latency
    // runs. Cachegrind does not model prefetches: only CPU time can show the gain (MEASUREMENTS.md).
    __builtin_prefetch(&servers_[next]);
    const Time head_arrives =
        switching_ == Switching::CutThrough ? start + server.latency : tail_arrives;
    queue_.post_at(head_arrives, *this, hop_tag(index, next));
  }
}

void Network::on_event(std::uint64_t hop) {
  // The message's line and the link's are both asked for here, neither waiting for the other.
  const std::uint32_t index = message_of(hop);
  LinkServer& server = servers_[link_of(hop)];
  Message& m = messages_[index];
  const Time arrival = queue_.now();
  // The common hop: the link is free, not watched, its service time cached for this message's size
  // and class, and nobody observes. Its only calls are tail calls, so it saves no registers.
  if (server.busy_until > arrival || server.watched == kWatched || server.cached_bytes != m.bytes ||
      server.cached_class != m.rate_class || observer_ != nullptr) [[unlikely]] {
    hop_in_full(hop);
    return;
  }
  // Cut-through: the tail cannot leave this link before it has arrived from the previous one.
  serve(index, m, server, arrival, max(arrival + server.cached_service, m.tail_ready));
}

void Network::hop_in_full(std::uint64_t hop) {
  const std::uint32_t index = message_of(hop);
  Message& m = messages_[index];
  const LinkId link = link_of(hop);
  LinkServer& server = servers_[link];
  const Time arrival = queue_.now();
  const Time start = max(arrival, server.busy_until);
  if (server.watched == kWatched) {
    if (arrival < watch_end_[link])
      watcher_->on_arrival({link, arrival, m.party, m.receiver, m.route, m.bytes, m.rate_class});
    else
      server.watched = kWatchEnded;  // every later arrival is later still
  }
  if (server.cached_bytes != m.bytes || server.cached_class != m.rate_class) {
    server.cached_bytes = m.bytes;
    server.cached_class = m.rate_class;
    const Bandwidth bw = m.rate_class == 0
                             ? links_[link].bandwidth
                             : class_bandwidth_[(m.rate_class - 1u) * links_.size() + link];
    server.cached_service = transfer_time(Bytes::of(m.bytes), bw);
  }
  const Time finish = max(start + server.cached_service, m.tail_ready);
  if (start > arrival) note_queue(server, queues_[link], arrival, start);
  const std::int64_t bytes = m.bytes;  // for the observer, read while `m` is in cache
  const std::uint64_t tag = m.tag;
  serve(index, m, server, start, finish);
  // Last, when `m` is no longer used: an observer may send messages, which can move messages_. The
  // record is built here only: built before, its stores were made on every hop, observed or not.
  if (observer_ != nullptr) [[unlikely]]
    observer_->on_hop(HopRecord{link, start, finish, Bytes::of(bytes), tag});
}

}  // namespace hybridsim::sim

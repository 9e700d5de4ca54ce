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
  for (LinkId id = 0; id < links_.size(); ++id) {
    const double bps = static_cast<double>(links_[id].bandwidth.bytes_per_second()) *
                       scale[static_cast<std::size_t>(links_[id].kind)];
    class_bandwidth_.push_back(
        Bandwidth::bytes_per_second(std::max<std::int64_t>(1, std::llround(bps))));
  }
  return static_cast<std::uint8_t>(class_scales_.size());
}

void Network::send_at(Time at, Route route, Bytes bytes, EventHandler& receiver,
                      std::uint64_t tag, std::uint8_t rate_class, const EventHandler* party) {
  if (route.empty()) {
    queue_.schedule_at(at, receiver, tag);
    return;
  }
  // Checked before a slot is taken, so a rejected send leaves nothing behind.
  if (rate_class > class_scales_.size()) throw InternalError("unknown rate class");
  if (at < queue_.now())
    throw InternalError("message sent into the past: at " + format_time(at) + ", now " +
                        format_time(queue_.now()));
  std::uint32_t index;
  if (!free_messages_.empty()) {
    index = free_messages_.back();
    free_messages_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(messages_.size());
    messages_.emplace_back();
  }
  messages_[index] = Message{route.data(), static_cast<std::uint32_t>(route.size()), 0,
                             bytes.count(), at, &receiver,
                             party != nullptr ? party : &receiver, tag, route[0], rate_class};
  if (at == queue_.now()) {
    on_event(index);  // the head is at the first link now
  } else {
    queue_.schedule_at(at, *this, index);
  }
}

void Network::attach_watcher(std::unique_ptr<ArrivalWatcher> watcher) {
  watcher_ = std::move(watcher);
  for (LinkServer& server : servers_) server.watched = 0;
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

void Network::shift_message(std::uint64_t index, Time dt, std::uint64_t tag) {
  Message& m = messages_[index];
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

Time Network::service_time(LinkId link, LinkServer& server, std::int64_t bytes,
                           std::uint8_t rate_class) {
  // The key fits while bytes < 2^55 (messages are at most a chunk); past that, no cache and no
  // overflow.
  const std::int64_t key = bytes < (std::int64_t{1} << 55) ? bytes * 256 + rate_class : -2;
  if (key != server.cached_key || key == -2) {
    server.cached_key = key;
    const Bandwidth bw = rate_class == 0
                             ? links_[link].bandwidth
                             : class_bandwidth_[(rate_class - 1u) * links_.size() + link];
    server.cached_service = transfer_time(Bytes::of(bytes), bw);
  }
  return server.cached_service;
}

void Network::note_queue(LinkServer& server, LinkQueue& queue, Time arrival, Time start) {
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

void Network::on_event(std::uint64_t index) {
  Message& m = messages_[index];
  const LinkId link = m.next_link;
  LinkServer& server = servers_[link];
  const Time arrival = queue_.now();
  const Time start = max(arrival, server.busy_until);
  if (server.watched != 0 && arrival < watch_end_[link]) [[unlikely]]
    watcher_->on_arrival({link, arrival, m.party, m.receiver, m.route, m.bytes, m.rate_class});
  Time finish = start + service_time(link, server, m.bytes, m.rate_class);
  // Cut-through: the tail cannot leave this link before it has arrived from the previous one.
  if (finish < m.tail_ready) finish = m.tail_ready;
  if (start > arrival) note_queue(server, queues_[link], arrival, start);
  server.busy_until = finish;
  const std::int64_t bytes = m.bytes;  // for the observer, read while `m` is in cache
  const std::uint64_t tag = m.tag;
  server.bytes += Bytes::of(bytes);
  server.busy += finish - start;
  ++server.messages;
  ++hops_;

  const Time tail_arrives = finish + server.latency;
  if (++m.next_hop == m.hops) {
    queue_.schedule_at(tail_arrives, *m.receiver, tag);
    free_messages_.push_back(static_cast<std::uint32_t>(index));
  } else {
    m.tail_ready = tail_arrives;
    m.next_link = m.route[m.next_hop];
    const Time head_arrives =
        switching_ == Switching::CutThrough ? start + server.latency : tail_arrives;
    queue_.schedule_at(head_arrives, *this, index);
  }
  // Last, when `m` is no longer used: an observer may send messages, which can move messages_. The
  // record is built here only: built before, its stores were made on every hop, observed or not.
  if (observer_ != nullptr) [[unlikely]]
    observer_->on_hop(HopRecord{link, start, finish, Bytes::of(bytes), tag});
}

}  // namespace hybridsim::sim

#include "sim/network.h"

#include "sim/error.h"

namespace hybridsim::sim {

Network::Network(EventQueue& queue, const LinkTable& links, Switching switching)
    : queue_(queue), links_(links), switching_(switching), servers_(links.size()) {
  for (LinkId id = 0; id < links.size(); ++id) {
    servers_[id].bandwidth = links[id].bandwidth;
    servers_[id].latency = links[id].latency;
  }
}

void Network::send(Route route, Bytes bytes, EventHandler& receiver, std::uint64_t tag) {
  send_at(queue_.now(), route, bytes, receiver, tag);
}

void Network::send_at(Time at, Route route, Bytes bytes, EventHandler& receiver,
                      std::uint64_t tag) {
  if (route.empty()) {
    queue_.schedule_at(at, receiver, tag);
    return;
  }
  // Checked before a slot is taken, so a rejected send leaves nothing behind.
  if (at < queue_.now())
    throw InternalError("message sent into the past: at " + format_time(at) + ", now " + format_time(queue_.now()));
  std::uint32_t index;
  if (!free_messages_.empty()) {
    index = free_messages_.back();
    free_messages_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(messages_.size());
    messages_.emplace_back();
  }
  messages_[index] = Message{route.data(), static_cast<std::uint32_t>(route.size()), 0,
                             bytes.count(), at, &receiver, tag};
  if (at == queue_.now()) {
    on_event(index);  // the head is at the first link now
  } else {
    queue_.schedule_at(at, *this, index);
  }
}

Time Network::service_time(LinkServer& server, std::int64_t bytes) {
  if (bytes != server.cached_bytes) {
    server.cached_bytes = bytes;
    server.cached_service = transfer_time(Bytes::of(bytes), server.bandwidth);
  }
  return server.cached_service;
}

void Network::note_queue(LinkServer& server, Time arrival, Time start) {
  // Drop messages that had started by the time this one arrived; the rest are waiting ahead of it.
  auto& starts = server.starts;
  while (server.starts_head < starts.size() && starts[server.starts_head] <= arrival)
    ++server.starts_head;
  if (server.starts_head == starts.size()) {
    starts.clear();
    server.starts_head = 0;
  } else if (server.starts_head > 64 && server.starts_head * 2 > starts.size()) {
    starts.erase(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(server.starts_head));
    server.starts_head = 0;
  }
  if (start > arrival) {
    starts.push_back(start);
    const auto waiting = static_cast<std::uint32_t>(starts.size() - server.starts_head);
    if (waiting > server.counters.max_queue_depth) server.counters.max_queue_depth = waiting;
  }
}

void Network::on_event(std::uint64_t index) {
  Message& m = messages_[index];
  const LinkId link = m.route[m.next_hop];
  LinkServer& server = servers_[link];
  const Time arrival = queue_.now();
  const Time start = max(arrival, server.busy_until);
  Time finish = start + service_time(server, m.bytes);
  // Cut-through: the tail cannot leave this link before it has arrived from the previous one.
  if (finish < m.tail_ready) finish = m.tail_ready;
  if (start > arrival) note_queue(server, arrival, start);
  server.busy_until = finish;
  server.counters.bytes += Bytes::of(m.bytes);
  server.counters.busy += finish - start;
  ++server.counters.messages;
  ++hops_;
  const HopRecord hop{link, start, finish, Bytes::of(m.bytes), m.tag};

  const Time tail_arrives = finish + server.latency;
  if (++m.next_hop == m.hops) {
    queue_.schedule_at(tail_arrives, *m.receiver, m.tag);
    free_messages_.push_back(static_cast<std::uint32_t>(index));
  } else {
    m.tail_ready = tail_arrives;
    const Time head_arrives =
        switching_ == Switching::CutThrough ? start + server.latency : tail_arrives;
    queue_.schedule_at(head_arrives, *this, index);
  }
  // Last, when `m` is no longer used: an observer may send messages, which can move messages_.
  if (observer_ != nullptr) observer_->on_hop(hop);
}

}  // namespace hybridsim::sim

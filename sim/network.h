// sim::Network — moves messages along routes of directed links. Each directed link is a FIFO server
// (a LinkServer): a message occupies it for bytes / bandwidth; its head reaches the next hop one link
// latency after it started (cut-through), and it can never finish a hop before its tail arrived from
// the previous one. Two directions of a cable are two links, independent of each other. See
// sim/README.md for the exact timing rule.
//   sim::Network net(queue, links);
//   net.send(route, Bytes::kib(512), receiver, /*tag=*/42);  // receiver.on_event(42) on delivery
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/event_queue.h"
#include "sim/huge_pages.h"
#include "sim/link.h"
#include "sim/work_progress.h"

namespace hybridsim::sim {

enum class Switching : std::uint8_t { CutThrough, StoreAndForward };

// What one link did, for metrics and link-utilization reports.
struct LinkCounters {
  Bytes bytes;                      // payload carried
  Time busy;                        // sum of occupied intervals
  std::uint64_t messages = 0;
  std::uint32_t max_queue_depth = 0;  // most messages ever waiting behind the one in service
};

// One message crossing one link: for traces (analysis/ implements this; sim/ only calls it).
struct HopRecord {
  LinkId link;
  Time start;      // head started on the link
  Time finish;     // tail left the link
  Bytes bytes;
  std::uint64_t tag;  // the sender's tag, so observers can group messages
};
class NetworkObserver {
 public:
  virtual void on_hop(const HopRecord& hop) = 0;

 protected:
  ~NetworkObserver() = default;
};

// A message's head reaching a watched link, before the link serves it (Network::watch).
struct LinkArrival {
  LinkId link;
  Time time;
  const EventHandler* party;     // whom the message travels for: send_at's `party`, or its receiver
  const EventHandler* receiver;
  const LinkId* route;           // its route (messages of one route share it)
  std::int64_t bytes;            // its size and rate class (Network::rate_class)
  std::uint8_t rate_class;
};
// Sees the arrivals at the links the network is told to watch. The network owns it, so that it
// lives as long as the messages it sees; the fast path's ledger of links is one (sim/fast/).
class ArrivalWatcher {
 public:
  virtual ~ArrivalWatcher() = default;
  virtual void on_arrival(const LinkArrival& arrival) = 0;
};

class Network final : public EventHandler {
 public:
  // `progress` (null: nobody) is told of the links' state as it is made, in batches (a step's
  // network at 65,536 GPUs: a million links, a second under load).
  Network(EventQueue& queue, const LinkTable& links, Switching switching = Switching::CutThrough,
          WorkProgress* progress = nullptr);
  // The bytes a link holds (its server, its watch's end, its queue), asserted where they are
  // defined: analysis/step/step_footprint.cpp models the network's memory with it.
  static constexpr std::int64_t kBytesPerLink = 64 + 8 + 32;
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Sends one message of `bytes` along `route` (the span must stay valid until delivery). When its
  // tail reaches the end, `receiver.on_event(tag)` runs. An empty route delivers at once.
  void send(Route route, Bytes bytes, EventHandler& receiver, std::uint64_t tag);
  // The same, but the head enters the first link at `at` (>= now): saves the sender an event when
  // it knows the message will be ready later (e.g. after a reduction). A message of rate class c
  // occupies each link for bytes / (its bandwidth × the class's scale for that link's kind).
  // `party`: whom the message travels for, as the arrival watcher sees it (the receiver if null; a
  // model standing for several collectives names the one it stands for).
  void send_at(Time at, Route route, Bytes bytes, EventHandler& receiver, std::uint64_t tag,
               std::uint8_t rate_class = 0, const EventHandler* party = nullptr);
  // send_at for a sender that has made sure, once, of what send_at tests at every message: a route
  // of at least one link, a rate class of this network's, and `at` not before now (a tree's edges,
  // checked as its plan is built, and its sends on an arrival, at now plus delays). Undefined
  // otherwise. The tests were about 7 instructions a message of the 1,024-GPU step's 10.3 M.
  void send_at_unchecked(Time at, Route route, Bytes bytes, EventHandler& receiver, std::uint64_t tag,
                         std::uint8_t rate_class = 0, const EventHandler* party = nullptr);
  // The rate class of messages whose payload moves at `scale[kind]` × each link's bandwidth (e.g. a
  // collective protocol's payload efficiency); equal scales share one class, all ones is class 0.
  std::uint8_t rate_class(const std::array<double, kLinkKindCount>& scale);
  // The scales rate class `c` stands for (all ones for class 0).
  std::array<double, kLinkKindCount> class_scale(std::uint8_t c) const {
    std::array<double, kLinkKindCount> ones;
    ones.fill(1.0);
    return c == 0 ? ones : class_scales_.at(c - 1u);
  }

  LinkCounters counters(LinkId link) const { return servers_[link].counters(); }
  const LinkTable& links() const { return links_; }
  EventQueue& queue() { return queue_; }
  std::uint64_t hops_processed() const { return hops_; }
  // Messages sent that have not yet entered their last link (then their slots are reused). Walks the
  // free slots: a count kept instead would cost every send and delivery an update, for tests.
  std::size_t messages_in_flight() const;
  // The most that were in flight at once so far: a slot is made only when none is free.
  std::size_t most_messages_in_flight() const { return messages_.size(); }
  void set_observer(NetworkObserver* observer) { observer_ = observer; }
  NetworkObserver* observer() const { return observer_; }
  Switching switching() const { return switching_; }

  // An optional watcher of arrivals at chosen links: while a link is watched, each message
  // reaching it is shown to the watcher before the link serves it. A hop reads one byte for this;
  // the call is made at watched links only. Attaching a watcher unwatches every link.
  void attach_watcher(std::unique_ptr<ArrivalWatcher> watcher);
  ArrivalWatcher* watcher() const { return watcher_.get(); }
  void watch(LinkId link, bool on) {
    servers_[link].watched = on ? kWatched : kUnwatched;
    watch_end_[link] = Time::max();
  }
  // A watched link's arrivals from `end` on are not shown: the fast path's claim on it has ended
  // (a tree that ran in full, or whose folded traffic there is over), and an ended claim sees
  // nothing, so the call would be made for nothing (it was, on most hops of a full step).
  void watch_until(LinkId link, Time end) {
    watch_end_[link] = end;
    if (servers_[link].watched != kUnwatched) servers_[link].watched = kWatched;  // read the end again
  }
  bool is_idle(LinkId link) const { return servers_[link].busy_until <= queue_.now(); }
  Time busy_until(LinkId link) const { return servers_[link].busy_until; }
  // Use computed elsewhere for this link (by a model of it): its counters are added (the deepest
  // queue kept) and the link stays busy until at least `busy_until`.
  void add_use(LinkId link, const LinkCounters& use, Time busy_until);

  // State and time shifts, for a caller that runs a network alone on its own queue and compares
  // its state at two moments (sim/fast/): a message in flight (the event tagged `index` moves it
  // on); what of the links' state matters for the future, seen from now (relative times,
  // comparable between two moments); and moving that state `dt` later.
  struct InFlight {
    const LinkId* route;
    std::uint32_t next_hop;
    std::int64_t bytes;
    std::uint8_t rate_class;
    Time tail_ready;
    const EventHandler* receiver;
    std::uint64_t tag;
  };
  // `hop`: the tag of the network's event that moves it (its message index and next link).
  InFlight in_flight(std::uint64_t hop) const {
    const Message& m = messages_[message_of(hop)];
    return {m.route, m.next_hop, m.bytes, m.rate_class, m.tail_ready, m.receiver, m.tag};
  }
  // `only`: those links alone (in that order; `extra` is then indexed alike), else every link.
  void append_link_state(std::vector<std::int64_t>& words, const std::vector<LinkId>* only = nullptr) const;
  // Moves the message that event `hop` moves `dt` later (its tail) and gives it `tag`; links busy past
  // now stay busy `dt` longer; each link's counters grow by `extra[link]` and the hop count by
  // `extra_hops`.
  void shift_message(std::uint64_t hop, Time dt, std::uint64_t tag);
  void shift_links(Time dt, const std::vector<LinkCounters>& extra, std::uint64_t extra_hops,
                   const std::vector<LinkId>* only = nullptr);

  void on_event(std::uint64_t hop) override;

 private:
  // A link's state, split by use so that a hop touches one line of it: what every hop reads and
  // writes (one cache line a link, whether it is watched included: in an array of its own that flag
  // was a second line a hop, 1.5 M of the step's 29 M D1 misses), and what only queueing needs.
  // A link's watch: none; on, its end to be read (watch_end_); or on, but an arrival found it
  // ended. Time only moves on, so an ended watch stays ended until watch_until moves its end:
  // read at every hop, the end was a second line on most hops of a full step's 2.2 M (their
  // links were watched once, by a tree that then ran in full).
  static constexpr std::uint8_t kUnwatched = 0, kWatched = 1, kWatchEnded = 2;
  struct alignas(64) LinkServer {
    Time busy_until;
    Time latency;
    // One-entry cache: most messages on a link have the same size and class (bytes −1: none yet).
    // Compared field by field with the message's: a key made of both cost a hop 9 instructions.
    std::int64_t cached_bytes = -1;
    Time cached_service;
    // Its LinkCounters, field by field: as a member struct their padding would leave no room for
    // `watched` in the line.
    Bytes bytes;
    Time busy;
    std::uint64_t messages = 0;
    std::uint32_t max_queue_depth = 0;
    std::uint8_t cached_class = 0;
    std::uint8_t watched = kUnwatched;
    LinkCounters counters() const { return {bytes, busy, messages, max_queue_depth}; }
  };
  static_assert(sizeof(LinkServer) == 64);
  struct LinkQueue {
    // Start times of messages that have been given the link, oldest first (for queue depth).
    std::vector<Time> starts;
    std::size_t head = 0;
  };
  // One cache line a message (64 bytes, aligned): unaligned, a hop's reads of it often took two.
  struct alignas(64) Message {
    const LinkId* route;
    std::uint32_t hops;
    std::uint32_t next_hop;  // in a free slot: the next free slot (kNoMessage: none)
    std::int64_t bytes;
    Time tail_ready;  // when the tail has arrived at the next hop's input
    EventHandler* receiver;
    const EventHandler* party;  // shown to the watcher at watched links
    std::uint64_t tag;
    std::uint8_t rate_class;
  };
  static_assert(sizeof(Message) == 64);
  static constexpr std::uint32_t kNoMessage = ~std::uint32_t{0};
  // A hop's event tag: the message's index (bits 0-31) and the link it is to cross (bits 32-63).
  // With the link in the message only, a hop loaded the message's line before it could ask for the
  // link's: two dependent misses (0.34 and 0.51 D1 misses an event in the 1,024-GPU step,
  // tests/bench/MEASUREMENTS.md, perf of 2026-12-06 04:10); from the tag both are asked for at once.
  static std::uint64_t hop_tag(std::uint32_t message, LinkId link) {
    return message | (static_cast<std::uint64_t>(link) << 32);
  }
  static std::uint32_t message_of(std::uint64_t hop) { return static_cast<std::uint32_t>(hop); }
  static LinkId link_of(std::uint64_t hop) { return static_cast<LinkId>(hop >> 32); }
  // A hop that waits, is watched, is observed or finds another size or class than the link's last:
  // out of line, so that the common hop (on_event) saves no registers (17 instructions a hop).
  [[gnu::noinline]] void hop_in_full(std::uint64_t hop);
  // What every hop ends with: the link's counters, and the message's next event.
  void serve(std::uint32_t index, Message& m, LinkServer& server, Time start, Time finish);
  [[gnu::noinline]] void add_message_slot();
  // send_at's rare cases: an empty route, a refusal, no free message slot.
  [[gnu::noinline]] void send_rare(Time at, Route route, Bytes bytes, EventHandler& receiver,
                                   std::uint64_t tag, std::uint8_t rate_class, const EventHandler* party);
  void note_queue(LinkServer& server, LinkQueue& queue, Time arrival, Time start);

  EventQueue& queue_;
  const LinkTable& links_;
  Switching switching_;
  std::vector<LinkServer, HugePageAllocator<LinkServer>> servers_;
  std::vector<Time> watch_end_;  // per link: when a watched link stops being seen (read if watched)
  std::vector<LinkQueue> queues_;
  // Rate classes beyond 0: their scales, and each link's bandwidth in them ([class-1][link]).
  std::vector<std::array<double, kLinkKindCount>> class_scales_;
  std::vector<Bandwidth> class_bandwidth_;
  std::uint8_t class_count_ = 0;  // class_scales_.size(), for a send's check (its size is a division)
  std::vector<Message, HugePageAllocator<Message>> messages_;
  // Free slots, last freed first, linked through their next_hop: a vector of them cost a send and a
  // delivery a size check each, and a delivery a call that made every hop save registers.
  std::uint32_t free_message_ = kNoMessage;
  std::uint64_t hops_ = 0;
  NetworkObserver* observer_ = nullptr;
  std::unique_ptr<ArrivalWatcher> watcher_;

  // What kBytesPerLink counts: an entry of each per-link vector.
  static_assert(sizeof(decltype(servers_)::value_type) + sizeof(decltype(watch_end_)::value_type) +
                    sizeof(decltype(queues_)::value_type) ==
                kBytesPerLink);
};

inline void Network::send_at(Time at, Route route, Bytes bytes, EventHandler& receiver, std::uint64_t tag,
                             std::uint8_t rate_class, const EventHandler* party) {
  // Inline, so that a collective's send (10.3 M in the 1,024-GPU step) passes no arguments through
  // the stack and saves no registers of its own: as a call it cost about 24 instructions a message.
  // Everything rare handled out of line (send_rare, here and in send_at_unchecked): with the empty
  // route, the refusals and the
  // growth here, every send saved six registers and sized a frame for them, and read the class
  // count as a vector's size (a division): about 15 instructions a send.
  if (route.empty() || rate_class > class_count_ || at < queue_.now()) [[unlikely]] {
    send_rare(at, route, bytes, receiver, tag, rate_class, party);
    return;
  }
  send_at_unchecked(at, route, bytes, receiver, tag, rate_class, party);
}

inline void Network::send_at_unchecked(Time at, Route route, Bytes bytes, EventHandler& receiver,
                                       std::uint64_t tag, std::uint8_t rate_class,
                                       const EventHandler* party) {
  if (free_message_ == kNoMessage) [[unlikely]] {
    send_rare(at, route, bytes, receiver, tag, rate_class, party);
    return;
  }
  const std::uint32_t index = free_message_;
  free_message_ = messages_[index].next_hop;
  // Field by field: a Message built first was built on the stack and copied.
  Message& m = messages_[index];
  m.route = route.data();
  m.hops = static_cast<std::uint32_t>(route.size());
  m.next_hop = 0;
  m.bytes = bytes.count();
  m.tail_ready = at;
  m.receiver = &receiver;
  m.party = party != nullptr ? party : &receiver;
  m.tag = tag;
  m.rate_class = rate_class;
  const LinkId first = route[0];
  if (at == queue_.now()) {
    on_event(hop_tag(index, first));  // the head is at the first link now
  } else {
    __builtin_prefetch(&servers_[first]);  // as for a later hop (serve)
    queue_.post_at(at, *this, hop_tag(index, first));
  }
}

}  // namespace hybridsim::sim

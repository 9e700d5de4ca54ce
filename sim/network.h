// sim::Network — moves messages along routes of directed links. Each directed link is a FIFO server
// (a LinkServer): a message occupies it for bytes / bandwidth; its head reaches the next hop one link
// latency after it started (cut-through), and it can never finish a hop before its tail arrived from
// the previous one. Two directions of a cable are two links and never interfere. See sim/README.md
// for the exact timing rule.
//   sim::Network net(queue, links);
//   net.send(route, Bytes::kib(512), receiver, /*tag=*/42);  // receiver.on_event(42) on delivery
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "sim/event_queue.h"
#include "sim/link.h"

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

class Network final : public EventHandler {
 public:
  Network(EventQueue& queue, const LinkTable& links, Switching switching = Switching::CutThrough);
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Sends one message of `bytes` along `route` (the span must stay valid until delivery). When its
  // tail reaches the end, `receiver.on_event(tag)` runs. An empty route delivers at once.
  void send(Route route, Bytes bytes, EventHandler& receiver, std::uint64_t tag);
  // The same, but the head enters the first link at `at` (>= now): saves the sender an event when
  // it knows the message will be ready later (e.g. after a reduction). A message of rate class c
  // occupies each link for bytes / (its bandwidth × the class's scale for that link's kind).
  // `claimant`: whose claims the message may cross without interfering (the receiver if null; a
  // ring embedded in a group that claims the links names the group, sim/ring_embed.h).
  void send_at(Time at, Route route, Bytes bytes, EventHandler& receiver, std::uint64_t tag,
               std::uint8_t rate_class = 0, const EventHandler* claimant = nullptr);
  // The rate class of messages whose payload moves at `scale[kind]` × each link's bandwidth (e.g. a
  // collective protocol's payload efficiency); equal scales share one class, all ones is class 0.
  std::uint8_t rate_class(const std::array<double, kLinkKindCount>& scale);

  const LinkCounters& counters(LinkId link) const { return servers_[link].counters; }
  const LinkTable& links() const { return links_; }
  EventQueue& queue() { return queue_; }
  std::uint64_t hops_processed() const { return hops_; }
  // Messages sent that have not yet entered their last link (then their slots are reused).
  std::size_t messages_in_flight() const { return messages_.size() - free_messages_.size(); }
  void set_observer(NetworkObserver* observer) { observer_ = observer; }
  NetworkObserver* observer() const { return observer_; }
  Switching switching() const { return switching_; }

  // Claims, for folding (sim/README.md, "Folding"). A folded collective claims the links of all
  // its routes while it runs; a message of any other receiver that crosses a claimed link marks the
  // network interfered: the fold assumed nothing else used them, so the caller must simulate again
  // with folding off. A link is idle once nothing occupies it any more. A claim holds until it is
  // released or, once a fold knows when its traffic on the link ends, until then (end_claim_at): a
  // message arriving at or after that time no longer interferes. A link one folded collective holds
  // can be promised to one more (the next bucket on the same ring): releasing hands it over. A
  // message of an embedded group's model (its claimant is the group, not its receiver) arriving at
  // a claimed link at the same time as one of another route marks the network interfered too: the
  // full simulation serves such ties in an order that need not repeat from window to window
  // (sim/ring_embed.h), so the model's order may not be its.
  const EventHandler* owner(LinkId link) const { return owners_[link]; }
  // Claims the link for `owner`; nullptr releases it (to the one it was promised to, if any).
  void set_owner(LinkId link, const EventHandler* owner) {
    LinkClaim& c = claims_[link];
    owners_[link] = owner != nullptr ? owner : c.next_owner;
    if (owner == nullptr) c.next_owner = nullptr;
    c.end = Time::max();
  }
  const EventHandler* next_owner(LinkId link) const { return claims_[link].next_owner; }
  void set_next_owner(LinkId link, const EventHandler* next) { claims_[link].next_owner = next; }
  // If `owner` holds the link, it passes to the one it was promised to (or to nobody).
  void release(LinkId link, const EventHandler* owner) {
    if (owners_[link] == owner) set_owner(link, nullptr);
  }
  void end_claim_at(LinkId link, Time end) { claims_[link].end = end; }
  Time claim_end(LinkId link) const { return claims_[link].end; }
  // For a fold that finds, after the fact, that its result may not be the full simulation's.
  void mark_interfered() { interfered_ = true; }
  bool is_idle(LinkId link) const { return servers_[link].busy_until <= queue_.now(); }
  Time busy_until(LinkId link) const { return servers_[link].busy_until; }
  bool interfered() const { return interfered_; }
  // What a fold computed elsewhere for this link: its counters are added (the deepest queue kept)
  // and it stays busy until at least `busy_until`.
  void add_use(LinkId link, const LinkCounters& use, Time busy_until);

  // For a model alone on its own queue (sim/ring_jump.cpp, "periodic jump"): a message in flight
  // (the event tagged `index` moves it on), what of the links' state matters for the future, seen
  // from now (relative times, comparable between two moments), and shifting that state by `dt`.
  struct InFlight {
    const LinkId* route;
    std::uint32_t next_hop;
    std::int64_t bytes;
    std::uint8_t rate_class;
    Time tail_ready;
    const EventHandler* receiver;
    std::uint64_t tag;
  };
  InFlight in_flight(std::uint64_t index) const {
    const Message& m = messages_[index];
    return {m.route, m.next_hop, m.bytes, m.rate_class, m.tail_ready, m.receiver, m.tag};
  }
  void append_link_state(std::vector<std::int64_t>& words) const;
  // Moves message `index` `dt` later (its tail) and gives it `tag`; links busy past now stay busy
  // `dt` longer; each link's counters grow by `extra[link]` and the hop count by `extra_hops`.
  void shift_message(std::uint64_t index, Time dt, std::uint64_t tag);
  void shift_links(Time dt, const std::vector<LinkCounters>& extra, std::uint64_t extra_hops);

  void on_event(std::uint64_t message) override;

 private:
  // A link's state, split by use so that a hop touches one line of it: what every hop reads and
  // writes (one cache line a link), whose claim it is (read every hop, so dense), and what only
  // queueing or a claim needs.
  struct alignas(64) LinkServer {
    Time busy_until;
    Time latency;
    // One-entry cache: most messages on a link have the same size and class. The key is
    // bytes · 256 + class (−1: none yet; messages of 2^55 bytes or more are not cached).
    std::int64_t cached_key = -1;
    Time cached_service;
    LinkCounters counters;
  };
  struct LinkQueue {
    // Start times of messages that have been given the link, oldest first (for queue depth).
    std::vector<Time> starts;
    std::size_t head = 0;
  };
  struct LinkClaim {
    const EventHandler* next_owner = nullptr;  // the one it passes to when the owner releases it
    Time end = Time::max();                    // the claim's end (see end_claim_at)
    // On a link an embedded group claims: the last arrival's time and route, to see ties.
    Time last_arrival = Time::max();
    const LinkId* last_route = nullptr;
  };
  struct Message {
    const LinkId* route;
    std::uint32_t hops;
    std::uint32_t next_hop;
    std::int64_t bytes;
    Time tail_ready;  // when the tail has arrived at the next hop's input
    EventHandler* receiver;
    const EventHandler* claimant;  // compared with the owner of each link it crosses
    std::uint64_t tag;
    // route[next_hop], read when the previous hop was served: the next hop's link state can then
    // be fetched without waiting for the route.
    LinkId next_link;
    std::uint8_t rate_class;
  };
  Time service_time(LinkId link, LinkServer& server, std::int64_t bytes, std::uint8_t rate_class);
  void note_queue(LinkServer& server, LinkQueue& queue, Time arrival, Time start);

  EventQueue& queue_;
  const LinkTable& links_;
  Switching switching_;
  std::vector<LinkServer> servers_;
  std::vector<const EventHandler*> owners_;  // per link: the folded collective that claimed it
  std::vector<LinkClaim> claims_;
  std::vector<LinkQueue> queues_;
  // Rate classes beyond 0: their scales, and each link's bandwidth in them ([class-1][link]).
  std::vector<std::array<double, kLinkKindCount>> class_scales_;
  std::vector<Bandwidth> class_bandwidth_;
  std::vector<Message> messages_;
  std::vector<std::uint32_t> free_messages_;
  std::uint64_t hops_ = 0;
  NetworkObserver* observer_ = nullptr;
  bool interfered_ = false;
};

}  // namespace hybridsim::sim

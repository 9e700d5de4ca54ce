// sim::LinkClaims — the ledger of the fast path's link claims (sim/README.md, "Folding"): who holds
// each link of a Network while a shortcut (a folded ring or tree, a group of embedded rings) assumes
// that nothing else crosses it, and whether anything did. One record per link: its holder, the one
// it is promised to next (the next bucket on the same ring), when the claim ends, and the last
// arrival of an embedded model's message there (to see ties). The ledger is the network's arrival
// watcher: each message reaching a claimed link is checked, and one of another party before the
// claim ends marks the network interfered (the caller then simulates again with the fast path off).
//   LinkClaims& claims = LinkClaims::of(network);
//   if (claims.holder(l) == nullptr) claims.claim(l, this);  ...  claims.release(l, this);
//   if (interfered(network)) { /* simulate again with fast_path off */ }
#pragma once
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/network.h"

namespace hybridsim::sim {

class LinkClaims final : public ArrivalWatcher {
 public:
  explicit LinkClaims(Network& network);
  // The network's ledger, attached as its arrival watcher on first use.
  static LinkClaims& of(Network& network);
  // The network's ledger, or null if nothing ever claimed a link of it.
  static const LinkClaims* find(const Network& network);

  const EventHandler* holder(LinkId link) const { return claims_[link].holder; }
  const EventHandler* promised(LinkId link) const { return claims_[link].promised; }
  // A message of another party arriving at or after this time no longer interferes (end_at).
  Time end(LinkId link) const { return claims_[link].end; }

  // `holder` holds the link until it is released (the claim has no end).
  void claim(LinkId link, const EventHandler* holder);
  // The holder lets go: the link passes to the one it was promised to (or to nobody), unended.
  void hand_over(LinkId link);
  // hand_over() if the claim has ended by `now`: an ended claim is no claim.
  void settle(LinkId link, Time now) {
    if (claims_[link].holder != nullptr && claims_[link].end <= now) hand_over(link);
  }
  // hand_over() if `holder` holds the link.
  void release(LinkId link, const EventHandler* holder) {
    if (claims_[link].holder == holder) hand_over(link);
  }
  // When the holder releases it, the link passes to `next` (one promise at a time).
  void promise(LinkId link, const EventHandler* next) { claims_[link].promised = next; }
  // The promise to `next`, if any, is withdrawn.
  void withdraw(LinkId link, const EventHandler* next) {
    if (claims_[link].promised == next) claims_[link].promised = nullptr;
  }
  // Once a shortcut knows when its traffic on the link ends: the claim ends then.
  // The network stops showing the link's arrivals then: an ended claim sees nothing.
  void end_at(LinkId link, Time end) {
    claims_[link].end = end;
    network_.watch_until(link, end);
  }

  // The holder (an embedded group) meets other parties' messages on this claimed link live: its
  // models' messages cross this very link, so they do not interfere, unless one arrives at the same
  // instant as a model's (the full simulation's order of such a tie need not repeat from window to
  // window). Only for a link the caller knows every other crossing of is simulated (sim/README.md,
  // "Rings that share links"); until the claim is handed over.
  void share(LinkId link) { claims_[link].shared = true; }
  // Each other party's message at a shared link is sent again, over that link alone, on `ghost`
  // (where the smaller chunks' models run, sim/fast/embedded_ring.h) at the same instant, so that
  // the ghosts meet the transfers their models meet and the bound compares like with like.
  void mirror_shared(Network* ghost) { ghost_ = ghost; }

  // An embedded model's route (its storage must outlive the claims) in `collective`: a tie between
  // two messages of one collective's routes over the same links, hop by hop, is no tie of two routes
  // (see on_arrival). Two collectives' routes never count as one, even over the same links: ZeRO-3's
  // parameter all-gather and gradient reduce-scatter on one ring tie there, and the full simulation's
  // order between them decides their finishes (the shipped ZeRO-3 scenario differed under auto).
  void add_route(const std::vector<LinkId>& route, const void* collective);

  // A jump (sim/fast/ring_jump.h) moved the holder's models on this link to `until`: another
  // party's message reaching it earlier would have met them on the way, so it interferes.
  void jumped(LinkId link, Time until) { claims_[link].jumped = max(claims_[link].jumped, until); }
  // Whether another party's message arrived at one of `links` at `since` or later.
  bool met_since(const std::vector<LinkId>& links, Time since) const;

  // For a shortcut that finds, after the fact, that its result may not be the full simulation's.
  void mark_interfered();
  bool interfered() const { return interfered_; }
  // Once interfered, the network's queue stops (EventQueue::stop) after the event under way: for a
  // caller that throws the run away then (a step whose embedded rings were interfered with runs
  // again without them, analysis/step/step_attempt.cpp), so that it does not run to its end first.
  void stop_when_interfered() { stop_when_interfered_ = true; }

  // A message reached a claimed link. Of another party than the holder, before the claim's end:
  // interfered. Of the holder's party but not for the holder itself (an embedded group's model,
  // sim/fast/embedded_ring.h), arriving at the same time as one of another route: interfered too, as the
  // full simulation serves such ties in an order that need not repeat from window to window, so
  // the model's order may not be its. Routes over the same links (add_route) count as one: two
  // channels of one ring from one GPU to the next (an NVSwitch machine's), sent by the same rank.
  void on_arrival(const LinkArrival& arrival) override;

 private:
  struct Claim {
    const EventHandler* holder = nullptr;
    const EventHandler* promised = nullptr;  // the one it passes to when the holder lets go
    Time end = Time::max();
    // On a link an embedded group claims: the last arrival's time and route, to see ties.
    Time last_arrival = Time::max();
    const LinkId* last_route = nullptr;
    Time last_other = Time::max();  // on a shared link: the last other party's arrival
    Time jumped = Time::zero();     // the holder's models jumped to then (jumped())
    bool shared = false;
  };
  // Where a mirrored message ends: nowhere.
  struct Sink final : EventHandler {
    void on_event(std::uint64_t) override {}
  };
  void set_holder(LinkId link, const EventHandler* holder);
  void mirror(const LinkArrival& arrival);
  const LinkId* same_route(const LinkId* route) const;

  Network& network_;  // whose links it watches while they are claimed
  std::vector<Claim> claims_;
  // Routes added, by their links' hash; and each one's first alike route (read on ties only).
  std::unordered_map<std::uint64_t, std::vector<std::pair<const std::vector<LinkId>*, const void*>>> routes_;
  std::unordered_map<const LinkId*, const LinkId*> alike_;
  bool interfered_ = false;
  bool stop_when_interfered_ = false;
  Network* ghost_ = nullptr;
  std::vector<LinkId> one_hop_;             // one_hop_[l] == l: the mirrored messages' routes
  std::vector<std::uint8_t> ghost_class_;  // per rate class of the network: the ghost's, plus one
  Sink sink_;
};

// Whether anything crossed a link the fast path had claimed (false if nothing was ever claimed):
// then the network's results are not the full simulation's.
bool interfered(const Network& network);

}  // namespace hybridsim::sim

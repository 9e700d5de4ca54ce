// sim::RingJump — the periodic jump of rings (sim/README.md, "Jumping over periodic ring steps"): a
// folded ring's private segment alone on its own queue (sim/fast/folded_ring.h), or the segments of
// a group of embedded rings live on the step's queue (sim/fast/ring_embedding.h). It watches the
// leading rings' steps (RingStepHook), keeps the state it took at the last few arrivals of a step's
// first message at position 0, and when the state repeats, shifted in time and steps, moves the run
// forward by whole periods at once.
//   RingJump jump(segment);  // segment: a RingCollective alone on its queue
//   if (jump.applies()) jump.attach();  ...  queue.run();  jump.jumped_steps();
#pragma once
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "sim/ring_collective.h"

namespace hybridsim::sim {

class LinkClaims;

// Periods of up to max(64, positions) steps, at most 256, are found; rings of fewer steps than 64
// are not worth comparing.
inline constexpr std::size_t kRingJumpHistory = 64;
inline constexpr std::uint32_t kRingJumpMinSteps = 64;
inline constexpr std::size_t kRingJumpMaxWords = std::size_t{1} << 23;  // 64 MiB of kept states

// What a jump moves. `rings` share one queue (their networks may differ); `leaders` take the
// snapshots (each one's steps); `links`, if not empty, are the only links of each network they use;
// with `shared_queue` other events may be pending beside theirs, and a jump then ends before the
// first of them (nothing else happens in between, so nothing else can meet them). Events of
// `beside` (rings that never meet these: on other links or another network) are passed over, with
// every event of `beside_network` (one whose traffic never reaches these rings' links) and the
// messages `carrier` carries for `beside`. What a passed event leads to may still meet these rings
// within a jump: so `guard` (the ledger of the links the rings stand for) is told each jump's end,
// and another party's message reaching one of `links` before it marks the network interfered, as
// does a ring of `rings` starting within a jump (then the step runs without the shortcut).
struct RingJumpScope {
  std::vector<RingCollective*> rings;
  std::vector<RingCollective*> leaders;
  std::vector<LinkId> links;
  bool shared_queue = false;
  std::vector<RingCollective*> beside;
  const EventHandler* beside_network = nullptr;
  const Network* carrier = nullptr;
  LinkClaims* guard = nullptr;
};

class RingJump final {
 public:
  explicit RingJump(RingCollective& ring)
      : RingJump(RingJumpScope{{&ring}, {&ring}, {}, false, {}, nullptr, nullptr, nullptr}) {}
  explicit RingJump(RingJumpScope scope);
  RingJump(const RingJump&) = delete;
  RingJump& operator=(const RingJump&) = delete;
  // Whether the rings may jump: enough steps, ring ops, chunks of one size (else a step's bytes
  // would depend on the step), nothing observing their messages.
  bool applies() const;
  void attach();  // sets the leaders' step hooks
  std::uint64_t jumped_steps() const { return jumped_steps_; }

 private:
  struct Leader final : RingStepHook {
    RingJump* jump = nullptr;
    std::uint32_t ring = 0;
    bool on_step_arrival(std::uint64_t tag) override { return jump->on_step_arrival(ring, tag); }
  };
  struct Snapshot {
    Time now;
    std::uint32_t leader = 0;
    std::uint32_t step = 0;
    std::vector<std::uint32_t> rings;                 // running, in order
    std::vector<std::uint32_t> lowest, highest;       // per running ring, of its pending events' steps
    std::vector<std::size_t> count_ends;              // per running ring, where its counts end
    Time foreign = Time::max();                       // the first pending event not the rings'
    std::uint64_t foreign_events = 0;
    std::vector<std::int64_t> state;   // relative: compared for equality
    std::vector<LinkCounters> links;   // additive: their growth over a period is repeated
    std::vector<std::int64_t> counts;  // additive: receives and sends left, bytes per edge, sent
    std::vector<std::uint64_t> hops;   // per network
  };
  bool on_step_arrival(std::uint32_t leader, std::uint64_t tag);
  // The state as the event `tag` (message 0 of a step at position 0 of ring `leader`) is handled;
  // false if it may not jump now (a ring partly running, something else on an unshared queue).
  bool take_snapshot(std::uint32_t leader, std::uint64_t tag, Snapshot& snap) const;
  // Appends the pending events, in the order they fire; false if one is not the rings' and the
  // queue is not shared.
  bool append_events(Snapshot& snap) const;
  void append_event(const PendingEvent& e, std::uint32_t ring, std::uint64_t tag, Snapshot& snap) const;
  // Whose event `e` is: a ring of the scope (its index, and the message's tag for a network's
  // event), one passed over, or another party's.
  static constexpr std::int64_t kPassed = -2, kForeign = -1;
  struct Owner {
    std::int64_t ring;
    std::uint64_t tag;
  };
  Owner owner(const PendingEvent& e) const;
  std::int64_t handler_of(const EventHandler* handler) const;  // a ring's index, kPassed or kForeign
  std::int64_t network_of(const EventHandler* handler) const;
  void interfere();
  std::size_t rings_started() const;
  // Periods of d steps it may jump from `snap`, `then` the state one period before (0: none).
  std::uint64_t periods(const Snapshot& snap, const Snapshot& then, std::uint32_t d) const;
  void jump(std::uint64_t tag, const Snapshot& snap, const Snapshot& then, std::uint64_t periods,
            std::uint32_t d);
  void shift_events(std::uint64_t tag, const Snapshot& snap, Time dt, std::uint32_t ds);
  void keep(Snapshot snap);

  RingJumpScope scope_;
  std::vector<Network*> networks_;
  // The rings' and the passed rings' handlers, sorted, each with its index or kPassed.
  std::vector<std::pair<const EventHandler*, std::int64_t>> handlers_;
  std::vector<Leader> leaders_;
  std::size_t history_size_ = kRingJumpHistory;
  std::deque<Snapshot> history_;
  Snapshot spare_;         // the last one dropped, whose buffers the next one reuses
  std::size_t words_ = 0;  // in the history's states
  std::uint64_t jumped_steps_ = 0;
  std::size_t started_at_jump_ = 0;  // rings started when it last jumped
  bool check_starts_ = false;        // at the first arrival after a jump
};

}  // namespace hybridsim::sim

// sim::RingJump — the periodic jump of a ring run alone on its own queue and network (sim/README.md,
// "Jumping over periodic ring steps"): a folded ring's private segment (sim/fast/folded_ring.h).
// It watches the ring's steps (RingStepHook), keeps the state it took at the last few arrivals of a
// step's first message at position 0, and when the state repeats, shifted in time and steps, moves
// the run forward by whole periods at once.
//   RingJump jump(segment);  // segment: a RingCollective alone on its queue
//   if (jump.applies()) segment.set_step_hook(&jump);  ...  queue.run();  jump.jumped_steps();
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/ring_collective.h"

namespace hybridsim::sim {

// Periods of up to max(64, positions) steps, at most 256, are found; rings of fewer steps than 64
// are not worth comparing.
inline constexpr std::size_t kRingJumpHistory = 64;
inline constexpr std::uint32_t kRingJumpMinSteps = 64;
inline constexpr std::size_t kRingJumpMaxWords = std::size_t{1} << 23;  // 64 MiB of kept states

class RingJump final : public RingStepHook {
 public:
  explicit RingJump(RingCollective& ring) : ring_(ring), network_(ring.network()) {}
  // Whether the ring may jump: enough steps, a ring op, chunks of one size (else a step's bytes
  // would depend on the step), nothing observing its messages.
  bool applies() const;
  bool on_step_arrival(std::uint64_t tag) override;
  std::uint64_t jumped_steps() const { return jumped_steps_; }

 private:
  struct Snapshot {
    Time now;
    std::uint32_t step = 0;
    std::uint32_t lowest_step = 0;  // of every pending event (and the one being handled)
    std::uint32_t highest_step = 0;
    std::vector<std::int64_t> state;   // relative: compared for equality
    std::vector<LinkCounters> links;   // additive: their growth over a period is repeated
    std::vector<std::int64_t> counts;  // additive: receives and sends left, bytes per edge, sent
    std::uint64_t hops = 0;
  };
  // The state as the event `tag` (message 0 of a step at position 0) is handled; false if it may
  // not jump now (a rank not running, something else on its queue).
  bool take_snapshot(std::uint64_t tag, Snapshot& snap) const;
  // Appends the pending events, in the order they fire; false if one is not the ring's.
  bool append_events(Snapshot& snap) const;
  // Jumps `periods` periods of d steps, `then` the state one period before `snap`.
  void jump(std::uint64_t tag, const Snapshot& snap, const Snapshot& then, std::uint64_t periods,
            std::uint32_t d);
  void keep(Snapshot snap);

  RingCollective& ring_;
  Network& network_;
  std::deque<Snapshot> history_;
  Snapshot spare_;         // the last one dropped, whose buffers the next one reuses
  std::size_t words_ = 0;  // in the history's states
  std::uint64_t jumped_steps_ = 0;
};

}  // namespace hybridsim::sim

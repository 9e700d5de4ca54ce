// Progress of long set-up work, for the person waiting on it: at 65,536 GPUs building the cluster's
// topology, searching its rings and routes, and building the programs take seconds each before the
// first event. The lower rooms (topology/, workloads/, sim/) tell a WorkProgress every few units of
// a part; the listener is a higher room's (analysis/step/step_progress.h: ProgramBuildTicks turns
// the ticks into progress lines with the time left at the part's rate), as no room here includes one.
//   struct Lines : sim::WorkProgress { void built(...) override { ... } } lines;
//   for (std::uint64_t i = 0; i < n; ++i) { sim::work_tick(&lines, "the routes", i, n, "ring steps"); ... }
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace hybridsim::sim {

class WorkProgress {
 public:
  // `done` of `total` `unit`s ("workers", "machines", "ring steps") of one part of the work (`part`:
  // "the workers' streams"); a part starts at done 0 and its rate so far gives its time left.
  virtual void built(std::string_view part, std::uint64_t done, std::uint64_t total,
                     std::string_view unit) = 0;

 protected:
  ~WorkProgress() = default;
};

// How many units between two ticks by default: a unit (a worker, a machine, a route) takes a few
// microseconds, so a tick every 64 is well under the listener's first delay and costs nothing a
// benchmark sees.
inline constexpr std::uint64_t kWorkTickEvery = 64;

// Tells `progress` (null: nobody) at the part's start, every `every` units and at its end.
inline void work_tick(WorkProgress* progress, std::string_view part, std::uint64_t done, std::uint64_t total,
                      std::string_view unit, std::uint64_t every = kWorkTickEvery) {
  if (progress != nullptr && (done % every == 0 || done == total)) progress->built(part, done, total, unit);
}

// A part done unit by unit: `body(i)` for each i in [0, total), told as work_tick tells (at the
// start, every `every` units, at the end; a unit that returns early from `body` is counted alike).
//   sim::ticked_loop(progress, "checking its GPUs' programs", n, "GPUs", [&](std::uint32_t g) { ... });
template <typename Index, typename Body>
void ticked_loop(WorkProgress* progress, std::string_view part, Index total, std::string_view unit,
                 Body&& body, std::uint64_t every = kWorkTickEvery) {
  for (Index i = 0; i < total; ++i) {
    work_tick(progress, part, i, total, unit, every);
    body(i);
  }
  work_tick(progress, part, total, total, unit, every);
}

// A part done in batches of `batch` units: `body(begin, end)` for each, told at the start, after
// every batch and at the end. A part of one batch or less is not told (no time worth a line). For
// loops of millions of cheap units, as a constructor's growing of its per-unit state (the stream
// executor's events and collectives, the network's links: seconds of page faults under load at
// 65,536 GPUs): one tick per batch, none per unit.
//   sim::ticked_batches(progress, "preparing its links", n, "links", 1 << 16,
//                       [&](std::size_t begin, std::size_t end) { state.resize(end); });
template <typename Body>
void ticked_batches(WorkProgress* progress, std::string_view part, std::size_t total, std::string_view unit,
                    std::size_t batch, Body&& body) {
  if (total <= batch) {
    body(std::size_t{0}, total);
    return;
  }
  for (std::size_t begin = 0; begin < total; begin += batch) {
    work_tick(progress, part, begin, total, unit, 1);
    body(begin, std::min(total, begin + batch));
  }
  work_tick(progress, part, total, total, unit, 1);
}

// How many units of a cheap per-unit state (an event's, a link's) a batch of ticked_batches grows:
// 2 MB or so, a millisecond idle.
inline constexpr std::size_t kStateBatch = std::size_t{1} << 16;

// One opaque piece of work (a constructor, a single call): told at its start and at its end (a line
// then when one is due, though its rate tells nothing of another part's).
template <typename F>
decltype(auto) work_part(WorkProgress* progress, std::string_view part, F&& work) {
  work_tick(progress, part, 0, 1, "part");
  if constexpr (std::is_void_v<decltype(work())>) {
    work();
    work_tick(progress, part, 1, 1, "part");
  } else {
    decltype(auto) result = work();
    work_tick(progress, part, 1, 1, "part");
    return result;
  }
}

}  // namespace hybridsim::sim

// Which of a step's folding rings cannot fall back to running in full as they start, and what such a
// ring holds in flight at most: its models' messages, one channel at a time, on networks of their own
// (sim/fast/folded_ring.h). What a step's up-front memory check counts for it instead of every
// position of every channel (analysis/step/step_runner.cpp's step_budget_cost; issue 31):
//   const std::vector<std::uint8_t> safe = rings_without_fallback(lanes, collectives);
//   if (safe[i]) in_flight[i] = folding_ring_window(dynamic_cast<const sim::FoldedRing&>(*collectives[i]));
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/step/step_in_flight.h"
#include "sim/collective.h"

namespace hybridsim::sim {
class FoldedRing;
}

namespace hybridsim::analysis {

// Per collective (indexed as `collectives`; a null one, a folded step's shadow, runs nothing): 1 where
// it is a FoldedRing that folds whatever the run's timing. Its plan lets it fold (may_fold(), no
// plan_only_refusal()), and as it starts (FoldedRing::refusal) its links can be neither busy nor held
// by two other folded collectives: every collective that crosses its links, and every one that
// crosses theirs, in turn (a component of collectives joined by a shared link), is such a ring, and
// all of them are of one lane (step_in_flight.h: the same GPUs, each on the same stream). Then
// nothing but them ever sends on those links, and none runs in full, by induction in the order
// they start: the first finds the links idle and unclaimed; a later one starts at a rank once that
// rank is done with the one before it, which is done only once every rank has joined it, so every
// rank is past the one before that and has released its claims (FoldedRing::on_event): the links
// are held by one folded collective at most, promised to none. A collective of another kind (a
// tree, an all-to-all, a chain, an embedded ring, a ring in full), or of two lanes, makes its
// component's rings not safe; one whose links this cannot read (not a ring), every ring.
std::vector<std::uint8_t> rings_without_fallback(
    const InFlightLanes& lanes, const std::vector<std::unique_ptr<sim::Collective>>& collectives);

// The most messages a folded ring holds in flight at once: its models run one channel at a time
// (FoldedRing::run_folded), each on `period` of the channel's positions, a chunk in flight from each
// at most (sim::RingCollective::full_cost). The period is the join times' as well as the routes'
// (FoldedRing::period_of), and chunks of unequal size under auto run the channel in full: known only
// as it starts, so counted at every position of its largest channel, not at ring_plan_period.
std::uint64_t folding_ring_window(const sim::FoldedRing& ring);

}  // namespace hybridsim::analysis

// StepTraceObserver's ring steps: each traced rank's progress through its ring's steps as messages
// arrive, a step held until the collective's own slice is written, then written inside it ("reduce-scatter
// step 2/7"). A file of its own: the per-rank state machine of a ring is apart from the slices of
// kernels and collectives (step_trace.cpp).
#include <string>
#include <vector>

#include "analysis/trace/step_trace.h"
#include "sim/error.h"

namespace hybridsim::analysis {

StepTraceObserver::RingState& StepTraceObserver::ring_state(const sim::RingCollective& ring) {
  const auto found = rings_.find(&ring);
  if (found != rings_.end()) return found->second;
  RingState state;
  state.gpu_of_rank.assign(ring.ranks(), -1);
  state.ranks.resize(ring.ranks());
  for (std::uint32_t r = 0; r < ring.ranks(); ++r) {
    const sim::Route route = ring.route_from(r);
    if (route.empty()) continue;
    const auto rank = topology_.device(topology_.link_ends(route.front()).from).gpu_rank;
    if (!rank || !keeps(static_cast<std::uint32_t>(*rank))) continue;
    state.gpu_of_rank[r] = *rank;
    ++state.ranks_left;
  }
  if (state.ranks_left == 0) state = RingState{};  // nothing of it is traced: an empty entry
  return rings_.emplace(&ring, std::move(state)).first->second;
}

void StepTraceObserver::on_ring_arrival(const sim::RingArrival& a) {
  const sim::RingCollective& ring = *a.ring;
  if (ring.op() == sim::CollectiveOp::Broadcast) return;  // model-parallel transfers: no steps
  RingState& state = ring_state(ring);
  if (state.ranks_left == 0) return;  // all its traced ranks are done (or it has none)
  const int gpu = state.gpu_of_rank[a.rank];
  if (gpu < 0) return;
  RankSteps& r = state.ranks[a.rank];
  if (!r.started) {
    r.started = true;
    r.step_start = ring.rank_start_time(a.rank);
  }
  if (a.step < r.next_step) throw InternalError("ring arrival for a step already complete");
  const std::size_t i = a.step - r.next_step;
  if (i >= r.arrivals.size()) r.arrivals.resize(i + 1, 0);
  ++r.arrivals[i];
  // Step k ends when the rank has taken in all its messages and step k − 1 has ended.
  bool completed = false;
  while (!r.arrivals.empty() && r.arrivals.front() == ring.messages_per_step()) {
    const sim::Time end = sim::max(r.step_start, a.time);
    hold_ring_step(ring, gpu, r.next_step, r.step_start, end);
    r.step_start = end;
    r.arrivals.erase(r.arrivals.begin());
    ++r.next_step;
    completed = true;
  }
  // The ring's entry stays (so late messages to untraced ranks find it) but its per-rank state goes.
  if (completed && r.next_step == ring.steps() && --state.ranks_left == 0) state = RingState{};
}

void StepTraceObserver::hold_ring_step(const sim::RingCollective& ring, int gpu, std::uint32_t step,
                                       sim::Time start, sim::Time end) {
  const auto g = static_cast<std::size_t>(gpu);
  if (end <= start || comm_tid_[g] == 0 || outside_window(start, end)) return;
  held_steps_[g].push_back({&ring, step, start, end});
}

void StepTraceObserver::write_held_steps(std::uint32_t gpu, sim::Time start, sim::Time end) {
  std::vector<PendingStep>& held = held_steps_[gpu];
  std::size_t kept = 0;
  for (const PendingStep& p : held) {
    if (p.start < start || p.end > end) {  // not this collective's: keep it
      held[kept++] = p;
      continue;
    }
    const sim::RingCollective& ring = *p.ring;
    const std::uint32_t half = ring.ranks() - 1;  // steps of one reduce-scatter or all-gather
    const bool reducing = ring.op() == sim::CollectiveOp::ReduceScatter ||
                          (ring.op() == sim::CollectiveOp::AllReduce && p.step < half);
    scratch_.assign(reducing ? "reduce-scatter step " : "all-gather step ");
    scratch_ += std::to_string(p.step % half + 1) + "/" + std::to_string(half);
    writer_.complete(gpu_pid(static_cast<int>(gpu)), comm_tid_[gpu], scratch_, "ring-step", p.start, p.end,
                     {{"ring", sim::collective_op_name(ring.op())},
                      {"ring_ranks", ring.ranks()},
                      {"channels", ring.channel_count()},
                      {"step", p.step}});
  }
  held.resize(kept);
}

}  // namespace hybridsim::analysis

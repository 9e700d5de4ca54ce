// The most messages a step's network can hold in flight at once, in messages, from each collective's
// own most (sim::SimulationCost::in_flight of its full_cost(): a ring's chunk from every position of
// every channel, a tree's messages up every edge, an all-to-all's every part) and which collectives
// can have messages in flight together. A bound, derived, not fitted (analysis/README.md):
//   const InFlightLanes lanes(program);        // once per program
//   std::uint64_t most = lanes.most(in_flight);  // in_flight[c]: collective c's own most (0: none)
#pragma once
#include <cstdint>
#include <vector>

namespace hybridsim::workloads {
struct StepProgram;
}

namespace hybridsim::analysis {

// Why it bounds: a message in flight was sent by a rank that has started its collective and is not
// done with it (a rank is done once everything it sent was delivered: sim::finish_if_complete), so
// its GPU's stream is at that collective. A lane is the collectives on one stream of the same GPUs
// (the same members, each on the same stream): every member meets them in the same order (else
// the step deadlocks). In a lane of rings, trees, all-to-alls and their chains, a rank is done only
// once every member has started (it receives what each sent), so a member that is two collectives
// ahead of another cannot be: at most two collectives of a lane, one after the other, have
// messages in flight at once. A broadcast's root is done once delivered, whoever has started; a
// lane holding one has at most one collective in flight per member (each sends only at its own),
// and a transfer (a broadcast of two GPUs: its root alone sends) one per stream of its root's GPU.
// The lanes' sum bounds the step's: collectives of several streams (ZeRO's gathers beside its
// reduce-scatters, a pipeline's transfers beside its tensor-parallel rings), and of several groups
// of GPUs (each MoE expert group's all-to-all), have messages in flight at once.
class InFlightLanes {
 public:
  explicit InFlightLanes(const workloads::StepProgram& program);
  // The sum over lanes of the largest `at once` of its collectives' `in_flight` (indexed as the
  // program's collectives; an index past them is a lane of its own). Saturating.
  std::uint64_t most(const std::vector<std::uint64_t>& in_flight) const;
  std::size_t lanes() const { return at_once_.size(); }
  // Collective c's lane (an index past the program's collectives: a lane of its own, numbered after all).
  std::size_t lane_of(std::size_t c) const { return c < lane_of_.size() ? lane_of_[c] : at_once_.size() + c; }

 private:
  std::vector<std::uint32_t> lane_of_;  // per collective of the program
  std::vector<std::uint32_t> at_once_;  // per lane: its collectives that may have messages in flight together
};

}  // namespace hybridsim::analysis

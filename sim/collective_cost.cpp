// What each collective costs simulated in full, message by message (sim/budget.h), the check each
// makes of it as it starts in full, and the events each is expected to take (the plain collectives
// all of them, as they always run in full; a chain its parts', each the way it will run). Counts, not
// timings: they follow the constructors' plans (a ring's steps × messages per chunk per edge, a
// tree's messages per channel per edge).
#include <string>

#include "sim/collective_chain.h"
#include "sim/ring_collective.h"
#include "sim/tree_collective.h"

namespace hybridsim::sim {

namespace {

// Per ring position or tree node: its order and position entries, its route's vector, its byte
// and delay counters; per rank its RankProgress.
constexpr std::int64_t kPositionBytes =
    2 * sizeof(std::uint32_t) + sizeof(std::vector<LinkId>) + 3 * sizeof(std::int64_t) + sizeof(Time);
constexpr std::int64_t kRankBytes = sizeof(RankProgress);

std::int64_t route_bytes(const std::vector<LinkId>& route) {
  return kPositionBytes + static_cast<std::int64_t>(route.size() * sizeof(LinkId));
}

}  // namespace

SimulationCost RingCollective::full_cost() const {
  SimulationCost cost;
  const bool broadcast = op_ == CollectiveOp::Broadcast;
  const std::uint64_t per_edge =
      broadcast ? messages_per_chunk_ : std::uint64_t{steps_} * messages_per_chunk_;
  for (const ChannelState& ch : channels_) {
    for (std::uint32_t p = 0; p < n_; ++p) {
      const auto& route = ch.plan.routes[p];
      cost.state_bytes += route_bytes(route);
      // A broadcast's last position sends nothing; a single rank's ring has no steps.
      if ((broadcast && p + 1 == n_) || ring_ranks_ < 2) continue;
      cost.messages += per_edge;
      cost.events += per_edge * (route.size() + 1);  // one per link entered, one delivery
      // A rank sends a whole chunk at its first step; later steps wait for the previous one.
      cost.in_flight += messages_per_chunk_;
    }
  }
  cost.state_bytes += static_cast<std::int64_t>(n_) * kRankBytes;
  return cost;
}

ExpectedEvents RingCollective::expected_events() const { return {.queue = full_cost().events}; }

void RingCollective::charge_budget() const {
  if (config_.budget == nullptr) return;
  std::string what = "a ring " + std::string(collective_op_name(op_)) + " of " + format_bytes(size_) +
                     " over " + std::to_string(ring_ranks_) + " ranks starts in full (" + std::to_string(n_) +
                     " of them " + "message by message)";
  config_.budget->charge(full_cost(), what);
}

SimulationCost TreeCollective::full_cost() const {
  SimulationCost cost;
  for (const ChannelState& ch : channels_) {
    for (std::uint32_t r = 0; r < n_; ++r) {
      // Each edge carries every message up, then back down.
      if (ch.plan->parent[r] >= 0) {
        cost.state_bytes += route_bytes(ch.plan->up[r]);
        cost.events += std::uint64_t{messages_} * (ch.plan->up[r].size() + 1);
        cost.messages += messages_;
        // A leaf sends all its messages at once.
        cost.in_flight += messages_;
      }
      for (const auto& route : ch.plan->down[r]) {
        cost.state_bytes += route_bytes(route);
        cost.events += std::uint64_t{messages_} * (route.size() + 1);
        cost.messages += messages_;
      }
    }
  }
  cost.state_bytes += static_cast<std::int64_t>(n_) * kRankBytes;
  return cost;
}

ExpectedEvents TreeCollective::expected_events() const { return {.queue = full_cost().events}; }

void TreeCollective::charge_budget() {
  if (charged_) return;
  charged_ = true;
  if (config_.budget == nullptr) return;
  config_.budget->charge(full_cost(), budget_cause());
}

std::string TreeCollective::budget_cause() const {
  std::int64_t bytes = 0;
  for (const ChannelState& ch : channels_) bytes += ch.bytes;
  return "a tree all-reduce of " + format_bytes(Bytes::of(bytes)) + " over " + std::to_string(n_) +
         " ranks starts";
}

SimulationCost CollectiveChain::full_cost() const {
  SimulationCost cost;
  for (const auto& part : parts_) cost += part->full_cost();
  return cost;
}

ExpectedEvents CollectiveChain::expected_events() const {
  ExpectedEvents sum;
  for (const auto& part : parts_) sum += part->expected_events();
  return sum;
}

bool CollectiveChain::may_fold() const {
  for (const auto& part : parts_)
    if (part->may_fold()) return true;
  return false;
}

}  // namespace hybridsim::sim

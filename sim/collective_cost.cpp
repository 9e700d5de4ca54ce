// What each collective costs simulated in full, message by message (sim/budget.h), the check each
// makes of it as it starts in full, and the events each is expected to take (the plain collectives
// all of them, as they always run in full; a chain its parts', each the way it will run). Counts, not
// timings: they follow the constructors' plans (a ring's steps × messages per chunk per edge, a
// tree's messages per channel per edge).
#include <algorithm>
#include <string>

#include "sim/collective_chain.h"
#include "sim/heap_bytes.h"
#include "sim/ring_collective.h"
#include "sim/tree_collective.h"

namespace hybridsim::sim {

namespace {

// A route held as its own vector (a ring position's, a tree edge's in the plan).
std::int64_t route_block(const std::vector<LinkId>& route) { return heap_array<LinkId>(route.size()); }

}  // namespace

SimulationCost RingCollective::full_cost() const {
  SimulationCost cost;
  const bool broadcast = op_ == CollectiveOp::Broadcast;
  const std::uint64_t per_edge =
      broadcast ? messages_per_chunk_ : std::uint64_t{steps_} * messages_per_chunk_;
  // What it holds running (sim/README.md, "Budgets"): itself; per channel (pushed one by one, so up
  // to twice as many as there are) its plan's order and routes, each rank's position, its chunks and
  // its positions (64 bytes each); per rank its RankProgress.
  cost.state_bytes = heap_block(sizeof(RingCollective)) +
                     heap_block(static_cast<std::int64_t>(2 * channels_.size() * sizeof(ChannelState))) +
                     heap_array<RankProgress>(n_);
  for (const ChannelState& ch : channels_) {
    cost.state_bytes += heap_array<std::uint32_t>(n_) + heap_array<std::vector<LinkId>>(n_) +
                        heap_array<std::uint32_t>(n_) + heap_array<std::int64_t>(ch.chunk_bytes.size()) +
                        heap_array<Position>(n_);
    for (std::uint32_t p = 0; p < n_; ++p) {
      const auto& route = ch.plan.routes[p];
      cost.state_bytes += route_block(route);
      // A broadcast's last position sends nothing; a single rank's ring has no steps.
      if ((broadcast && p + 1 == n_) || ring_ranks_ < 2) continue;
      cost.messages += per_edge;
      cost.events += per_edge * (route.size() + 1);  // one per link entered, one delivery
      // A rank sends a whole chunk at its first step; later steps wait for the previous one.
      cost.in_flight += messages_per_chunk_;
    }
  }
  return cost;
}

ExpectedEvents RingCollective::expected_events() const { return {.queue = full_cost().events}; }

std::string RingCollective::budget_cause() const {
  return "a ring " + std::string(collective_op_name(op_)) + " of " + format_bytes(size_) + " over " +
         std::to_string(ring_ranks_) + " ranks starts in full (" + std::to_string(n_) + " of them " +
         "message by message)";
}

void RingCollective::charge_budget() const {
  if (config_.budget == nullptr) return;
  config_.budget->charge(full_cost(), budget_cause());
}

SimulationCost TreeCollective::full_cost() const {
  // What it holds running (sim/README.md, "Budgets"): itself and its plans (shared with the other
  // collectives of its member set, counted whole for each); per channel (pushed one by one) what
  // channel_cost() counts; per rank its RankProgress; its mixes of link kinds and their bytes.
  SimulationCost cost;
  cost.state_bytes = heap_block(sizeof(TreeCollective)) +
                     heap_block(static_cast<std::int64_t>(2 * channels_.size() * sizeof(ChannelState))) +
                     heap_array<RankProgress>(n_) + heap_block(256 * kLinkKindCount) +
                     heap_array<std::int64_t>(256);  // at most 256 mixes (edge() refuses more)
  for (std::uint32_t c = 0; c < channel_count(); ++c) cost += channel_cost(c);
  return cost;
}

SimulationCost TreeCollective::channel_cost(std::uint32_t c) const {
  // Its nodes (64 bytes each), its children's slots (reserved; with the padding that keeps a rank's
  // two children in one line at most half as many again, within the twice counted), its routes'
  // links packed, its pacing under a channel cap.
  const bool paced = config_.timing.channel_cap.bytes_per_second() > 0;
  const TreeChannel& t = *channels_[c].plan;
  SimulationCost cost;
  std::size_t links = 0, children = 0;
  cost.state_bytes = heap_block(sizeof(TreeChannel)) + heap_array<std::int32_t>(n_) +
                     3 * heap_array<std::vector<LinkId>>(n_) + heap_array<Node>(n_) +
                     (paced ? heap_array<Time>(n_) : 0);
  for (std::uint32_t r = 0; r < n_; ++r) {
    links += t.up[r].size();
    children += t.children[r].size();
    cost.state_bytes += route_block(t.up[r]) + heap_array<std::uint32_t>(t.children[r].size()) +
                        heap_array<std::vector<LinkId>>(t.down[r].size());
    // Each edge carries every message up, then back down.
    if (t.parent[r] >= 0) {
      cost.events += std::uint64_t{messages_} * (t.up[r].size() + 1);
      cost.messages += messages_;
      // A leaf sends all its messages at once, and that is the most: a rank sends message j up
      // once its children delivered theirs, and down once its parent did, and the root sends it
      // down once every j went up. So the edges that carry one message j at once are never one
      // above the other, each over a leaf of its own: one per leaf, each of its messages.
      if (t.children[r].empty()) cost.in_flight += messages_;
    }
    for (const auto& route : t.down[r]) {
      links += route.size();
      cost.state_bytes += route_block(route);
      cost.events += std::uint64_t{messages_} * (route.size() + 1);
      cost.messages += messages_;
    }
  }
  cost.state_bytes +=
      heap_array<LinkId>(links) + heap_block(static_cast<std::int64_t>(2 * children * sizeof(ChildSlot)));
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
  std::vector<std::uint32_t> all(channels_.size());
  for (std::uint32_t c = 0; c < all.size(); ++c) all[c] = c;
  return budget_cause(all);
}

std::string TreeCollective::budget_cause(const std::vector<std::uint32_t>& channels) const {
  std::int64_t bytes = 0;
  for (const std::uint32_t c : channels) bytes += channels_[c].bytes;
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

#include "sim/collectives/all_to_all.h"

#include <algorithm>
#include <string>

#include "sim/error.h"

namespace hybridsim::sim {

namespace {

// Each rank's buffer in n equal parts (NCCL's all-to-all takes a count per peer: size / n), each sent
// as messages of at most `message_size` (0: one message).
Bytes part_of(Bytes size, std::uint32_t ranks) { return Bytes::of(size.count() / ranks); }

std::uint32_t messages_of(Bytes part, Bytes message_size) {
  const std::int64_t cap = message_size.count() > 0 ? message_size.count() : part.count();
  return part.count() == 0 ? 0 : static_cast<std::uint32_t>((part.count() + cap - 1) / cap);
}

}  // namespace

AllToAllCollective::AllToAllCollective(Network& network, std::uint32_t ranks, PairRoutes routes, Bytes size,
                                       CollectiveConfig config)
    : network_(network), n_(ranks), routes_(std::move(routes)), config_(config), rank_(ranks) {
  if (n_ == 0 || routes_.size() != n_) throw InternalError("all-to-all: routes must be ranks x ranks");
  for (const auto& row : routes_)
    if (row.size() != n_) throw InternalError("all-to-all: routes must be ranks x ranks");
  part_ = part_of(size, n_);
  messages_per_part_ = messages_of(part_, config_.message_size);
  rate_class_ = network_.rate_class(config_.timing.link_rate_scale);
  for (auto& r : rank_) {
    r.receives_left = static_cast<std::int64_t>(n_ - 1) * messages_per_part_;
    r.sends_left = r.receives_left;
  }
}

void AllToAllCollective::notify_rank_done(EventHandler& handler, std::uint64_t tag_base) {
  handler_ = &handler;
  tag_base_ = tag_base;
}

void AllToAllCollective::start(std::uint32_t r) {
  RankProgress& me = rank_[r];
  if (me.started) throw InternalError("all-to-all: rank " + std::to_string(r) + " started twice");
  if (config_.budget != nullptr && !charged_) {
    charged_ = true;  // before the first message (sim/budget.h)
    config_.budget->charge(full_cost(), "an all-to-all of " + format_bytes(part_) + " per pair over " +
                                            std::to_string(n_) + " ranks starts");
  }
  me.started = true;
  const Time now = network_.queue().now();
  me.start = now;
  me.finish = now;
  const Time ready = now + config_.timing.base_latency;
  const std::int64_t m = messages_per_part_;
  for (std::int64_t j = 0; j < m; ++j) {
    const std::int64_t bytes = part_.count() / m + (j < part_.count() % m ? 1 : 0);
    for (std::uint32_t k = 1; k < n_; ++k) {
      const std::uint32_t to = (r + k) % n_;
      const Route route(routes_[r][to]);
      const Time at = ready + config_.timing.step_delay(route, network_.links());
      network_.send_at(at, route, Bytes::of(bytes), *this, std::uint64_t{r} * n_ + to, rate_class_);
      for (const LinkId l : route)
        by_kind_[static_cast<std::size_t>(network_.links()[l].kind)] += Bytes::of(bytes);
      ++sent_;
    }
  }
  finish(r);
}

void AllToAllCollective::on_event(std::uint64_t tag) {
  const auto from = static_cast<std::uint32_t>(tag / n_), to = static_cast<std::uint32_t>(tag % n_);
  --rank_[to].receives_left;
  --rank_[from].sends_left;
  finish(to);
  if (from != to) finish(from);
}

void AllToAllCollective::finish(std::uint32_t r) {
  if (finish_if_complete(rank_[r], network_.queue(), handler_, tag_base_ + r)) ++done_;
}

SimulationCost AllToAllCollective::full_cost() const {
  SimulationCost cost;
  for (std::uint32_t i = 0; i < n_; ++i)
    for (std::uint32_t j = 0; j < n_; ++j) {
      if (i == j) continue;
      cost.state_bytes +=
          static_cast<std::int64_t>(routes_[i][j].size() * sizeof(LinkId) + sizeof(routes_[i][j]));
      cost.messages += messages_per_part_;
      cost.events += std::uint64_t{messages_per_part_} * (routes_[i][j].size() + 1);
      cost.in_flight += messages_per_part_;  // a rank sends everything as it joins
    }
  cost.state_bytes += static_cast<std::int64_t>(n_ * sizeof(RankProgress));
  return cost;
}

SimulationCost AllToAllCollective::least_cost(std::uint32_t ranks, Bytes size, Bytes message_size) {
  // full_cost() with every route one link long, pair by pair.
  const std::uint64_t pairs = std::uint64_t{ranks} * (ranks == 0 ? 0 : ranks - 1);
  const std::uint64_t messages = pairs * messages_of(part_of(size, std::max(ranks, 1u)), message_size);
  SimulationCost cost;
  cost.state_bytes = static_cast<std::int64_t>(pairs * (sizeof(LinkId) + sizeof(std::vector<LinkId>)) +
                                               std::uint64_t{ranks} * sizeof(RankProgress));
  cost.messages = messages;
  cost.events = 2 * messages;
  cost.in_flight = messages;
  return cost;
}

ExpectedEvents AllToAllCollective::expected_events() const { return {.queue = full_cost().events}; }

}  // namespace hybridsim::sim

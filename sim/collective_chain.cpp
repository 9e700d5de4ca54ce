#include "sim/collective_chain.h"

#include <algorithm>

#include <string>

#include "sim/error.h"
#include "sim/fast/fast_path.h"

namespace hybridsim::sim {

// Done notifications from part p for its member i arrive with tag (p << 32) | i.
CollectiveChain::CollectiveChain(Network& network, std::uint32_t ranks,
                                 std::vector<std::vector<Part>> phases, CollectiveConfig config)
    : queue_(network.queue()), n_(ranks), phase_count_(phases.size()),
      slots_(phases.size() * ranks), finish_(ranks), done_(ranks, false) {
  for (std::size_t ph = 0; ph < phases.size(); ++ph) {
    for (Part& part : phases[ph]) {
      const auto p = static_cast<std::int32_t>(parts_.size());
      const auto size = static_cast<std::uint32_t>(part.members.size());
      for (std::uint32_t i = 0; i < size; ++i) {
        const std::uint32_t r = part.members[i];
        if (r >= n_) throw InternalError("chain part names rank " + std::to_string(r));
        Slot& slot = slots_[ph * n_ + r];
        if (slot.part >= 0)
          throw InternalError("rank " + std::to_string(r) + " is in two parts of one phase");
        slot = Slot{p, i};
      }
      CollectiveConfig part_config = config;
      if (part.timing) part_config.timing = *part.timing;
      parts_.push_back(
          make_ring_collective(network, part.op, size, std::move(part.channels), part.size, part_config));
      parts_.back()->notify_rank_done(*this, static_cast<std::uint64_t>(p) << 32);
      members_.push_back(std::move(part.members));
      phase_of_part_.push_back(ph);
    }
  }
}

void CollectiveChain::notify_rank_done(EventHandler& handler, std::uint64_t tag_base) {
  done_handler_ = &handler;
  done_tag_base_ = tag_base;
}

void CollectiveChain::start(std::uint32_t rank) {
  finish_[rank] = queue_.now();
  enter_phase(rank, 0);
}

void CollectiveChain::enter_phase(std::uint32_t rank, std::size_t phase) {
  for (; phase < phase_count_; ++phase) {
    const Slot& slot = slots_[phase * n_ + rank];
    if (slot.part >= 0) {
      parts_[static_cast<std::size_t>(slot.part)]->start(slot.index);
      return;
    }
  }
  done_[rank] = true;
  finish_[rank] = queue_.now();
  ++ranks_done_;
  if (done_handler_ != nullptr) queue_.schedule_at(finish_[rank], *done_handler_, done_tag_base_ + rank);
}

void CollectiveChain::on_event(std::uint64_t tag) {
  const auto part = static_cast<std::size_t>(tag >> 32);
  const auto index = static_cast<std::uint32_t>(tag & 0xffffffffu);
  enter_phase(members_[part][index], phase_of_part_[part] + 1);
}

Time CollectiveChain::finish_time() const {
  Time t = Time::zero();
  for (const Time f : finish_) t = max(t, f);
  return t;
}

std::uint64_t CollectiveChain::messages_sent() const {
  std::uint64_t total = 0;
  for (const auto& p : parts_) total += p->messages_sent();
  return total;
}

std::array<Bytes, kLinkKindCount> CollectiveChain::bytes_by_link_kind() const {
  std::array<Bytes, kLinkKindCount> out{};
  for (const auto& p : parts_) {
    const auto b = p->bytes_by_link_kind();
    for (std::size_t k = 0; k < out.size(); ++k) out[k] += b[k];
  }
  return out;
}

SimulationPath CollectiveChain::simulation_path() const {
  SimulationPath out;
  out.ranks = n_;
  std::string_view reason;
  Time unfolded_bound;  // an unfolded part's: what bounded would have folded it within
  for (const auto& p : parts_) {
    const SimulationPath part = p->simulation_path();
    out.folded = out.folded || part.folded;
    out.simulated = std::max(out.simulated, part.simulated);
    if (part.folded) out.bound += part.bound;  // each part joins as the one before ends: late as it
    out.private_events += part.private_events;
    out.jumped_steps += part.jumped_steps;
    out.model_in_flight = std::max(out.model_in_flight, part.model_in_flight);  // parts run one after another
    if (!part.folded && reason.empty()) {
      reason = part.reason;
      unfolded_bound = part.bound;
    }
  }
  out.reason = out.folded ? std::string_view() : reason;
  if (!out.folded) out.bound = unfolded_bound;
  return out;
}

}  // namespace hybridsim::sim

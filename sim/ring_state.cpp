// A ring's state seen from a moment, and moved in time (sim/ring_collective.h): for a caller that
// runs a ring alone on its own queue and compares its states at two moments (sim/fast/ring_jump.cpp).
// What the future depends on is kept relative to now; what only accumulates is kept apart.
#include "sim/ring_collective.h"

namespace hybridsim::sim {

bool RingCollective::append_state(Time now, std::vector<std::int64_t>& relative,
                                  std::vector<std::int64_t>& counts) const {
  const auto since_now = [&](Time t) { return max(t, now).ps() - now.ps(); };
  for (std::uint32_t r = 0; r < n_; ++r) {
    const RankProgress& rs = rank_[r];
    if (!rs.started || rs.done || !rs.early_arrivals.empty() || rs.start + config_.timing.base_latency > now)
      return false;
    relative.push_back(since_now(rank_finish_time(r)));  // the latest of its positions'
  }
  for (const auto& ch : channels_) {
    for (const Position& at : ch.at) {
      if (pace_) relative.push_back(since_now(at.paced_until));
      counts.push_back(at.receives_left);
      counts.push_back(at.sends_left);
      counts.push_back(at.edge_bytes);
    }
  }
  counts.push_back(static_cast<std::int64_t>(messages_sent_));
  return true;
}

void RingCollective::shift_state(Time now, Time dt, const std::vector<std::int64_t>& counts) {
  std::size_t next = 0;
  for (RankProgress& rs : rank_)
    if (rs.finish > now) rs.finish += dt;
  for (auto& ch : channels_) {
    for (Position& at : ch.at) {
      if (at.finish > now) at.finish += dt;
      if (pace_ && at.paced_until > now) at.paced_until += dt;
      // Counts move by what the periods repeat: a position that had closed stays at zero.
      at.receives_left = static_cast<std::uint32_t>(counts[next++]);
      at.sends_left = static_cast<std::uint32_t>(counts[next++]);
      at.edge_bytes = counts[next++];
    }
  }
  messages_sent_ = static_cast<std::uint64_t>(counts[next++]);
}

}  // namespace hybridsim::sim

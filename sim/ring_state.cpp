// A ring's state seen from a moment, and moved in time (sim/ring_collective.h): for a caller that
// runs a ring alone on its own queue and compares its states at two moments (sim/fast/ring_jump.cpp).
// What the future depends on is kept relative to now; what only accumulates is kept apart.
#include "sim/ring_collective.h"

namespace hybridsim::sim {

bool RingCollective::append_state(Time now, std::vector<std::int64_t>& relative,
                                  std::vector<std::int64_t>& counts) const {
  const auto since_now = [&](Time t) { return max(t, now).ps() - now.ps(); };
  for (const RankProgress& rs : rank_) {
    if (!rs.started || rs.done || !rs.early_arrivals.empty() || rs.start + config_.timing.base_latency > now)
      return false;
    relative.push_back(since_now(rs.finish));
    counts.push_back(rs.receives_left);
    counts.push_back(rs.sends_left);
  }
  for (const auto& ch : channels_) {
    for (const Time t : ch.paced_until) relative.push_back(since_now(t));
    counts.insert(counts.end(), ch.edge_bytes.begin(), ch.edge_bytes.end());
  }
  counts.push_back(static_cast<std::int64_t>(messages_sent_));
  return true;
}

void RingCollective::shift_state(Time now, Time dt, const std::vector<std::int64_t>& counts) {
  std::size_t next = 0;
  for (RankProgress& rs : rank_) {
    if (rs.finish > now) rs.finish += dt;
    rs.receives_left = counts[next++];
    rs.sends_left = counts[next++];
  }
  for (auto& ch : channels_) {
    for (Time& t : ch.paced_until)
      if (t > now) t += dt;
    for (std::int64_t& b : ch.edge_bytes) b = counts[next++];
  }
  messages_sent_ = static_cast<std::uint64_t>(counts[next++]);
}

}  // namespace hybridsim::sim

#include "sim/collective.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "sim/error.h"

namespace hybridsim::sim {

std::string_view collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce: return "all-reduce";
    case CollectiveOp::ReduceScatter: return "reduce-scatter";
    case CollectiveOp::AllGather: return "all-gather";
    case CollectiveOp::Broadcast: return "broadcast";
    case CollectiveOp::AllToAll:
      return "all-to-all";
  }
  return "?";
}

CollectiveOp parse_collective_op(std::string_view text) {
  std::string key;
  for (char c : text)
    if (c != '-' && c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "allreduce") return CollectiveOp::AllReduce;
  if (key == "reducescatter") return CollectiveOp::ReduceScatter;
  if (key == "allgather") return CollectiveOp::AllGather;
  if (key == "broadcast") return CollectiveOp::Broadcast;
  if (key == "alltoall") return CollectiveOp::AllToAll;
  throw InputError("unknown collective \"" + std::string(text) +
                   "\": expected allreduce, reducescatter, allgather, broadcast or alltoall");
}

std::string_view fast_path_name(FastPath mode) {
  switch (mode) {
    case FastPath::Auto: return "auto";
    case FastPath::Bounded: return "bounded";
    case FastPath::Off: return "off";
  }
  return "?";
}

FastPath parse_fast_path(std::string_view text) {
  if (text == "auto") return FastPath::Auto;
  if (text == "bounded") return FastPath::Bounded;
  if (text == "off") return FastPath::Off;
  throw InputError("unknown fast path \"" + std::string(text) + "\": expected auto, bounded or off");
}

bool finish_if_complete(RankProgress& rank, EventQueue& queue, EventHandler* handler,
                        std::uint64_t tag) {
  if (rank.done || !rank.started || rank.channels_left > 0 || rank.receives_left > 0 || rank.sends_left > 0)
    return false;
  rank.done = true;
  rank.finish = max(rank.finish, queue.now());
  if (handler != nullptr) queue.schedule_at(rank.finish, *handler, tag);
  return true;
}

Time latest_finish(const std::vector<RankProgress>& ranks) {
  Time t = Time::zero();
  for (const auto& r : ranks) t = max(t, r.finish);
  return t;
}

double bus_factor(CollectiveOp op, int n) {
  if (n <= 1) return 0.0;
  switch (op) {
    case CollectiveOp::AllReduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
      return static_cast<double>(n - 1) / n;
    case CollectiveOp::Broadcast: return 1.0;
  }
  return 1.0;
}

}  // namespace hybridsim::sim

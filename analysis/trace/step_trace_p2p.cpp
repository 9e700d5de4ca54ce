// StepTraceObserver's model-parallel transfers: the sender's slice, the receiver's wait and transfer
// slices, and the flow arrow between them. The two sides are reported separately (the sender first
// in practice: both finish on the same delivery, and the sender's completion is scheduled first); the
// first one reported waits in p2p_pending_ until the other comes, whichever GPUs the trace keeps.
#include <string>

#include "analysis/trace/step_trace.h"
#include "sim/error.h"

namespace hybridsim::analysis {

namespace {

// A point strictly inside [start, end] (1 ns in from the chosen end when the slice is long enough),
// so that a flow end binds to that slice and not to a neighbour touching it.
sim::Time inside(sim::Time start, sim::Time end, bool near_start) {
  if (end - start >= sim::Time::ns(2)) return near_start ? start + sim::Time::ns(1) : end - sim::Time::ns(1);
  return start + (end - start) / 2;
}

}  // namespace

void StepTraceObserver::append_p2p_name(std::uint32_t c, bool sending, int peer) {
  const workloads::CollectiveSpec& spec = program_.collectives[c];
  scratch_ +=
      spec.role == workloads::CollectiveRole::ActivationGradient ? "activation gradient " : "activation ";
  scratch_ += profile_.ops[spec.op_index].name;
  scratch_ += sending ? " → GPU " : " ← GPU ";
  scratch_ += std::to_string(peer);
}

sim::Time StepTraceObserver::write_receive(std::uint32_t c, const P2pEnd& receive,
                                           std::optional<sim::Time> send_start) {
  const workloads::CollectiveSpec& spec = program_.collectives[c];
  const workloads::Op& op = profile_.ops[spec.op_index];
  const int peer = spec.members[0];
  const TracePid pid = gpu_pid(static_cast<int>(receive.gpu));
  // Data moves from the send's start; before that the receiving stream only waits.
  const sim::Time transfer = send_start ? sim::max(receive.start, *send_start) : receive.start;
  if (transfer > receive.start && !outside_window(receive.start, transfer)) {
    scratch_.assign("waiting for ");
    append_p2p_name(c, false, peer);
    writer_.complete(pid, receive.tid, scratch_, "wait", receive.start, transfer,
                     {{"op", op.name}, {"layer", op.layer}, {"peer_gpu", peer}, {"direction", "receive"}});
  }
  if (!outside_window(transfer, receive.end)) {
    scratch_.clear();
    append_p2p_name(c, false, peer);
    const bool gradient = spec.role == workloads::CollectiveRole::ActivationGradient;
    writer_.complete(pid, receive.tid, scratch_, gradient ? "activation-gradient" : "activation", transfer,
                     receive.end,
                     {{"op", op.name}, {"layer", op.layer}, {"bytes", spec.size.count()}, {"peer_gpu", peer},
                      {"direction", "receive"}});
  }
  return transfer;
}

void StepTraceObserver::write_p2p(std::uint32_t gpu, std::uint32_t stream, std::uint32_t c,
                                  std::uint32_t rank, sim::Time start, sim::Time end) {
  const workloads::CollectiveSpec& spec = program_.collectives[c];
  if (spec.members.size() != 2) throw InternalError("a model-parallel transfer has two members");
  const bool sending = rank == 0;
  const int peer = spec.members[sending ? 1 : 0];
  if (!keeps(gpu) && !keeps(static_cast<std::uint32_t>(peer))) return;
  const bool gradient = spec.role == workloads::CollectiveRole::ActivationGradient;
  const workloads::Op& op = profile_.ops[spec.op_index];
  const std::string_view category = gradient ? "activation-gradient" : "activation";
  const P2pEnd here{gpu, static_cast<TraceTid>(stream) + 1, start, end};
  if (sending && keeps(gpu) && !outside_window(start, end)) {
    scratch_.clear();
    append_p2p_name(c, true, peer);
    writer_.complete(gpu_pid(static_cast<int>(gpu)), here.tid, scratch_, category, start, end,
                     {{"op", op.name}, {"layer", op.layer}, {"bytes", spec.size.count()}, {"peer_gpu", peer},
                      {"direction", "send"}});
  }
  const auto [it, inserted] = p2p_pending_.try_emplace(c, here);
  sim::Time transfer = start;
  if (inserted) {
    // A receive reported before its send: written whole now (slices go out in start order), with
    // no wait slice, since when its data started moving is not known yet.
    if (!sending && keeps(gpu)) write_receive(c, here, std::nullopt);
    return;
  }
  const P2pEnd other = it->second;
  p2p_pending_.erase(it);
  if (!sending && keeps(gpu)) transfer = write_receive(c, here, other.start);
  // The flow arrow, now that both ends are known (only if both GPUs are in the trace).
  const P2pEnd& from = sending ? here : other;
  const P2pEnd& to = sending ? other : here;
  if (!keeps(from.gpu) || !keeps(to.gpu)) return;
  const sim::Time to_start = sending ? to.start : transfer;  // a receive reported first is whole
  // A transfer that took no time as written (under 1 ns: free links) is an instant, which no
  // arrow can bind to.
  const auto ns = [](sim::Time t) { return (t.ps() + 500) / 1000; };
  if (ns(from.start) == ns(from.end) || ns(to_start) == ns(to.end)) return;
  scratch_.assign(gradient ? "activation gradient " : "activation ");
  scratch_ += op.name;
  writer_.flow(scratch_, category,
               {gpu_pid(static_cast<int>(from.gpu)), from.tid, inside(from.start, from.end, true)},
               {gpu_pid(static_cast<int>(to.gpu)), to.tid, inside(to_start, to.end, false)});
}

}  // namespace hybridsim::analysis

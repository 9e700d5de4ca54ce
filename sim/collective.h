// Shared vocabulary of the collectives: which operation, how it is cut into messages, what the
// receiving rank pays to reduce, and the per-rank ring plan a higher layer (topology/) computes.
//   sim::CollectiveConfig cfg{.message_size = Bytes::kib(512)};
//   sim::RingChannel ch{.order = {0, 3, 2, 1}, .routes = {...}};  // routes[p]: order[p] → order[p+1]
#pragma once
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/budget.h"
#include "sim/event_queue.h"
#include "sim/link.h"
#include "sim/protocol.h"
#include "sim/time.h"
#include "sim/units.h"

namespace hybridsim::sim {

class RingObserver;  // sim/ring_collective.h
struct UniformTrees;  // sim/fast/folded_tree.h
class ModelProgress;  // sim/model_progress.h

// AllToAll: each rank sends 1/n of its buffer to every other (sim/collectives/all_to_all.h).
enum class CollectiveOp : std::uint8_t { AllReduce, ReduceScatter, AllGather, Broadcast, AllToAll };
std::string_view collective_op_name(CollectiveOp op);  // "all-reduce", ..., "all-to-all"
// "allreduce"/"all-reduce", "reducescatter", "allgather", "broadcast", "alltoall"; throws InputError
// otherwise.
CollectiveOp parse_collective_op(std::string_view text);

// Whether a ring collective may be folded (sim/README.md, "Folding"): auto folds where that is
// exact; bounded also where chunks of unequal size keep it within 0.1% of the collective's time
// (it then reports the upper bound), and, in a folded step, trees whose ranks all take the latest
// finish (CollectiveConfig::uniform_trees); off simulates every rank message by message.
enum class FastPath : std::uint8_t { Auto, Bounded, Off };
std::string_view fast_path_name(FastPath mode);  // "auto", "bounded", "off"
FastPath parse_fast_path(std::string_view text);  // throws InputError otherwise

struct CollectiveConfig {
  // Each rank's chunk travels as messages of at most this size (NCCL moves about 512 KiB a step).
  Bytes message_size = Bytes::kib(512);
  // The element-wise add at a receiving rank takes bytes / reduction_bandwidth; zero turns it off.
  // Default: V100 HBM2 900 GB/s × 0.25 efficiency (the add reads two buffers and writes one, so
  // three bytes of memory traffic per byte reduced, at ~75% of peak).
  Bandwidth reduction_bandwidth = Bandwidth::gb_per_second(225);
  // The protocol's link rates, latencies and per-channel cap (sim/protocol.h); the default is the
  // ideal α-β model: line rates and only the links' own latencies.
  ProtocolTiming timing = {};
  // Not a model parameter: when set, every ring built with this config reports each message it
  // takes in (sim/ring_collective.h), e.g. to a trace writer. Null (the default) costs one branch.
  RingObserver* observer = nullptr;
  FastPath fast_path = FastPath::Auto;
  // Not a model parameter either: when set, a collective about to be simulated message by message
  // charges its full_cost() to it as it starts, before its first message (sim/budget.h); it throws
  // BudgetExceeded past a cap. Null (the default): no check.
  SimulationBudget* budget = nullptr;
  // Under `bounded`, in a folded step: when set, a tree built with this config joins these uniform
  // trees (sim/fast/folded_tree.h, FoldedTree's `uniform`): every rank finishes when its last one
  // would, within a stated bound. Null (the default): trees are exact.
  UniformTrees* uniform_trees = nullptr;
  // Not a model parameter: when set, a folded collective's models (run within one event of the
  // step's queue, perhaps on another thread) count their events to it, and the thread that runs the
  // step is told every few thousand (sim/model_progress.h). Null (the default): nobody.
  ModelProgress* model_progress = nullptr;
};

// How a collective was simulated (sim/README.md, "Folding"). A folded ring simulated `simulated`
// ring positions per channel (the most of any channel) instead of `ranks`, a folded tree
// `simulated` of its `ranks` tree channels (`unit` says which); otherwise `reason` says why every
// rank was simulated. `private_events`: events it simulated on its own queue; `jumped_steps`: ring
// steps of its private models not simulated one by one because they repeat exactly.
struct SimulationPath {
  bool folded = false;
  std::uint32_t simulated = 0;
  std::uint32_t ranks = 0;
  std::string_view unit = "ring positions";
  std::string_view reason = "message by message";
  // Bounded folds: how much later than in full a rank may finish, given its joins (a ring's upper
  // bound's largest lead over its lower; a uniform tree's spread; a chain's phases' largest, added).
  Time bound;
  std::uint64_t private_events = 0;
  std::uint64_t jumped_steps = 0;  // ring steps its models jumped over, periodic (sim/fast/ring_jump.h)
  // The most messages one of its models held in flight at once on its own network (0: none ran),
  // which the step's network does not see: a step's memory held counts them (issue 31).
  std::uint64_t model_in_flight = 0;
};

// One ring (channel): an order of the communicator's ranks (0..N-1) and, for each position p, the
// route of links from order[p] to order[(p+1) % N]. For a broadcast the order starts at the root and
// the last route is unused.
struct RingChannel {
  std::vector<std::uint32_t> order;
  std::vector<std::vector<LinkId>> routes;
};

// What every collective implementation offers to the layers above (GPU streams start ranks as
// their streams reach the collective and are told when each rank is done).
class Collective : public EventHandler {
 public:
  virtual ~Collective() = default;
  // When rank r is done, `handler.on_event(tag_base + r)` is scheduled at its finish time.
  virtual void notify_rank_done(EventHandler& handler, std::uint64_t tag_base) = 0;
  // Rank r joins now (its stream reached the collective). Each rank must start exactly once.
  virtual void start(std::uint32_t rank) = 0;
  virtual std::uint32_t ranks() const = 0;
  virtual bool is_done() const = 0;
  virtual Time rank_finish_time(std::uint32_t rank) const = 0;
  virtual Time finish_time() const = 0;
  virtual std::uint64_t messages_sent() const = 0;
  // Payload bytes × links crossed, by link kind (a 2-hop route counts its bytes twice).
  virtual std::array<Bytes, kLinkKindCount> bytes_by_link_kind() const = 0;
  virtual SimulationPath simulation_path() const { return {}; }
  // What simulating it in full, message by message, costs (sim/budget.h), and whether it may be
  // simulated otherwise (folded) so that cost is only known when it starts.
  virtual SimulationCost full_cost() const { return {}; }
  // What simulating it is expected to take the way it will be simulated, from its plan alone
  // before any rank joins (join times taken alike, as a step's alike GPUs join): full_cost()'s
  // events for a collective run in full, a shortcut's own estimate (sim/fast/fold_cost.h). Pure, so
  // that a new kind cannot be left out of a step's estimate.
  virtual ExpectedEvents expected_events() const = 0;
  virtual bool may_fold() const { return false; }
  void start_all() {
    for (std::uint32_t r = 0; r < ranks(); ++r) start(r);
  }
};

// Where one rank of a message-level collective stands (the ring and the tree keep one per rank).
// An all-to-all counts the rank's messages left here; the ring and the tree count them per channel
// (a ring position, a tree node: close_channel_if_idle) and here the channels with work left.
struct RankProgress {
  bool started = false;
  bool done = false;
  std::uint32_t channels_left = 0;  // in the padding after the flags: 64 bytes in all
  std::int64_t receives_left = 0;
  std::int64_t sends_left = 0;
  Time start;
  Time finish;
  std::vector<std::uint64_t> early_arrivals;  // arrived before the rank started (rare)
};
static_assert(sizeof(RankProgress) == 64);
// Marks `rank` done once it has started, received everything, had everything it sent delivered
// and closed every channel; then schedules `handler` (if any) with `tag` at its finish. Returns
// whether it did.
bool finish_if_complete(RankProgress& rank, EventQueue& queue, EventHandler* handler,
                        std::uint64_t tag);
// A rank's state in one channel (`slot`: a ring position or a tree node, with its messages
// receives_left and sends_left and its finish so far) once it has nothing left to receive or send:
// nothing in that channel can move the rank's finish any more, so the rank takes it and has one
// channel fewer. True when that was its last (it is complete once it has started). Inline: most
// arrivals find the slot with messages still to come and return before the rank's line is read.
template <typename Slot>
bool close_channel_if_idle(RankProgress& rank, const Slot& slot) {
  if (slot.receives_left > 0 || slot.sends_left > 0) return false;
  rank.finish = max(rank.finish, slot.finish);
  return --rank.channels_left == 0;
}
Time latest_finish(const std::vector<RankProgress>& ranks);

// Bytes each rank moves in one collective of `size` over n ranks (nccl-tests' bus-bandwidth factor):
// algbw = size / time; busbw = algbw × bus_factor(op, n).
double bus_factor(CollectiveOp op, int n);

}  // namespace hybridsim::sim

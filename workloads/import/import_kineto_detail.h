// Internals of the Kineto importer shared by its source files (not a public API): an index over a
// read trace (CPU op nesting per thread, launches by correlation, fwdbwd links) and the extraction
// of one iteration into draft ops (in named steps, each tested on its own), before averaging and
// conversion to a Profile.
//   KinetoIndex index(trace);   IterationDraft d = extract_iteration(trace, index, window, content, false);
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "workloads/import/import_kineto_types.h"

namespace hybridsim::workloads::kineto_detail {

inline constexpr std::string_view kProfilerStep = "ProfilerStep#";
inline constexpr std::string_view kOptimizerStep = "Optimizer.step#";

// The outermost CPU op of a nest on one thread.
struct TopLevelOp {
  sim::Time start, end;
  std::uint32_t event = 0;  // index into trace.cpu
};

struct Launch {
  std::uint32_t thread = 0;
  sim::Time time;
  std::uint32_t event = 0;  // the runtime call, index into trace.cpu
};

class KinetoIndex {
 public:
  explicit KinetoIndex(const KinetoTrace& trace);

  // The outermost CPU op (not an annotation) on `thread` whose span holds `time`.
  std::optional<std::uint32_t> top_level_at(std::uint32_t thread, sim::Time time) const;
  // Every outermost CPU op starting in [begin, end), over all threads, by start time.
  std::vector<TopLevelOp> top_levels_in(sim::Time begin, sim::Time end) const;
  // The runtime call that launched a GPU activity (by correlation id).
  std::optional<Launch> launch_of(const KinetoGpuActivity& a) const;
  // The outermost CPU op that launched it: through the launch, else through "External id".
  std::optional<std::uint32_t> owner_of(const KinetoGpuActivity& a) const;
  // Backward outermost op → the forward outermost op that created its autograd node (fwdbwd).
  std::optional<std::uint32_t> forward_of(std::uint32_t backward_event) const;
  bool is_backward(std::uint32_t event) const;
  // The collective arguments of a GPU activity: its own, else those of the innermost CPU op with
  // collective arguments around its launch (record_param_comms).
  const KinetoCollective* collective_of(const KinetoGpuActivity& a) const;
  bool is_nccl(const KinetoGpuActivity& a) const;
  // Whether a CPU op carries this "External id".
  bool knows_external(std::int64_t external_id) const { return op_by_external_id_.contains(external_id); }

 private:
  const KinetoTrace& t_;
  std::vector<std::vector<TopLevelOp>> top_by_thread_;
  std::vector<std::vector<std::uint32_t>> comms_by_thread_;  // CPU events with collective args
  std::unordered_map<std::int64_t, std::uint32_t> runtime_by_correlation_;
  std::unordered_map<std::int64_t, std::uint32_t> op_by_external_id_;
  std::unordered_map<std::uint32_t, std::uint32_t> forward_of_;
};

struct IterationWindow {
  std::string name;  // "ProfilerStep#7", "whole trace"
  sim::Time begin, end;
  sim::Time cpu_duration;
};

struct DraftKernel {
  std::string name;
  sim::Time duration;
  std::int64_t stream = 0;
  sim::Time idle_before{};  // the launch gap before it, when gaps are kept
  bool operator==(const DraftKernel&) const = default;
};

struct DraftOp {
  std::string name;  // "aten::linear#1"
  std::vector<DraftKernel> forward, backward;
  std::vector<std::uint32_t> inputs;
  sim::Bytes nccl_bytes;        // all-reduced after this op's backward
  sim::Bytes accumulate_bytes;  // parameters accumulated after this op's backward
};

struct IterationDraft {
  std::vector<DraftOp> ops;
  sim::Time optimizer;       // optimizer-phase GPU time
  sim::Time optimizer_idle;  // launch gaps before optimizer-phase activities, when gaps are kept
  std::vector<KinetoGradientBucket> buckets;
  KinetoIterationStats stats;
  std::string optimizer_name;  // "SGD" from "Optimizer.step#SGD.step"; empty when none
  std::string dtype;           // of the gradients, when recorded
  std::map<std::string, std::int64_t> skipped;  // reason → count
  std::map<std::string, std::int64_t> notes;    // kept, but worth saying → count
};

// What was launched or recorded in one window: GPU activities of the imported device (indices into
// trace.gpu) and the CPU events it needs beyond the index (AccumulateGrad shapes, Optimizer.step).
struct WindowContent {
  std::vector<std::uint32_t> gpu;
  std::vector<std::uint32_t> cpu;
};

// The window's GPU activities made into draft ops, in the steps below.
IterationDraft extract_iteration(const KinetoTrace& trace, const KinetoIndex& index,
                                 const IterationWindow& window, const WindowContent& content,
                                 bool keep_gaps);

// "void at::native::vectorized_elementwise_kernel<4, ...>(...)" →
// "at::native::vectorized_elementwise_kernel".
std::string short_kernel_name(const std::string& name);

// ---- The steps of extract_iteration, in order ----

inline constexpr std::size_t kNoSlot = static_cast<std::size_t>(-1);

// A GPU activity of the window, with what attributing it needs.
struct WindowActivity {
  std::uint32_t gpu = 0;  // index into trace.gpu
  sim::Time anchor;       // launch time, else GPU start
  bool nccl = false;
};

// 1. The window's activities in GPU order (start, then the shorter first, then trace order), each
// with its launch time; counts those without a launch record in d.notes and sets d.stats.activities.
std::vector<WindowActivity> order_activities(const KinetoTrace& trace, const KinetoIndex& index,
                                             const WindowContent& content, IterationDraft& d);

// A draft op under construction: one per forward outermost op (or own backward op).
struct Slot {
  std::string base;           // the op's name without its occurrence number
  sim::Time order;            // the CPU op's start
  bool own_backward = false;  // a backward op without a forward op (no fwdbwd flows at all)
  DraftOp op;
  std::vector<std::int64_t> streams;  // of its forward kernels
  bool has_kernels() const { return !op.forward.empty() || !op.backward.empty(); }
};

// The slots of one window, created on first use, keyed by the CPU event (or any other key).
class DraftSlots {
 public:
  std::size_t slot_for(std::uint64_t key, std::string base, sim::Time order, bool own_backward);
  // The slot of the forward outermost op `event` (trace.cpu), named after it.
  std::size_t forward_slot(const KinetoTrace& trace, std::uint32_t event);
  // The slot of a GPU activity no CPU op launched: "(no cpu op)", one per activity.
  std::size_t orphan_slot(std::uint32_t gpu, sim::Time start);
  Slot& operator[](std::size_t s) { return slots_[s]; }
  const Slot& operator[](std::size_t s) const { return slots_[s]; }
  std::size_t size() const { return slots_.size(); }

 private:
  std::vector<Slot> slots_;
  std::unordered_map<std::uint64_t, std::size_t> slot_of_;
};

// The backward outermost ops of a window and the slot each one's kernels go to.
struct BackwardOps {
  std::vector<TopLevelOp> ops;                              // by start
  std::vector<std::size_t> owner;                           // slot of each op, or kNoSlot
  std::unordered_map<std::uint32_t, std::size_t> position;  // CPU event → index into ops
  sim::Time begin = sim::Time::max();                       // the first one's start
};

// 2. The window's backward ops, linked through fwdbwd to their forward op's slot; unlinked ones
// (AccumulateGrad, hooks, GraphRoot) go with the linked op before them (the first ones with the
// first linked op). Without any link each backward op is a slot of its own ("own backward").
BackwardOps find_backward_ops(const KinetoTrace& trace, const KinetoIndex& index,
                              const IterationWindow& window, DraftSlots& slots);

// Sorted, merged [start, end) intervals.
using Intervals = std::vector<std::pair<sim::Time, sim::Time>>;

// Length of [from, to) covered by the merged, sorted intervals.
sim::Time covered_by(const Intervals& merged, sim::Time from, sim::Time to);

// 3. The span of all the activities (sets d.stats.span) and the merged intervals in which NCCL
// kernels run (adds their durations to d.stats.communication).
Intervals measure_span_and_nccl(const KinetoTrace& trace, const std::vector<WindowActivity>& activities,
                                IterationDraft& d);

// 4. Each compute activity clipped to the device's busy time (what no earlier activity covers),
// gaps measured (not counting NCCL-only time) and kept before it when asked, and attributed: to
// the backward op that launched it, to the optimizer (launched after backward began, outside it),
// else to the forward op that launched it. Fills d.stats (busy, gaps, overlap, phases,
// exposed_communication) and d.optimizer, d.optimizer_idle.
void attribute_kernels(const KinetoTrace& trace, const KinetoIndex& index,
                       const std::vector<WindowActivity>& activities, const Intervals& nccl,
                       const BackwardOps& backward, bool keep_gaps, DraftSlots& slots, IterationDraft& d);

// The slot of the last backward op starting at or before `when` whose slot has kernels; kNoSlot
// when none: gradients land on the op whose backward ran last before them.
std::size_t anchor_slot(const BackwardOps& backward, const DraftSlots& slots, sim::Time when);

// 5. The NCCL all-reduces over the whole world as gradient buckets (d.buckets, with slot indices
// until finish_ops), on their anchor slot; other collectives and unusable ones counted in d.skipped.
void attach_nccl_gradients(const KinetoTrace& trace, const KinetoIndex& index,
                           const std::vector<WindowActivity>& activities, const BackwardOps& backward,
                           DraftSlots& slots, IterationDraft& d);

// 6. The AccumulateGrad shapes of the window as parameter bytes on their anchor slot.
void attach_accumulate_gradients(const KinetoTrace& trace, const WindowContent& content,
                                 const BackwardOps& backward, DraftSlots& slots, IterationDraft& d);

// 7. The optimizer's name from the window's last Optimizer.step#<name>.step annotation; "" if none.
std::string optimizer_name(const KinetoTrace& trace, const WindowContent& content);

// 8. The slots with kernels or gradients as d.ops: forward ops by start, then own backward ops
// latest first (replay runs backward in reverse op order, so their measured order is kept), named
// "<base>#<occurrence>", each reading the last op before it on each stream its forward kernels use
// (else the op before it); bucket op indices made final.
void finish_ops(DraftSlots& slots, IterationDraft& d);

}  // namespace hybridsim::workloads::kineto_detail

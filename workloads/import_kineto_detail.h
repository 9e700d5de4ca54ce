// Internals of the Kineto importer shared by its source files (not a public API): an index over a
// read trace (CPU op nesting per thread, launches by correlation, fwdbwd links) and the extraction
// of one iteration into draft ops, before averaging and conversion to a Profile.
//   KinetoIndex index(trace);   IterationDraft d = extract_iteration(trace, index, window, content, false);
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "workloads/import_kineto.h"

namespace hybridsim::workloads::kineto_detail {

// The outermost CPU op of a nest on one thread.
struct TopLevelOp {
  sim::Time start, end;
  std::uint32_t event = 0;  // index into trace.cpu
};

struct Launch {
  std::uint32_t thread = 0;
  sim::Time time;
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

// The window's GPU activities made into draft ops.
IterationDraft extract_iteration(const KinetoTrace& trace, const KinetoIndex& index,
                                 const IterationWindow& window, const WindowContent& content,
                                 bool keep_gaps);

// "void at::native::vectorized_elementwise_kernel<4, ...>(...)" → "at::native::vectorized_elementwise_kernel".
std::string short_kernel_name(const std::string& name);

}  // namespace hybridsim::workloads::kineto_detail

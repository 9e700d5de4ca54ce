// The steps of the Kineto importer's driver (import_kineto), in order, each tested on its own (not a
// public API): choose the device, check its time order, find the iteration windows, assign what was launched
// to them, select and extract the iterations, keep those alike, choose the gradient source, assemble the
// profile. Report lines come back in the order the report lists them.
//   DeviceChoice dev = choose_device(trace, std::nullopt);
//   IterationWindows w = find_iteration_windows(trace);
//   WindowAssignment a = assign_to_windows(trace, index, w.windows, dev.device);
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workloads/import/import_kineto_detail.h"
#include "workloads/import/import_kineto_fold.h"
#include "workloads/import/import_kineto_types.h"
#include "workloads/import/import_kineto_values.h"

namespace hybridsim::workloads::kineto_detail {

// "3 × what": a report line for something that happened `count` times.
std::string counted(const std::string& what, std::int64_t count);
// total / n rounded to the nearest ps (halves up); `total` is a sum of n times, wide so that it
// cannot overflow.
sim::Time mean_time(Wide total, std::int64_t n);

// Throws InputError on options no import can satisfy (negative steps, batch below 1, ...).
void check_options(const KinetoImportOptions& options);

// 1. The device to import: `wanted`, else the lowest id with GPU activity.
struct DeviceChoice {
  int device = 0;
  std::string gpu;                   // deviceProperties' name, or "unknown"
  std::vector<std::string> skipped;  // the other devices' activities
  std::vector<std::string> notes;
};
// Throws InputError naming the file when the trace has no GPU activity, or none on `wanted`.
DeviceChoice choose_device(const KinetoTrace& trace, std::optional<int> wanted);
// The same from the count of GPU activities on each device (the trace gives its name and devices).
DeviceChoice choose_device(const KinetoTrace& trace, const std::map<int, std::int64_t>& per_device,
                           std::optional<int> wanted);

// 2. The device's GPU work checked as a measurement in time order: its activities add up to at
// most kMaxImportedTime (import_limits.h), and start after the runtime calls that launched them.
// Throws InputError naming the file and the activity when the sum passes the limit, or when at
// least half of the launched activities start before their launch (time runs backwards, or the CPU
// and GPU clocks are far apart); fewer (clocks slightly apart) give a note, returned.
std::vector<std::string> check_time_order(const KinetoTrace& trace, const KinetoIndex& index, int device);
// What check_time_order counts, an activity at a time (in trace order).
struct TimeOrder {
  Wide busy = 0;
  std::int64_t launched = 0, early = 0;
  sim::Time largest_lead;
  bool add(sim::Time duration);                       // false past kMaxImportedTime
  bool launched_at(sim::Time start, sim::Time launch);  // true when it starts before its launch
  bool reversed() const { return early > 0 && 2 * early >= launched; }
  std::string share(int device) const;                // "3 of the 40 launched GPU activities of device 0"
  std::vector<std::string> notes(int device) const;   // the note when a few start early
};

// 3. The iterations: ProfilerStep#N annotations by start, or the whole trace as one.
struct IterationWindows {
  std::vector<IterationWindow> windows;  // sorted by begin
  bool whole_trace = false;              // no ProfilerStep# annotation
};
IterationWindows find_iteration_windows(const KinetoTrace& trace);
// The same from the ProfilerStep annotations' windows in trace order.
IterationWindows sorted_windows(std::vector<IterationWindow> in_trace_order);

// The window (index into the sorted, disjoint `windows`) that holds `when`; nullopt when none does.
std::optional<std::size_t> window_at(const std::vector<IterationWindow>& windows, sim::Time when);

// 4. What each window launched: the device's GPU activities by their launch time (else their
// start), and the CPU events the extraction needs beyond the index (AccumulateGrad shapes,
// Optimizer.step annotations) by their start.
struct WindowAssignment {
  std::vector<WindowContent> content;  // one per window
  std::int64_t outside = 0;            // the device's GPU activities launched outside every window
};
WindowAssignment assign_to_windows(const KinetoTrace& trace, const KinetoIndex& index,
                                   const std::vector<IterationWindow>& windows, int device);

// 5. and 6., the last --steps windows with compute and which of them are alike the last and averaged:
// IterationFold (import_kineto_fold.h), as the drafts are extracted.
// Empty when the two iterations ran the same ops with the same kernels; else the first difference.
std::string structure_difference(const IterationDraft& a, const IterationDraft& b);

// The mean of each statistic, rounded to the nearest ps (halves up); "A..B (mean of n)" as name.
KinetoIterationStats mean_stats(const std::vector<KinetoIterationStats>& all);

// 7. Where gradient sizes come from: the recorded all-reduces, else the AccumulateGrad shapes.
struct GradientSource {
  bool nccl = false, accumulate = false;
  sim::Bytes accumulate_bytes;  // parameters seen through AccumulateGrad in `ref`
  std::string name;             // "nccl all-reduce", "AccumulateGrad shapes" or "none"
  std::vector<std::string> notes;
};
GradientSource choose_gradient_source(const IterationDraft& ref,
                                      const std::vector<const IterationDraft*>& used);
// The same from the number of averaged iterations whose all-reduce sizes differ from `ref`'s.
GradientSource choose_gradient_source(const IterationDraft& ref, std::int64_t sizes_differing);

// 8. The profile: `ref`'s ops with kernel durations (and kept gaps) averaged over `used`, gradient
// bytes from `gradients`, the recorded buckets, the metadata, and the optimizer's mean time spread
// over the parameter bytes (or, without gradients, kept as a backward kernel of the first op; then
// a line in `notes`). Validated. Throws InputError naming the file when the optimizer's time per
// GiB of parameters does not fit sim::Time (a long optimizer over a few bytes).
struct ProfileInputs {
  const KinetoImportOptions& options;
  const KinetoImportReport& report;  // source, device, gpu, rank, average, gradient_source
  const IterationDraft& ref;
  const DraftSums& used;  // the averaged iterations, summed
  const GradientSource& gradients;
};
Profile assemble_profile(const ProfileInputs& in, std::vector<std::string>& notes);

// Parts of assemble_profile:
// The metadata (network from the file name unless given, precision from the gradients' dtype).
ProfileMetadata profile_metadata(const ProfileInputs& in);
// One kernel list of op `op` averaged over `used` (which ends with the reference iteration, whose
// kernel names are kept): durations and idle_before, each mean rounded.
std::vector<Kernel> averaged_kernels(const std::vector<const IterationDraft*>& used, std::size_t op,
                                     std::vector<DraftKernel> DraftOp::*list);
// The same from their sums, with `ref`'s kernel names.
std::vector<Kernel> averaged_kernels(const DraftSums& used, const IterationDraft& ref, std::size_t op,
                                     std::vector<DraftKernel> DraftOp::*list);
// The optimizer's mean time and idle over `used`, as the profile's OptimizerCost (named after
// `ref`'s optimizer) when `parameters` > 0.
void set_optimizer(Profile& profile, const ProfileInputs& in, std::vector<std::string>& notes);

// "net" from "/traces/net.json.gz"; "imported" when nothing is left.
std::string network_name(const std::string& path);
// "fp32", "fp16", "bf16", "fp64" or "unknown" from a Kineto dtype.
std::string precision_of(const std::string& dtype);

}  // namespace hybridsim::workloads::kineto_detail

// The first steps of a Kineto import: the options, the device, the iteration windows
// (ProfilerStep#N) and what each window launched.
#include <algorithm>
#include <map>

#include "sim/error.h"
#include "workloads/import/import_kineto_parts.h"
#include "workloads/import/import_kineto_values.h"
#include "workloads/import/import_limits.h"
#include "workloads/import/import_units.h"

namespace hybridsim::workloads::kineto_detail {

std::string counted(const std::string& what, std::int64_t count) {
  return std::to_string(count) + " × " + what;
}

sim::Time mean_time(Wide total, std::int64_t n) {
  return sim::Time::ps(static_cast<std::int64_t>((total + n / 2) / n));
}

void check_options(const KinetoImportOptions& o) {
  if (o.steps < 0) throw InputError("--steps must be 0 (all) or positive");
  if (o.batch < 1) throw InputError("--batch must be at least 1");
  check_throughput_units(o.throughput_unit, o.units_per_step, o.batch);
}

DeviceChoice choose_device(const KinetoTrace& t, std::optional<int> wanted) {
  std::map<int, std::int64_t> per_device;
  for (const auto& a : t.gpu) ++per_device[a.device];
  return choose_device(t, per_device, wanted);
}

DeviceChoice choose_device(const KinetoTrace& t, const std::map<int, std::int64_t>& per_device,
                           std::optional<int> wanted) {
  if (per_device.empty() && t.events_read == 0 && t.bytes_read > 0)  // read from a file, not made
    throw InputError(t.source + ": \"traceEvents\" is empty: the profiler recorded nothing (was the trace "
                     "exported before a profiled step ran?)");
  if (per_device.empty())
    throw InputError(t.source + ": no GPU activity (kernels, memcpys, memsets) in the trace; was the "
                     "profiler run with ProfilerActivity.CUDA?");
  DeviceChoice c;
  c.device = wanted.value_or(per_device.begin()->first);
  if (!per_device.contains(c.device))
    throw InputError(t.source + ": no GPU activity on device " + std::to_string(c.device));
  for (const auto& [dev, n] : per_device) {
    if (dev != c.device)
      c.skipped.push_back(counted("GPU activities on device " + std::to_string(dev) +
                                 " (this import reads device " + std::to_string(c.device) + ")", n));
  }
  const KinetoDevice* dev = t.find_device(c.device);
  c.gpu = dev && !dev->name.empty() ? dev->name : "unknown";
  if (!dev) c.notes.push_back("no deviceProperties entry for the device: gpu recorded as unknown");
  return c;
}

bool TimeOrder::add(sim::Time duration) {
  busy += duration.ps();
  return busy <= kMaxImportedTime.ps();
}

bool TimeOrder::launched_at(sim::Time start, sim::Time launch) {
  ++launched;
  if (start >= launch) return false;
  ++early;
  largest_lead = max(largest_lead, launch - start);
  return true;
}

std::string TimeOrder::share(int device) const {
  return std::to_string(early) + " of the " + std::to_string(launched) +
         " launched GPU activities of device " + std::to_string(device);
}

std::vector<std::string> TimeOrder::notes(int device) const {
  if (early == 0) return {};
  return {share(device) + " start before their launch (by at most " + sim::format_time(largest_lead) +
          ": the CPU and GPU clocks slightly apart); they are attributed by their launch as usual"};
}

std::vector<std::string> check_time_order(const KinetoTrace& t, const KinetoIndex& index, int device) {
  TimeOrder order;
  std::optional<std::uint32_t> first_early;
  for (std::uint32_t i = 0; i < t.gpu.size(); ++i) {
    const KinetoGpuActivity& a = t.gpu[i];
    if (a.device != device) continue;
    if (!order.add(a.duration))
      throw InputError(t.source + ": " + t.describe(a) + ": with it the GPU activities of device " +
                       std::to_string(device) + " add up to " + format_days(order.busy) +
                       "; expected at most " + kMaxImportedTimeText + " of GPU time");
    const auto launch = index.launch_of(a);
    if (launch && order.launched_at(a.start, launch->time) && !first_early) first_early = i;
  }
  if (order.reversed()) {
    const KinetoGpuActivity& a = t.gpu[*first_early];
    const auto launch = index.launch_of(a);
    throw InputError(
        t.source + ": " + t.describe(a) + " starts " + sim::format_time(launch->time - a.start) +
        " before its launch, " + t.describe(t.cpu[launch->event]) + "; " + order.share(device) +
        " start before their launch; expected GPU work to start after it (is the trace's time reversed?)");
  }
  return order.notes(device);
}

IterationWindows find_iteration_windows(const KinetoTrace& t) {
  std::vector<IterationWindow> found;
  for (const auto& e : t.cpu) {
    if (e.kind == KinetoCpuKind::Annotation && t.name_of(e.name).starts_with(kProfilerStep))
      found.push_back({t.name_of(e.name), e.start, e.start + e.duration, e.duration});
  }
  return sorted_windows(std::move(found));
}

IterationWindows sorted_windows(std::vector<IterationWindow> found) {
  IterationWindows w;
  w.windows = std::move(found);
  std::sort(w.windows.begin(), w.windows.end(),
            [](const IterationWindow& a, const IterationWindow& b) { return a.begin < b.begin; });
  if (w.windows.empty()) {
    w.windows.push_back({"whole trace", sim::Time::ps(INT64_MIN), sim::Time::max(), sim::Time::zero()});
    w.whole_trace = true;
  }
  return w;
}

std::optional<std::size_t> window_at(const std::vector<IterationWindow>& windows, sim::Time when) {
  auto it = std::upper_bound(windows.begin(), windows.end(), when,
                             [](sim::Time x, const IterationWindow& w) { return x < w.begin; });
  if (it == windows.begin() || when >= std::prev(it)->end) return std::nullopt;
  return static_cast<std::size_t>(std::prev(it) - windows.begin());
}

WindowAssignment assign_to_windows(const KinetoTrace& t, const KinetoIndex& index,
                                   const std::vector<IterationWindow>& windows, int device) {
  WindowAssignment a;
  a.content.resize(windows.size());
  for (std::uint32_t i = 0; i < t.gpu.size(); ++i) {
    if (t.gpu[i].device != device) continue;
    const auto launch = index.launch_of(t.gpu[i]);
    if (const auto w = window_at(windows, launch ? launch->time : t.gpu[i].start))
      a.content[*w].gpu.push_back(i);
    else ++a.outside;
  }
  for (std::uint32_t j = 0; j < t.cpu.size(); ++j) {
    const KinetoCpuEvent& e = t.cpu[j];
    const bool wanted = e.input_elements >= 0 || (e.kind == KinetoCpuKind::Annotation &&
                                                  t.name_of(e.name).starts_with(kOptimizerStep));
    if (!wanted) continue;
    if (const auto w = window_at(windows, e.start)) a.content[*w].cpu.push_back(j);
  }
  return a;
}

}  // namespace hybridsim::workloads::kineto_detail

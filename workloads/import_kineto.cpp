// The Kineto importer's driver: picks the device and the whole iterations, extracts each one
// (import_kineto_iteration.cpp), averages those with the same ops, and assembles the Profile.
#include "workloads/import_kineto.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "sim/error.h"
#include "workloads/import_kineto_detail.h"
#include "workloads/import_kineto_values.h"
#include "sim/text.h"

namespace hybridsim::workloads {

namespace {

using kineto_detail::DraftOp;
using kineto_detail::IterationDraft;
using kineto_detail::IterationWindow;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

std::string network_name(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".json", ".trace"}) {
    if (stem.ends_with(ext)) stem.resize(stem.size() - std::string_view(ext).size());
  }
  return stem.empty() ? "imported" : stem;
}

std::string precision_of(const std::string& dtype) {
  const auto bytes = kineto_dtype_bytes(dtype);
  if (sim::lowercase(dtype).find("bfloat16") != std::string::npos) return "bf16";
  if (bytes == 4) return "fp32";
  if (bytes == 2) return "fp16";
  if (bytes == 8) return "fp64";
  return "unknown";
}

// Empty when the two iterations ran the same ops with the same kernels; else the first difference.
std::string structure_difference(const IterationDraft& a, const IterationDraft& b) {
  if (a.ops.size() != b.ops.size())
    return std::to_string(a.ops.size()) + " ops against " + std::to_string(b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const DraftOp& x = a.ops[i];
    const DraftOp& y = b.ops[i];
    auto same = [](const auto& p, const auto& q) {
      return p.size() == q.size() &&
             std::equal(p.begin(), p.end(), q.begin(), [](const auto& k, const auto& l) { return k.name == l.name; });
    };
    if (x.name != y.name || !same(x.forward, y.forward) || !same(x.backward, y.backward))
      return "op " + std::to_string(i) + " is " + x.name + " against " + y.name + " (or its kernels differ)";
  }
  return "";
}

sim::Time mean(sim::Time total, std::int64_t n) { return sim::Time::ps((total.ps() + n / 2) / n); }

KinetoIterationStats mean_stats(const std::vector<KinetoIterationStats>& all) {
  KinetoIterationStats m;
  const auto n = static_cast<std::int64_t>(all.size());
  m.name = all.size() == 1 ? all.front().name
                           : all.front().name + ".." + all.back().name + " (mean of " + std::to_string(n) + ")";
  for (const auto& s : all) {
    m.cpu_duration += s.cpu_duration; m.span += s.span; m.busy += s.busy;
    m.launch_gaps += s.launch_gaps; m.gap_count += s.gap_count;
    m.largest_gap = max(m.largest_gap, s.largest_gap);
    m.stream_overlap += s.stream_overlap; m.exposed_communication += s.exposed_communication;
    m.communication += s.communication; m.forward += s.forward; m.backward += s.backward;
    m.optimizer += s.optimizer; m.activities += s.activities;
  }
  for (sim::Time* t : {&m.cpu_duration, &m.span, &m.busy, &m.launch_gaps, &m.stream_overlap,
                       &m.exposed_communication, &m.communication, &m.forward, &m.backward, &m.optimizer})
    *t = mean(*t, n);
  m.gap_count = (m.gap_count + n / 2) / n;
  m.activities = (m.activities + n / 2) / n;
  return m;
}

// Names collected latest first, listed in trace order: "ProfilerStep#1", or a range with a count.
std::string name_list(const std::vector<std::string>& latest_first) {
  if (latest_first.size() == 1) return latest_first.front();
  return latest_first.back() + " .. " + latest_first.front() + " (" + std::to_string(latest_first.size()) +
         " iterations)";
}

std::string reason(const std::string& what, std::int64_t count) {
  return std::to_string(count) + " × " + what;
}

}  // namespace

KinetoImport import_kineto(const std::string& path, const KinetoImportOptions& options) {
  return import_kineto(read_kineto_trace(path), options);
}

KinetoImport import_kineto(const KinetoTrace& t, const KinetoImportOptions& o) {
  const std::string& src = t.source;
  if (o.steps < 0) throw InputError("--steps must be 0 (all) or positive");
  if (o.batch < 1) throw InputError("--batch must be at least 1");
  if (o.units_per_step < 0) throw InputError("--units-per-step must be positive");
  if (t.gpu.empty())
    throw InputError(src + ": no GPU activity (kernels, memcpys, memsets) in the trace; was the "
                     "profiler run with ProfilerActivity.CUDA?");
  KinetoImport result;
  KinetoImportReport& r = result.report;
  r.source = src;
  r.rank = t.rank;
  r.world_size = t.world_size;
  r.events_read = t.events_read;
  r.events_kept = t.events_kept;
  r.bytes_read = t.bytes_read;
  if (t.events_malformed > 0)
    r.skipped.push_back(reason("events without ts or dur", t.events_malformed));

  std::map<int, std::int64_t> per_device;
  for (const auto& a : t.gpu) ++per_device[a.device];
  r.device = o.device.value_or(per_device.begin()->first);
  if (!per_device.contains(r.device))
    throw InputError(src + ": no GPU activity on device " + std::to_string(r.device));
  for (const auto& [dev, n] : per_device) {
    if (dev != r.device)
      r.skipped.push_back(reason("GPU activities on device " + std::to_string(dev) +
                                 " (this import reads device " + std::to_string(r.device) + ")", n));
  }
  const KinetoDevice* dev = t.find_device(r.device);
  r.gpu = dev && !dev->name.empty() ? dev->name : "unknown";
  if (!dev) r.notes.push_back("no deviceProperties entry for the device: gpu recorded as unknown");

  // The iterations: ProfilerStep#N annotations, or the whole trace.
  std::vector<IterationWindow> windows;
  for (const auto& e : t.cpu) {
    if (e.kind == KinetoCpuKind::Annotation && t.name_of(e.name).starts_with("ProfilerStep#"))
      windows.push_back({t.name_of(e.name), e.start, e.start + e.duration, e.duration});
  }
  std::sort(windows.begin(), windows.end(),
            [](const IterationWindow& a, const IterationWindow& b) { return a.begin < b.begin; });
  if (windows.empty()) {
    windows.push_back({"whole trace", sim::Time::ps(INT64_MIN), sim::Time::max(), sim::Time::zero()});
    r.notes.push_back("no ProfilerStep# annotations: the whole trace is taken as one iteration");
  }

  // What each window launched: GPU activities by their launch time (else their start), and the
  // CPU events the extraction needs beyond the index. Windows are sorted and do not overlap.
  const kineto_detail::KinetoIndex index(t);
  std::vector<kineto_detail::WindowContent> content(windows.size());
  auto window_of = [&](sim::Time when) -> std::optional<std::size_t> {
    auto it = std::upper_bound(windows.begin(), windows.end(), when,
                               [](sim::Time x, const IterationWindow& w) { return x < w.begin; });
    if (it == windows.begin() || when >= std::prev(it)->end) return std::nullopt;
    return static_cast<std::size_t>(std::prev(it) - windows.begin());
  };
  std::int64_t outside = 0;
  for (std::uint32_t i = 0; i < t.gpu.size(); ++i) {
    if (t.gpu[i].device != r.device) continue;
    const auto launch = index.launch_of(t.gpu[i]);
    if (const auto w = window_of(launch ? launch->time : t.gpu[i].start)) content[*w].gpu.push_back(i);
    else ++outside;
  }
  for (std::uint32_t j = 0; j < t.cpu.size(); ++j) {
    const KinetoCpuEvent& e = t.cpu[j];
    const bool wanted = e.input_elements >= 0 ||
                        (e.kind == KinetoCpuKind::Annotation && t.name_of(e.name).starts_with("Optimizer.step#"));
    if (!wanted) continue;
    if (const auto w = window_of(e.start)) content[*w].cpu.push_back(j);
  }
  if (outside > 0)
    r.skipped.push_back(reason("GPU activities launched outside the ProfilerStep iterations", outside));

  // The last `steps` windows with compute (all when 0), extracted from the end backwards.
  std::vector<IterationDraft> complete;  // latest first while collecting
  std::vector<std::string> unselected, idle;
  std::size_t with_work = 0;
  for (std::size_t w = windows.size(); w-- > 0;) {
    if (content[w].gpu.empty()) {
      idle.push_back(windows[w].name);
      continue;
    }
    ++with_work;
    if (o.steps > 0 && complete.size() >= static_cast<std::size_t>(o.steps)) {
      unselected.push_back(windows[w].name);
      continue;
    }
    IterationDraft d = kineto_detail::extract_iteration(t, index, windows[w], content[w], o.keep_gaps);
    if (d.ops.empty()) {
      r.skipped.push_back(windows[w].name + ": no compute on the device, only communication");
      continue;
    }
    complete.push_back(std::move(d));
  }
  std::reverse(complete.begin(), complete.end());
  if (!idle.empty())
    r.skipped.push_back(name_list(idle) + ": no GPU activity launched (profiling stopped or warm-up)");
  if (!unselected.empty())
    r.skipped.push_back(name_list(unselected) + ": not selected (--steps " + std::to_string(o.steps) +
                        " averages the last complete iterations)");
  if (complete.empty()) throw InputError(src + ": no complete iteration with GPU work on device " +
                                         std::to_string(r.device));
  if (o.steps > static_cast<int>(complete.size()))
    r.notes.push_back("--steps " + std::to_string(o.steps) + " asked for more iterations than the " +
                      std::to_string(with_work) + " with GPU work");
  const IterationDraft& ref = complete.back();
  std::vector<const IterationDraft*> used;
  for (const IterationDraft& d : complete) {
    const std::string diff = structure_difference(d, ref);
    if (diff.empty()) used.push_back(&d);
    else r.skipped.push_back(d.stats.name + ": its ops differ from " + ref.stats.name + "'s (" + diff + ")");
  }
  const auto n = static_cast<std::int64_t>(used.size());
  std::map<std::string, std::int64_t> skipped, notes;
  for (const IterationDraft* d : used) {
    r.iterations.push_back(d->stats);
    for (const auto& [what, count] : d->skipped) skipped[what] += count;
    for (const auto& [what, count] : d->notes) notes[what] += count;
  }
  for (const auto& [what, count] : skipped) r.skipped.push_back(reason(what + " (over the averaged iterations)", count));
  for (const auto& [what, count] : notes) r.notes.push_back(reason(what, count));
  r.average = mean_stats(r.iterations);
  r.buckets = ref.buckets;

  // Gradients: the recorded all-reduces, else the AccumulateGrad shapes.
  bool use_nccl = false, use_accumulate = false;
  for (const auto& op : ref.ops) {
    use_nccl |= op.nccl_bytes.count() > 0;
    use_accumulate |= op.accumulate_bytes.count() > 0;
    r.accumulate_grad_bytes += op.accumulate_bytes;
  }
  r.gradient_source = use_nccl ? "nccl all-reduce" : use_accumulate ? "AccumulateGrad shapes" : "none";
  for (const IterationDraft* d : used) {
    for (std::size_t i = 0; i < ref.ops.size(); ++i) {
      if (d->ops[i].nccl_bytes != ref.ops[i].nccl_bytes) {
        r.notes.push_back("all-reduce sizes differ between iterations: " + ref.stats.name + "'s are used");
        break;
      }
    }
  }

  Profile& p = result.profile;
  p.meta.network = o.network.empty() ? network_name(src) : o.network;
  p.meta.gpu = r.gpu;
  p.meta.precision = precision_of(ref.dtype);
  p.meta.batch_per_gpu = o.batch;
  p.meta.throughput_unit = o.throughput_unit;
  p.meta.units_per_step = o.units_per_step > 0 ? o.units_per_step : o.batch;
  std::string where = "device " + std::to_string(r.device);
  if (r.rank) where += ", rank " + std::to_string(*r.rank) + " of " + std::to_string(r.world_size.value_or(0));
  p.meta.source = "Kineto trace " + std::filesystem::path(src).filename().string() + ": " + r.average.name + ", " + where;
  p.meta.notes = std::string("imported by hybridsim import kineto; durations are each GPU activity's share "
                             "of the device's busy time (overlap between streams clipped); CPU launch gaps ") +
                 (o.keep_gaps ? "kept as idle time before the following activity (idle_before)" : "dropped") +
                 "; gradients from " + r.gradient_source + "; activation sizes are not in traces (0)";
  for (std::size_t i = 0; i < ref.ops.size(); ++i) {
    const DraftOp& d = ref.ops[i];
    Op op;
    op.name = d.name;
    op.layer = d.name;
    op.inputs = d.inputs;
    auto averaged = [&](std::vector<kineto_detail::DraftKernel> DraftOp::*list) {
      std::vector<Kernel> out;
      for (std::size_t k = 0; k < (ref.ops[i].*list).size(); ++k) {
        sim::Time total, idle;
        for (const IterationDraft* it : used) {
          total += (it->ops[i].*list)[k].duration;
          idle += (it->ops[i].*list)[k].idle_before;
        }
        out.push_back({(ref.ops[i].*list)[k].name, mean(total, n), mean(idle, n)});
      }
      return out;
    };
    op.forward = averaged(&DraftOp::forward);
    op.backward = averaged(&DraftOp::backward);
    op.gradient_bytes = use_nccl ? d.nccl_bytes : use_accumulate ? d.accumulate_bytes : sim::Bytes{};
    if (op.gradient_bytes.count() > 0) op.exchange = GradientExchange::DenseAllReduce;
    p.ops.push_back(std::move(op));
  }
  // The recorded all-reduces as the ops' buckets (each op's nccl_bytes is the sum of its own), so
  // that replay issues exactly them unless a bucket size is chosen (StepOptions::recorded_buckets).
  if (use_nccl)
    for (const auto& b : ref.buckets) p.ops[b.op].buckets.push_back(b.bytes);

  // The optimizer: its measured time spread over the parameter bytes (ceil per op, so replay adds
  // at most 1 ps per op with a gradient).
  sim::Time optimizer, optimizer_idle;
  for (const IterationDraft* d : used) {
    optimizer += d->optimizer;
    optimizer_idle += d->optimizer_idle;
  }
  optimizer = mean(optimizer, n);
  optimizer_idle = mean(optimizer_idle, n);
  p.optimizer.name = ref.optimizer_name.empty() ? "measured" : ref.optimizer_name;
  const sim::Bytes parameters = p.parameter_bytes();
  if (parameters.count() > 0) {
    const __int128 per_gib = static_cast<__int128>(optimizer.ps()) * kGiB / parameters.count();
    p.optimizer.time_per_gib = sim::Time::ps(static_cast<std::int64_t>(per_gib));
    p.optimizer.idle_before = optimizer_idle;
  } else if (optimizer > sim::Time::zero() || optimizer_idle > sim::Time::zero()) {
    p.ops.front().backward.push_back({"optimizer", optimizer, optimizer_idle});
    r.notes.push_back("no gradient sizes recorded (no NCCL all-reduce, no AccumulateGrad shapes): the "
                      "optimizer's " + sim::format_time(optimizer) + " are kept as a backward kernel of " +
                      p.ops.front().name + ", whose backward runs last");
  }
  validate_profile(p);
  return result;
}

}  // namespace hybridsim::workloads

// The Kineto importer's driver: its steps (import_kineto_parts.h) in order — the device and its
// time order, the iteration windows and what each launched, the iterations extracted
// (import_kineto_iteration.cpp) and those alike averaged, the gradient source, and the Profile.
#include "workloads/import/import_kineto.h"

#include <filesystem>

#include "workloads/import/import_kineto_parts.h"
#include "workloads/import/import_kineto_stream.h"

namespace hybridsim::workloads {

namespace {

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

namespace kineto_detail {

void start_report(KinetoImportReport& r, const KinetoTrace& t, const DeviceChoice& device) {
  r.source = t.source;
  r.rank = t.rank;
  r.world_size = t.world_size;
  r.events_read = t.events_read;
  r.events_kept = t.events_kept;
  r.bytes_read = t.bytes_read;
  if (t.events_malformed > 0) r.skipped.push_back(counted("events without ts or dur", t.events_malformed));
  if (t.flows_without_id > 0)
    r.skipped.push_back(counted("fwdbwd flow ends without an id", t.flows_without_id));
  r.device = device.device;
  r.gpu = device.gpu;
  append(r.skipped, device.skipped);
  append(r.notes, device.notes);
}

void note_windows(KinetoImportReport& r, const IterationWindows& windows, std::int64_t outside) {
  if (windows.whole_trace)
    r.notes.push_back("no ProfilerStep# annotations: the whole trace is taken as one iteration");
  if (outside > 0)
    r.skipped.push_back(counted("GPU activities launched outside the ProfilerStep iterations", outside));
}

KinetoImport finish_import(IterationFold& fold, KinetoImport result, const KinetoImportOptions& o) {
  KinetoImportReport& r = result.report;
  fold.finish(r.source, r.device, r);
  const IterationDraft& ref = fold.ref();
  r.buckets = ref.buckets;
  const GradientSource gradients = choose_gradient_source(ref, fold.sums().nccl_differing);
  r.gradient_source = gradients.name;
  r.accumulate_grad_bytes = gradients.accumulate_bytes;
  append(r.notes, gradients.notes);
  result.profile = assemble_profile({o, r, ref, fold.sums(), gradients}, r.notes);
  return result;
}

}  // namespace kineto_detail

int kineto_import_passes(std::int64_t file_bytes) {
  // The windows, the launches, then the batches' parts: about the file again (measured: 3.0 times it).
  return file_bytes >= kineto_detail::kStreamedImportBytes ? 3 : 1;
}

KinetoImport import_kineto(const std::string& path, const KinetoImportOptions& options) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size >= static_cast<std::uintmax_t>(kineto_detail::kStreamedImportBytes)) {
    if (auto streamed = kineto_detail::import_kineto_streamed(path, options, kineto_detail::kBatchActivities))
      return std::move(*streamed);
  }
  return import_kineto(read_kineto_trace(path), options);
}

KinetoImport import_kineto(const KinetoTrace& t, const KinetoImportOptions& o) {
  using namespace kineto_detail;
  check_options(o);
  KinetoImport result;
  KinetoImportReport& r = result.report;
  start_report(r, t, choose_device(t, o.device));
  const KinetoIndex index(t);
  append(r.notes, check_time_order(t, index, r.device));
  const IterationWindows windows = find_iteration_windows(t);
  const WindowAssignment assignment = assign_to_windows(t, index, windows.windows, r.device);
  note_windows(r, windows, assignment.outside);
  // Latest first, each draft folded into the sums as it comes (import_kineto_fold.h).
  IterationFold fold(o.steps);
  for (std::size_t w = windows.windows.size(); w-- > 0;) {
    const IterationWindow& window = windows.windows[w];
    if (fold.wants(window.name, !assignment.content[w].gpu.empty()))
      fold.add(window.name, extract_iteration(t, index, window, assignment.content[w], o.keep_gaps));
  }
  return finish_import(fold, std::move(result), o);
}

}  // namespace hybridsim::workloads

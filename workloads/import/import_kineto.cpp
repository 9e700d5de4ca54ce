// The Kineto importer's driver: its steps (import_kineto_parts.h) in order — the device and its
// time order, the iteration windows and what each launched, the iterations extracted
// (import_kineto_iteration.cpp) and those alike averaged, the gradient source, and the Profile.
#include "workloads/import/import_kineto.h"

#include "workloads/import/import_kineto_parts.h"

namespace hybridsim::workloads {

namespace {

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

KinetoImport import_kineto(const std::string& path, const KinetoImportOptions& options) {
  return import_kineto(read_kineto_trace(path), options);
}

KinetoImport import_kineto(const KinetoTrace& t, const KinetoImportOptions& o) {
  using namespace kineto_detail;
  check_options(o);
  const DeviceChoice device = choose_device(t, o.device);
  KinetoImport result;
  KinetoImportReport& r = result.report;
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
  const KinetoIndex index(t);
  append(r.notes, check_time_order(t, index, r.device));

  const IterationWindows windows = find_iteration_windows(t);
  if (windows.whole_trace)
    r.notes.push_back("no ProfilerStep# annotations: the whole trace is taken as one iteration");
  const WindowAssignment assignment = assign_to_windows(t, index, windows.windows, r.device);
  if (assignment.outside > 0)
    r.skipped.push_back(
        counted("GPU activities launched outside the ProfilerStep iterations", assignment.outside));

  const IterationSelection selection =
      select_iterations(t, index, windows.windows, assignment, r.device, o.steps, o.keep_gaps);
  append(r.skipped, selection.skipped);
  append(r.notes, selection.notes);
  const IterationDraft& ref = selection.drafts.back();
  const std::vector<const IterationDraft*> used = alike_iterations(selection.drafts, r.skipped);
  for (const IterationDraft* d : used) r.iterations.push_back(d->stats);
  merge_draft_reports(used, r.skipped, r.notes);
  r.average = mean_stats(r.iterations);
  r.buckets = ref.buckets;

  const GradientSource gradients = choose_gradient_source(ref, used);
  r.gradient_source = gradients.name;
  r.accumulate_grad_bytes = gradients.accumulate_bytes;
  append(r.notes, gradients.notes);
  result.profile = assemble_profile({o, r, ref, used, gradients}, r.notes);
  return result;
}

}  // namespace hybridsim::workloads

// The Kineto import of a large trace in bounded memory (not a public API): the file is read in
// passes, each keeping a part of it. 1: the devices and counts, and the latest kSegmentWindows
// ProfilerStep windows (a segment). 2: the imported device's GPU activities matched with their
// launches (import_kineto_launches.h: a launch held only until its GPU work is met), checked in time
// order and counted per window of the segment. 3..: batches of the segment's windows, latest first,
// each holding only the events of its windows (GPU activities by their launch's window, CPU events
// and flows by time), extracted and folded into running sums (import_kineto_fold.h). A trace with
// more windows is imported segment by segment, latest first, pass 2 of each gathering the next
// one's windows. A batch that refers to something it does not hold (a flow end, an External id, a
// CPU op nesting across its start), a launch the table cannot be sure of, a trace without
// ProfilerStep annotations, or one with an error to report is imported whole instead, so that the
// result is always import_kineto's, byte for byte. Nothing held grows with the number of
// iterations: the windows are a segment's (about 150 bytes each with their extents).
//   std::optional<KinetoImport> r = import_kineto_streamed("big.json", {}, 100'000);
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "workloads/import/import_kineto_fold.h"
#include "workloads/import/import_kineto_parts.h"

namespace hybridsim::workloads::kineto_detail {

// Traces of this many bytes or more are imported in passes.
inline constexpr std::int64_t kStreamedImportBytes = std::int64_t{32} << 20;
// GPU activities a batch holds at most (with their iterations' CPU events: about 5 MB).
inline constexpr std::int64_t kBatchActivities = 5'000;
// ProfilerStep windows held at once (about 150 bytes each with their extents: 10 MB); a trace with
// more iterations is imported in segments of them, latest first, each costing one more pass.
inline constexpr std::int64_t kSegmentWindows = 65'536;

// What a streamed import held at most at once, for tests that it does not grow with the file.
struct StreamedImportCounts {
  std::int64_t launches = 0;           // launches and GPU work waiting for theirs (LaunchTable), any pass
  std::int64_t events = 0;             // events of one batch's part of the file
  std::int64_t iteration_records = 0;  // per-iteration records of the fold (IterationFold)
  std::int64_t windows = 0;            // ProfilerStep windows: at most segment_windows
};

// nullopt when the trace must be imported whole (above).
std::optional<KinetoImport> import_kineto_streamed(const std::string& path,
                                                   const KinetoImportOptions& options,
                                                   std::int64_t batch_activities,
                                                   StreamedImportCounts* counts = nullptr,
                                                   std::int64_t segment_windows = kSegmentWindows);

// The driver's shared parts (import_kineto.cpp).
void start_report(KinetoImportReport& r, const KinetoTrace& t, const DeviceChoice& device);
void note_windows(KinetoImportReport& r, const IterationWindows& windows, std::int64_t outside);
KinetoImport finish_import(IterationFold& fold, KinetoImport result, const KinetoImportOptions& o);

}  // namespace hybridsim::workloads::kineto_detail

// The Kineto import of a large trace in bounded memory (not a public API): the file is read in
// passes, each keeping a part of it. 1: the ProfilerStep windows, the devices, the counts, and each
// launch's correlation id and time (16 bytes a launch). 2: the imported device's GPU activities
// checked in time order and counted per window. 3..: batches of windows, latest first, each holding
// only the events of its windows (GPU activities by their launch's window, CPU events and flows by
// time), extracted and folded into running sums (import_kineto_fold.h). A batch that refers to
// something it does not hold (a flow end, an External id, a CPU op nesting across its start), a
// trace without ProfilerStep annotations, or one with an error to report is imported whole instead,
// so that the result is always import_kineto's, byte for byte.
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
// GPU activities a batch holds at most (with their iterations' CPU events: about 15 MB).
inline constexpr std::int64_t kBatchActivities = 20'000;

// nullopt when the trace must be imported whole (above).
std::optional<KinetoImport> import_kineto_streamed(const std::string& path,
                                                   const KinetoImportOptions& options,
                                                   std::int64_t batch_activities);

// The driver's shared parts (import_kineto.cpp).
void start_report(KinetoImportReport& r, const KinetoTrace& t, const DeviceChoice& device);
void note_windows(KinetoImportReport& r, const IterationWindows& windows, std::int64_t outside);
KinetoImport finish_import(IterationFold& fold, KinetoImport result, const KinetoImportOptions& o);

}  // namespace hybridsim::workloads::kineto_detail

// Imports a PyTorch profiler (Kineto) trace as a hybridsim profile: one or more whole training
// iterations (ProfilerStep#N) of one GPU, their ops in execution order with the kernels they launched
// (forward, and backward through the fwdbwd flows), dependencies from stream order, gradient sizes
// from the recorded NCCL all-reduces (or AccumulateGrad shapes), the optimizer's measured time, and
// what was measured (iteration span, CPU launch gaps, stream overlap). Durations in sim::Time (ps).
//   KinetoImport r = import_kineto("trace.json", {.steps = 2, .batch = 64});
//   save_profile(r.profile, out);   r.report.average.span;   describe_kineto_import(r);
#pragma once
#include "workloads/import/import_kineto_types.h"

namespace hybridsim::workloads {

// Reads and imports a trace file (streaming). Throws InputError naming the file when it is not a
// Kineto trace, is truncated, has no GPU activity on the device, or no usable iteration.
KinetoImport import_kineto(const std::string& path, const KinetoImportOptions& options);
// How many times import_kineto(path) reads a file of `file_bytes` (a large trace is read in passes,
// import_kineto_stream.h), for progress lines: 1 or 3 (more for a trace of more iterations than a
// segment holds: KinetoImportOptions::passes_known says how many once the first read knows).
int kineto_import_passes(std::int64_t file_bytes);
// The same from a trace already read.
KinetoImport import_kineto(const KinetoTrace& trace, const KinetoImportOptions& options);

// The report as text for people: iterations, measured vs profile times, gaps, buckets, skips.
std::string describe_kineto_import(const KinetoImport& import);

}  // namespace hybridsim::workloads

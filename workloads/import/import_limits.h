// What the importers (import kineto, import pipedream) accept as a measurement, so that a bad number
// is an error naming where it is instead of an overflow, a wrapped sum or a silent zero later.
//   if (end_ps > kMaxImportedTime.ps()) throw InputError(where + "; expected ... " + kMaxImportedTimeText);
#pragma once
#include <cstdint>
#include "sim/limits.h"

#include "sim/time.h"

namespace hybridsim::workloads {

// Times: a trace's events lie within 2^62 ps (about 53.4 days) of its first timestamp, a device's
// GPU activities and a graph's layer times add up to at most that, so that any two such sums still
// add up within sim::Time's 2^63 ps (about 106.8 days). Real profiles cover seconds to minutes.
inline constexpr sim::Time kMaxImportedTime = sim::Time::ps(sim::limits::kImportedTime.value);
inline constexpr const char* kMaxImportedTimeText = sim::limits::kImportedTime.shown.data();

// Sizes: one tensor (a layer's activations or parameters, an all-reduce's message, a parameter's
// gradient) of more than 1 TiB is not a measurement: no GPU's memory holds that much (the largest
// hold a few hundred GB), and the profile of one GPU holds all its parameters and activations.
inline constexpr std::int64_t kMaxTensorBytes = sim::limits::kTensorSize.value;
inline constexpr const char* kMaxTensorBytesText = sim::limits::kTensorSize.shown.data();

}  // namespace hybridsim::workloads

// Helpers shared by the built-in profile generators (profile_gen_*.cpp); not part of the public API.
//   std::uint32_t i = detail::add_op(profile, detail::make_op("fc", "head", {prev}, bytes));
//   detail::set_dense_gradient(profile.ops[i], parameters, cost.value_bytes());
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/gpu/cost_model.h"
#include "workloads/profile/profile.h"

namespace hybridsim::workloads::detail {

inline constexpr std::int64_t kIndexBytes = 8;  // an int64 row index of a sparse gradient

// An op without kernels or gradient yet; `activation_bytes` is the output for the whole batch.
Op make_op(std::string name, std::string layer, std::vector<std::uint32_t> inputs,
           std::int64_t activation_bytes, std::optional<int> step = std::nullopt);
// Dense gradient of `parameters` parameters of `value_bytes` each (4 FP32, 2 FP16), all-reduced under
// data parallelism.
void set_dense_gradient(Op& op, std::int64_t parameters, std::int64_t value_bytes);
// Sparse gradient of a table of `parameters` (values of `value_bytes`); each worker sends `rows` rows
// of `row_bytes` values plus an int64 index per row.
void set_sparse_gradient(Op& op, std::int64_t parameters, std::int64_t value_bytes, std::int64_t rows,
                         std::int64_t row_bytes);
// "priced by the V100 FP32 cost model, calibrated to ..." where this network calibrates the cost
// model (`calibration` names the figure), else "priced by the H100 AMP cost model; ESTIMATE: <how
// its rates were derived>".
std::string priced_by(const KernelCostModel& cost, bool calibrated_here, const std::string& calibration);
// What the precision changes, for a profile's notes ("" for FP32 on CUDA cores).
std::string precision_notes(const KernelCostModel& cost);
// Appends `op` (its inputs must be earlier ops) and returns its index.
std::uint32_t add_op(Profile& profile, Op op);

}  // namespace hybridsim::workloads::detail

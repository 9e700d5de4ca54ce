// Helpers shared by the built-in profile generators (profile_gen_*.cpp); not part of the public API.
//   std::uint32_t i = detail::add_op(profile, detail::make_op("fc", "head", {prev}, bytes));
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/profile.h"

namespace hybridsim::workloads::detail {

inline constexpr std::int64_t kFp32Bytes = 4;
inline constexpr std::int64_t kIndexBytes = 8;  // an int64 row index of a sparse gradient

// An op without kernels or gradient yet; `activation_bytes` is the output for the whole batch.
Op make_op(std::string name, std::string layer, std::vector<std::uint32_t> inputs,
           std::int64_t activation_bytes, std::optional<int> step = std::nullopt);
// Dense FP32 gradient of `parameters` parameters, all-reduced under data parallelism.
void set_dense_gradient(Op& op, std::int64_t parameters);
// Sparse FP32 gradient of a table of `parameters`; each worker sends `rows` rows of `row_bytes`
// values plus an int64 index per row.
void set_sparse_gradient(Op& op, std::int64_t parameters, std::int64_t rows, std::int64_t row_bytes);
// Appends `op` (its inputs must be earlier ops) and returns its index.
std::uint32_t add_op(Profile& profile, Op op);

}  // namespace hybridsim::workloads::detail

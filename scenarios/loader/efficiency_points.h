// The measured points of a statistical-efficiency curve as YAML writes them, `[[global batch,
// epochs], ...]`: the one reader of that list, for a scenario's training.efficiency.table and a
// study's networks[].curve.table.
//   auto points = read_efficiency_points(r, table, "training.efficiency.table");  // {{1024, 25}, ...}
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/limits.h"
#include "sim/yaml/field_reader.h"

namespace hybridsim::scenarios {

// The most epochs to the quality target a curve may give: the epochs limit of sim/limits.h, as the
// schemas' bound (a double) and its text.
inline constexpr double kMaxEpochs = static_cast<double>(sim::limits::kEpochs.value);
inline constexpr std::string_view kMaxEpochsText = sim::limits::kEpochs.shown;

// At least two points, batches whole, >= 1 and strictly increasing, epochs > 0; `path` is the
// list's declared path in the reader's schema. Errors are located at the offending item.
std::vector<std::pair<std::int64_t, double>> read_efficiency_points(const yaml::FieldReader& r,
                                                                    const yaml::TreeNode& table,
                                                                    const std::string& path);

}  // namespace hybridsim::scenarios

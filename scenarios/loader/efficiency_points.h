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

#include "sim/yaml/field_reader.h"

namespace hybridsim::scenarios {

// The most epochs to the quality target a curve may give: far past any published run (ImageNet about
// 90, LM1B about 25). Past it is a typo or a fit extrapolated beyond sense, whose time to train
// printed "inf h" or a number of 301 digits with exit 0. Held on a curve as written (e_min, a table's
// epochs: the schemas) and on what it gives at each global batch projected
// (analysis/training/epochs_limit.h).
inline constexpr double kMaxEpochs = 1'000'000;
inline constexpr std::string_view kMaxEpochsText = "1,000,000 epochs";

// At least two points, batches whole, >= 1 and strictly increasing, epochs > 0; `path` is the
// list's declared path in the reader's schema. Errors are located at the offending item.
std::vector<std::pair<std::int64_t, double>> read_efficiency_points(const yaml::FieldReader& r,
                                                                    const yaml::TreeNode& table,
                                                                    const std::string& path);

}  // namespace hybridsim::scenarios

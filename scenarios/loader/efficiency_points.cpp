#include "scenarios/loader/efficiency_points.h"

#include <cmath>

#include "sim/text.h"

namespace hybridsim::scenarios {

std::vector<std::pair<std::int64_t, double>> read_efficiency_points(const yaml::FieldReader& r,
                                                                    const yaml::TreeNode& table,
                                                                    const std::string& path) {
  using yaml::fail_at;
  std::vector<std::pair<std::int64_t, double>> out;
  r.to_list(table, path, 2);
  for (std::size_t i = 0; i < table.items.size(); ++i) {
    const yaml::TreeNode& item = table.items[i];
    const std::string ip = path + "[" + std::to_string(i) + "]";
    const std::string expected =
        "[global batch, epochs]: a whole batch >= 1 and epochs > 0, at most " + std::string(kMaxEpochsText);
    if (!item.is_sequence() || item.items.size() != 2 || !item.items[0].is_scalar() ||
        !item.items[1].is_scalar())
      fail_at(item.where, ip, "got " + yaml::describe_node(item), expected);
    const auto batch = sim::parse_whole<std::int64_t>(item.items[0].scalar);
    const auto epochs = sim::parse_whole<double>(item.items[1].scalar);
    if (!batch || *batch < 1)
      fail_at(item.items[0].where, ip, "got batch \"" + item.items[0].scalar + "\"", expected);
    if (!epochs || !std::isfinite(*epochs) || *epochs <= 0 || *epochs > kMaxEpochs)
      fail_at(item.items[1].where, ip, "got epochs \"" + item.items[1].scalar + "\"", expected);
    if (!out.empty() && *batch <= out.back().first)
      fail_at(item.items[0].where, ip,
              "batch " + std::to_string(*batch) + " does not follow " + std::to_string(out.back().first),
              "strictly increasing batches");
    out.emplace_back(*batch, *epochs);
  }
  return out;
}

}  // namespace hybridsim::scenarios

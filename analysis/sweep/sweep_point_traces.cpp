#include "analysis/sweep/sweep_point_traces.h"

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "analysis/output/csv.h"

namespace hybridsim::analysis {

ScenarioRunOptions point_trace_options(const scenarios::Scenario& point_scenario,
                                       const scenarios::SweepPoint& point,
                                       const std::filesystem::path& directory, CreatedFolders& made) {
  ScenarioRunOptions options = scenario_trace_options(point_scenario, directory);
  if (!options.trace) return options;
  options.trace = sweep_point_trace_file(*options.trace, point.index);
  options.trace_options.other_data = {{"sweep_point", std::to_string(point.index)},
                                      {"sweep_label", point.label}};
  // Threads may race to create it (harmless); a folder that cannot be made is reported by the
  // trace writer, naming the file. A sweep refused before any point finished removes it again.
  if (options.trace->has_parent_path()) {
    try {
      made.create(options.trace->parent_path());
    } catch (const std::filesystem::filesystem_error&) {
    }
  }
  return options;
}

void remove_stale_point_traces(const SweepPlan& plan, const std::filesystem::path& directory,
                               std::pair<int, int> shard) {
  const auto trace = scenario_trace_options(plan.base, directory).trace;
  if (!trace) return;  // no name to know an earlier sweep's traces by
  const std::string name = trace->filename().string();
  const std::filesystem::path renamed =
      trace->parent_path() / (name.ends_with(".gz") ? name.substr(0, name.size() - 3) : name + ".gz");
  const auto ours = [&](std::size_t i) {
    return static_cast<int>(i % static_cast<std::size_t>(shard.second)) == shard.first - 1;
  };
  const auto traced = [&](std::size_t i) {
    const auto row = plan.rows.find(i);
    return row != plan.rows.end() && csv_split(row->second).back().empty();  // not_simulated empty
  };
  std::vector<std::filesystem::path> stale;
  std::error_code ec;
  const std::filesystem::path folder = trace->has_parent_path() ? trace->parent_path() : ".";
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    const std::string file = entry.path().filename().string();
    const auto as_named = sweep_point_trace_index(*trace, file);
    const auto as_renamed = sweep_point_trace_index(renamed, file);
    if ((as_named && (*as_named >= plan.points.size() || (ours(*as_named) && !traced(*as_named)))) ||
        (as_renamed && (*as_renamed >= plan.points.size() || ours(*as_renamed))))
      stale.push_back(entry.path());
  }
  for (const auto& file : stale) std::filesystem::remove(file, ec);
}

}  // namespace hybridsim::analysis

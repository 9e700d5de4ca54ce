// The shipped scenarios the tests run: every YAML file under scenarios/ but the studies (their own
// tests) and the validation cases (the `validate` ctest), sorted; a sweep gives its first and last
// points, to keep the suites fast (`every_point`: all of them). Each run is named by its file, relative to
// the source folder.
#pragma once
#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/loader/scenario.h"
#include "scenarios/loader/sweep.h"

namespace hybridsim::testing {

inline std::vector<std::pair<std::string, scenarios::Scenario>> shipped_scenario_runs(
    const std::filesystem::path& source, bool every_point = false) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(source / "scenarios")) {
    const fs::path& p = entry.path();
    if (p.extension() == ".yaml" && p.string().find("/study/") == std::string::npos &&
        p.string().find("/validate/") == std::string::npos)
      files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  std::vector<std::pair<std::string, scenarios::Scenario>> runs;
  for (const fs::path& file : files) {
    const std::string name = fs::relative(file, source).generic_string();
    const scenarios::Scenario s = scenarios::load_scenario(file.string());
    const auto points = scenarios::expand_sweep(s);
    if (points.empty()) {
      runs.emplace_back(name, s);
      continue;
    }
    if (every_point) {
      for (const auto& p : points)
        runs.emplace_back(name + " point " + std::to_string(p.index),
                          scenarios::load_sweep_point(file.string(), p));
      continue;
    }
    runs.emplace_back(name + " point " + std::to_string(points.front().index),
                      scenarios::load_sweep_point(file.string(), points.front()));
    if (points.size() > 1)
      runs.emplace_back(name + " point " + std::to_string(points.back().index),
                        scenarios::load_sweep_point(file.string(), points.back()));
  }
  return runs;
}

}  // namespace hybridsim::testing

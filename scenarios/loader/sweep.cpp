#include "scenarios/loader/sweep.h"

#include <set>

#include "scenarios/loader/scenario_build.h"
#include "sim/error.h"
#include "sim/yaml/input_file.h"

namespace hybridsim::scenarios {
namespace {

std::string tail(std::string_view path, int components) {
  std::size_t cut = path.size();
  for (int i = 0; i < components; ++i) {
    cut = path.rfind('.', cut == 0 ? 0 : cut - 1);
    if (cut == std::string_view::npos) return std::string(path);
  }
  return std::string(path.substr(cut + 1));
}

// Short names for the label: last two components, unless two parameters would share one.
std::vector<std::string> short_names(const SweepSettings& sweep) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  bool clash = false;
  for (const auto& p : sweep.parameters) {
    names.push_back(tail(p.path, 2));
    clash = clash || !seen.insert(names.back()).second;
  }
  if (clash)
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = sweep.parameters[i].path;
  return names;
}

SweepPoint make_point(const SweepSettings& sweep, const std::vector<std::string>& names,
                      const std::vector<std::size_t>& pick, std::size_t index) {
  SweepPoint point;
  point.index = index;
  for (std::size_t k = 0; k < sweep.parameters.size(); ++k) {
    const auto& p = sweep.parameters[k];
    point.assignments.emplace_back(p.path, p.values[pick[k]]);
    point.label += (k == 0 ? "" : ", ") + names[k] + "=" + p.values[pick[k]];
  }
  return point;
}

}  // namespace

std::vector<std::string> SweepPoint::overrides() const {
  std::vector<std::string> out;
  for (const auto& [path, value] : assignments) out.push_back(path + "=" + value);
  return out;
}

std::vector<SweepPoint> expand_sweep(const SweepSettings& sweep) {
  std::vector<SweepPoint> points;
  if (sweep.parameters.empty()) return points;
  const auto names = short_names(sweep);
  const std::size_t n = sweep.parameters.size();
  for (const auto& p : sweep.parameters)
    if (p.values.empty()) throw InputError("sweep parameter " + p.path + " has no values");
  if (sweep.mode == SweepSettings::Mode::Zip) {
    const std::size_t len = sweep.parameters[0].values.size();
    for (const auto& p : sweep.parameters)
      if (p.values.size() != len)
        throw InputError("sweep (zip): parameter " + p.path + " has " + std::to_string(p.values.size()) +
                         " values but " + sweep.parameters[0].path + " has " + std::to_string(len) +
                         "; expected equal lengths");
    for (std::size_t i = 0; i < len; ++i)
      points.push_back(make_point(sweep, names, std::vector<std::size_t>(n, i), i));
    return points;
  }
  // Product: an odometer whose last digit turns fastest.
  std::vector<std::size_t> pick(n, 0);
  for (std::size_t index = 0;; ++index) {
    points.push_back(make_point(sweep, names, pick, index));
    std::size_t k = n;
    while (k > 0) {
      --k;
      if (++pick[k] < sweep.parameters[k].values.size()) break;
      pick[k] = 0;
      if (k == 0) return points;
    }
  }
}

Scenario parse_sweep_point(std::string_view yaml, const std::string& source_name, const SweepPoint& point,
                           std::span<const std::string> overrides, std::filesystem::path base_dir,
                           const OverrideOrigin& origin) {
  const std::vector<std::string> assignments = point.overrides();
  return parse_scenario_with(yaml, source_name, overrides, &assignments, base_dir, origin);
}

Scenario load_sweep_point(const std::string& path, const SweepPoint& point,
                          std::span<const std::string> overrides) {
  const ScenarioSource source = read_scenario_source(path);
  return parse_sweep_point(source.text, path, point, overrides, source.base_dir);
}

}  // namespace hybridsim::scenarios

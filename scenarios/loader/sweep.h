// Sweep expansion: a scenario's `sweep:` block becomes an ordered list of points, each a set of
// field assignments (path → YAML value text). Loading a point is loading the scenario with those
// assignments as extra --set overrides, the sweep block itself removed.
//   for (const SweepPoint& p : expand_sweep(s.sweep))
//     Scenario one = load_sweep_point(path, p);   // p.label: "nvlink.bandwidth=50 GB/s, dp=4"
#pragma once
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/loader/scenario.h"

namespace hybridsim::scenarios {

struct SweepPoint {
  std::size_t index = 0;  // position in expansion order, from 0
  std::vector<std::pair<std::string, std::string>> assignments;  // path → value as YAML text
  // "nvlink.bandwidth=25 GB/s, parallelism={dp: 8, mp: 1}": each path shortened to its last two
  // components (the full path where two parameters would look alike).
  std::string label;
  // The assignments as --set texts: "cluster.links.nvlink.bandwidth=25 GB/s".
  std::vector<std::string> overrides() const;
  bool operator==(const SweepPoint&) const = default;
};

// Product mode: every combination in the listed order, the LAST parameter varying fastest. Zip
// mode: point i takes the i-th value of every parameter (InputError when lengths differ). No
// parameters: no points.
std::vector<SweepPoint> expand_sweep(const SweepSettings& sweep);
inline std::vector<SweepPoint> expand_sweep(const Scenario& scenario) { return expand_sweep(scenario.sweep); }

// The scenario at one point: `overrides` (the user's --set) are applied first, then the sweep block
// is removed and the point's assignments applied. Errors in an assignment name "sweep value
// path=value", in an override as `origin` says it was written ("--set path=value").
Scenario load_sweep_point(const std::string& path, const SweepPoint& point,
                          std::span<const std::string> overrides = {});
Scenario parse_sweep_point(std::string_view yaml, const std::string& source_name, const SweepPoint& point,
                           std::span<const std::string> overrides = {},
                           std::filesystem::path base_dir = ".", const OverrideOrigin& origin = {});

}  // namespace hybridsim::scenarios

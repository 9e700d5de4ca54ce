// Internal steps of scenario loading (scenarios/loader/scenario.h is the public side): applying one `--set`
// override to the located tree, and turning a validated tree into a Scenario key by key (the table's
// bindings, key_binding.h).
//   TreeNode t = yaml::parse_yaml_tree(text, "s.yaml");  apply_override(t, "cluster.nodes=4", "--set ...");
//   Scenario s = build_scenario(t, "s.yaml", ".");
#pragma once
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/loader/field_reader.h"
#include "scenarios/loader/scenario.h"

namespace hybridsim::scenarios {

// Sets `path` (a declared, non-list field path) in `root` to `value` parsed as YAML; an empty value
// removes the key. Nodes it adds are located at `where` (OverrideOrigin::where: "--set <text>",
// Python's "set={'cluster.nodes': 4}", or "sweep value <text>" for a sweep point's assignment).
// Throws InputError naming them (with a "did you mean" for a near miss).
void apply_override(TreeNode& root, const std::string& text, const std::string& where);
// The same for a path and a value tree that carries its own locations (sweep values).
void set_path(TreeNode& root, std::string_view path, const TreeNode& value, const std::string& where);
// "" when `path` names a declared field that --set and sweeps may set (not a list item); else what
// is wrong, with a "did you mean" for a near miss.
std::string settable_path_problem(std::string_view path);

// Parses, applies `overrides`, then — for a sweep point — removes the sweep block and applies
// `point_overrides`; builds the scenario and checks each sweep value against the rest of it.
Scenario parse_scenario_with(std::string_view yaml, const std::string& source,
                             std::span<const std::string> overrides,
                             const std::vector<std::string>* point_overrides,
                             const std::filesystem::path& base_dir, const OverrideOrigin& origin = {});

// Reads every key of a tree (the top-level mapping) into a Scenario, in table order. Does not check sweep
// values against the rest of the scenario (scenario_load.cpp does, with the whole tree at hand).
Scenario build_scenario(const TreeNode& root, const std::string& source,
                        const std::filesystem::path& base_dir);

}  // namespace hybridsim::scenarios

// Internal steps of scenario loading (scenarios/loader/scenario.h is the public side): applying one `--set`
// override to the located tree, and turning a validated tree into a Scenario section by section.
//   TreeNode t = yaml::parse_yaml_tree(text, "s.yaml");  apply_override(t, "cluster.nodes=4");
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
// removes the key. Nodes it adds are located at "<origin> <text>" ("--set", or "sweep value" for a
// sweep point's assignment). Throws InputError naming them (with a "did you mean" for a near miss).
void apply_override(TreeNode& root, const std::string& text, std::string_view origin = "--set");
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
                             const std::filesystem::path& base_dir);

// Reads every section of a tree (the top-level mapping) into a Scenario. Does not check sweep
// values against the rest of the scenario (scenario_load.cpp does, with the whole tree at hand).
Scenario build_scenario(const TreeNode& root, const std::string& source,
                        const std::filesystem::path& base_dir);

// Section readers (scenario_build_setup.cpp, scenario_build_run.cpp).
void read_cluster(FieldReader& r, const TreeNode& root, ClusterSettings& out);
void read_workload(FieldReader& r, const TreeNode& root, WorkloadSettings& out);
void read_parallelism(FieldReader& r, const TreeNode& root, ParallelismSettings& out);
void read_communication(FieldReader& r, const TreeNode& root, CommunicationSettings& out);
void read_training(FieldReader& r, const TreeNode& root, TrainingSettings& out);
void read_variability(FieldReader& r, const TreeNode& root, workloads::Variability& out);
void read_simulation(FieldReader& r, const TreeNode& root, sim::SimulationLimits& out);
void read_outputs(FieldReader& r, const TreeNode& root, const std::string& source, OutputSettings& out);
void read_sweep(FieldReader& r, const TreeNode& root, SweepSettings& out);

}  // namespace hybridsim::scenarios

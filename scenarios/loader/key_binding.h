// A scenario key bound to the member of Scenario that holds it: each entry of the scenario table
// (schema_table.cpp) is a ScenarioKey — the key's declaration (FieldSpec: path, kind, unit, bounds,
// default, help) and its Binding (how the value is read into the member, written back and shown).
// Reading (scenario_build.cpp), writing back (scenario_write.cpp) and describing (describe.cpp) are
// loops over the table; no key is named anywhere else. Internal to scenarios/.
//   {{.path = "cluster.nodes", .kind = K::Integer, ...},
//    bind<Member<&Scenario::cluster, &ClusterSettings::nodes>, Value, preset_cluster>()}
//   binding_of(field("cluster.nodes")).write(s, spec)   // the member as YAML: "2"
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "scenarios/loader/field_reader.h"
#include "scenarios/loader/scenario.h"
#include "scenarios/loader/schema.h"

namespace hybridsim::scenarios {

struct Binding {
  // Reads the key declared by `spec` from `map` (nullptr: its section is absent, so the default
  // applies) into its member. A section without one: its children are read one by one
  // (read_section); a key without one inside such a section: read by its parent's codec (list
  // items, the fields of training.efficiency and sweep.parameters[]).
  void (*read)(FieldReader& r, const TreeNode* map, const FieldSpec& spec, Scenario& s) = nullptr;
  // The member as YAML for scenario_to_yaml (and, scalars, for describe); nullopt: not written.
  std::optional<TreeNode> (*write)(const Scenario& s, const FieldSpec& spec) = nullptr;
  // A section's checks across its fields, after they are read (node: the section, or nullptr).
  void (*check)(FieldReader& r, const TreeNode* node, Scenario& s) = nullptr;
};

struct ScenarioKey {
  FieldSpec spec;
  Binding binding = {};
};

// The scenario table with its bindings, in declaration order (scenario_schema() is its specs).
std::span<const ScenarioKey> scenario_keys();
// The position of a declared field (a FieldSpec of scenario_schema()) in the table, and its binding.
std::size_t key_index(const FieldSpec& spec);
inline const Binding& binding_of(const FieldSpec& spec) { return scenario_keys()[key_index(spec)].binding; }

// Reads the children of `section` (a FieldSpec of scenario_schema(); nullptr: the top level) in
// table order into `s`, then runs the section's check; `node` is the section (nullptr when absent:
// its children take their defaults).
void read_section(FieldReader& r, const TreeNode* node, const FieldSpec* section, Scenario& s);

// The text of a scalar key's value as scenario_to_yaml writes it ("512 KiB", "auto"); "" when
// it is not written (an unset link override).
std::string key_text(const Scenario& s, std::string_view path);

}  // namespace hybridsim::scenarios

// The canonical YAML of a scenario: every key in table order written back from its member by its
// binding (key_binding.h), with explicit units, so that parsing it again gives an equal Scenario
// (tests/unit/scenario_parse_test.cpp, "round trip").
#include "scenarios/loader/key_binding.h"
#include "scenarios/loader/scenario_build.h"
#include "sim/error.h"

namespace hybridsim::scenarios {

std::string scenario_to_yaml(const Scenario& s) {
  TreeNode root;
  for (const ScenarioKey& key : scenario_keys()) {
    if (key.binding.write == nullptr) continue;
    if (const auto value = key.binding.write(s, key.spec)) set_path(root, key.spec.path, *value, {});
  }
  return yaml::tree_to_yaml(root, false, 3) + "\n";
}

std::string key_text(const Scenario& s, std::string_view path) {
  const FieldSpec& spec = field(path);
  const Binding& b = binding_of(spec);
  if (b.write == nullptr)
    throw InternalError("scenario key " + std::string(path) + " is not bound to a member");
  const auto value = b.write(s, spec);
  return value && value->is_scalar() ? value->scalar : std::string();
}

}  // namespace hybridsim::scenarios

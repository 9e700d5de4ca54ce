// Building a Scenario from a located tree: every key of the table in order, each read into its
// member by its binding (key_binding.h); a section without a binding reads its children the same
// way, then runs its cross-field check.
#include "scenarios/loader/key_binding.h"
#include "scenarios/loader/scenario_build.h"

namespace hybridsim::scenarios {

void read_section(FieldReader& r, const TreeNode* node, std::string_view path, Scenario& s) {
  for (const FieldSpec* child : scenario_schema().children_of(path)) {
    const Binding& b = binding_of(*child);
    if (b.read != nullptr) b.read(r, node, *child, s);
    else if (child->kind == FieldKind::Section) read_section(r, r.section(node, child->path), child->path, s);
  }
  if (path.empty()) return;
  if (const Binding& b = binding_of(field(path)); b.check != nullptr) b.check(r, node, s);
}

Scenario build_scenario(const TreeNode& root, const std::string& source,
                        const std::filesystem::path& base_dir) {
  Scenario s;
  s.source = source;
  s.base_dir = base_dir;
  FieldReader r(s.provenance, source);
  read_section(r, &r.document(root), "", s);
  return s;
}

}  // namespace hybridsim::scenarios

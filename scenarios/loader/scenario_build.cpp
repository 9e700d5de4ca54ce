// Building a Scenario from a located tree: every key of the table in order, each read into its
// member by its binding (key_binding.h); a section without a binding reads its children the same
// way, then runs its cross-field check.
#include "scenarios/loader/key_binding.h"
#include "scenarios/loader/scenario_build.h"

namespace hybridsim::scenarios {

namespace {

// Whether `path` is below `section` ("" is the top level), and directly ("a.b" in "a", not "a.b.c"
// nor the list item "a[]").
bool is_below(std::string_view path, std::string_view section) {
  return section.empty() || (path.size() > section.size() && path.starts_with(section) &&
                             (path[section.size()] == '.' || path[section.size()] == '['));
}
bool is_child(std::string_view path, std::string_view section) {
  const std::string_view rest = section.empty() ? path : path.substr(section.size());
  return (section.empty() || rest.front() == '.') &&
         rest.find_first_of(".[", section.empty() ? 0 : 1) == std::string_view::npos;
}

}  // namespace

// A section's keys follow it in the table (tests/unit/scenario_schema_test.cpp checks it), so its
// children are found by one pass over them.
void read_section(FieldReader& r, const TreeNode* node, const FieldSpec* section, Scenario& s) {
  const auto fields = scenario_schema().fields();
  const std::string_view path = section == nullptr ? std::string_view() : section->path;
  for (std::size_t i = section == nullptr ? 0 : key_index(*section) + 1;
       i < fields.size() && is_below(fields[i].path, path); ++i) {
    const FieldSpec& child = fields[i];
    if (!is_child(child.path, path)) continue;
    const Binding& b = binding_of(child);
    if (b.read != nullptr) b.read(r, node, child, s);
    else if (child.kind == FieldKind::Section) read_section(r, r.section(node, child.path), &child, s);
  }
  if (section == nullptr) return;
  if (const Binding& b = binding_of(*section); b.check != nullptr) b.check(r, node, s);
}

Scenario build_scenario(const TreeNode& root, const std::string& source,
                        const std::filesystem::path& base_dir) {
  Scenario s;
  s.source = source;
  s.base_dir = base_dir;
  FieldReader r(s.provenance, source);
  read_section(r, &r.document(root), nullptr, s);
  return s;
}

}  // namespace hybridsim::scenarios

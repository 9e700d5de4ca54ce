// Checks every file type's schema table must pass (sim/yaml/schema.h): paths declared once,
// parents first, help on every field, defaults that are valid values of their field; and the field
// reference in the file type's README kept identical to the text generated from the table. After
// changing a table, regenerate every README block:
//   HYBRIDSIM_REGENERATE_SCHEMA_REFERENCE=1 hybridsim_tests -tc='*README*'   (then review the diff)
#pragma once
#include <doctest/doctest.h>
#include "tests/paths/paths.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sim/yaml/field_reader.h"
#include "sim/yaml/schema.h"

namespace hybridsim::test {

inline void check_well_formed(const yaml::Schema& schema) {
  std::set<std::string> seen;
  for (const auto& f : schema) {
    CAPTURE(f.path);
    CHECK(seen.insert(std::string(f.path)).second);
    CHECK_FALSE(f.help.empty());
    // The parent: "a.b" for "a.b.c", "a.b" for "a.b[]", "a.b[]" for "a.b[].c".
    const std::string p(f.path);
    std::string parent;
    if (p.ends_with("[]")) parent = p.substr(0, p.size() - 2);
    else if (const auto dot = p.rfind('.'); dot != std::string::npos) parent = p.substr(0, dot);
    if (!parent.empty()) CHECK(seen.count(parent) == 1);
    if (f.kind == yaml::FieldKind::Choice) CHECK_FALSE(yaml::choices_of(f).empty());
    CHECK_FALSE((f.required && !yaml::default_text_of(f).empty()));  // a required field has no default
  }
}

// Reads `node` as a value of the field declared at `path` (list items recursively); throws if invalid.
inline void read_as_declared(const yaml::FieldReader& r, const yaml::TreeNode& node,
                             const std::string& path) {
  using K = yaml::FieldKind;
  if (!r.word(node, path).empty()) return;  // "auto", "off", "all"
  switch (r.field(path).kind) {
    case K::Integer: r.to_integer(node, path); break;
    case K::Number: r.to_number(node, path); break;
    case K::Boolean: CHECK((node.scalar == "true" || node.scalar == "false")); break;
    case K::Choice: r.to_choice(node, path); break;
    case K::Size: r.to_size(node, path); break;
    case K::Rate: r.to_rate(node, path); break;
    case K::Duration: r.to_duration(node, path); break;
    case K::Text:
    case K::Path: r.to_text(node, path); break;
    case K::List:
      for (const auto& item : r.to_list(node, path, 0).items) read_as_declared(r, item, path + "[0]");
      break;
    default: CHECK(node.is_scalar()); break;  // a name (NameOrSection)
  }
}

inline void check_defaults(const yaml::Schema& schema) {
  yaml::FieldReader r(schema, nullptr, "defaults");
  yaml::TreeNode empty;
  empty.kind = yaml::TreeNode::Kind::Map;
  for (const auto& f : schema) {
    if (yaml::default_text_of(f).empty()) continue;
    CAPTURE(f.path);
    const std::string path(f.path);
    const yaml::TreeNode* v = r.value(&empty, path);
    REQUIRE(v != nullptr);
    CHECK_NOTHROW(read_as_declared(r, *v, path));
  }
}

// Checks (or, with HYBRIDSIM_REGENERATE_SCHEMA_REFERENCE set, rewrites) the block between
// "<!-- schema-reference:begin -->" and "<!-- schema-reference:end -->" in `readme` (relative to
// the source tree).
inline void check_reference_block(const std::string& readme, const std::string& generated) {
  const auto path = std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / readme;
  std::ifstream in(path);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  const std::string begin = "<!-- schema-reference:begin -->\n";
  const std::string end = "<!-- schema-reference:end -->";
  const auto a = content.find(begin);
  const auto b = content.find(end);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  const std::string block = content.substr(a + begin.size(), b - a - begin.size());
  if (std::getenv("HYBRIDSIM_REGENERATE_SCHEMA_REFERENCE") != nullptr && block != generated) {
    in.close();
    std::ofstream(path) << content.substr(0, a + begin.size()) + generated + content.substr(b);
    MESSAGE("rewrote the field reference in " << readme);
    return;
  }
  CHECK(block == generated);
}

}  // namespace hybridsim::test

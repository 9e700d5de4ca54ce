// The scenario schema table: well-formed declarations, defaults that parse, suggestions, and the
// field reference in scenarios/README.md kept identical to the generated text.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "scenarios/loader/field_reader.h"
#include "scenarios/loader/resolve.h"
#include "scenarios/loader/schema.h"
#include "scenarios/loader/sweep.h"
#include "sim/error.h"

using namespace hybridsim;
using namespace hybridsim::scenarios;

TEST_CASE("schema: every field is declared once, after its parent, with help") {
  std::set<std::string> seen;
  for (const auto& f : scenario_schema()) {
    CAPTURE(f.path);
    CHECK(seen.insert(std::string(f.path)).second);
    CHECK_FALSE(f.help.empty());
    // The parent: "a.b" for "a.b.c", "a.b" for "a.b[]", "a.b[]" for "a.b[].c".
    const std::string p(f.path);
    std::string parent;
    if (p.ends_with("[]")) parent = p.substr(0, p.size() - 2);
    else if (const auto dot = p.rfind('.'); dot != std::string::npos) parent = p.substr(0, dot);
    if (!parent.empty()) CHECK(seen.count(parent) == 1);
    if (f.kind == FieldKind::Choice) CHECK_FALSE(choices_of(f).empty());
    CHECK_FALSE((f.required && !default_text_of(f).empty()));  // a required field has no default
  }
  CHECK(find_field("parallelism.placement[7].gpu") == find_field("parallelism.placement[].gpu"));
  CHECK(find_field("cluster.nodez") == nullptr);
  CHECK_THROWS_AS(field("cluster.nodez"), InternalError);
  CHECK(spec_path_of("parallelism.mapping[3][1]") == "parallelism.mapping[][]");
}

TEST_CASE("schema: every declared default is a valid value of its field") {
  Provenance provenance;
  FieldReader r(provenance, "defaults");
  TreeNode empty;
  empty.kind = TreeNode::Kind::Map;
  for (const auto& f : scenario_schema()) {
    if (default_text_of(f).empty()) continue;
    CAPTURE(f.path);
    const std::string path(f.path);
    const TreeNode* v = r.value(&empty, path);
    REQUIRE(v != nullptr);
    if (!r.word(*v, path).empty()) continue;  // "auto", "off", "all"
    switch (f.kind) {
      case FieldKind::Integer: CHECK_NOTHROW(r.integer(&empty, path)); break;
      case FieldKind::Number: CHECK_NOTHROW(r.number(&empty, path)); break;
      case FieldKind::Boolean: CHECK_NOTHROW(r.boolean(&empty, path)); break;
      case FieldKind::Choice: CHECK_NOTHROW(r.choice(&empty, path)); break;
      case FieldKind::Size: CHECK_NOTHROW(r.size(&empty, path)); break;
      case FieldKind::Rate: CHECK(r.rate_opt(&empty, path)); break;
      case FieldKind::Duration: CHECK(r.duration_opt(&empty, path)); break;
      case FieldKind::Text:
      case FieldKind::Path: CHECK(r.text_opt(&empty, path)); break;
      case FieldKind::List:
        for (std::size_t i = 0; i < v->items.size(); ++i) CHECK_NOTHROW(r.to_choice(v->items[i], path + "[0]"));
        break;
      default: CHECK(v->is_scalar()); break;  // a curve name
    }
  }
}

TEST_CASE("schema: expected texts and suggestions") {
  CHECK(expected_text(field("cluster.nodes")) == "a whole number from 1 to 4096");
  CHECK(expected_text(field("cluster.gpus_per_node")) == "auto or a whole number from 1 to 65536");
  CHECK(expected_text(field("communication.reduction_bandwidth")) ==
        "off or a bandwidth such as \"25 GB/s\" or \"100 Gb/s\", > 0");
  CHECK(expected_text(field("communication.algorithm")) == "one of: auto, ring, tree, hierarchical");
  CHECK(expected_text(field("workload.compute_speed")) == "a number > 0 and <= 1000");
  CHECK(expected_text(field("cluster.oversubscription")) == "a number >= 1");
  // kitten → sitting: substitute k/s, substitute e/i, insert g = 3 edits.
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  const std::vector<std::string> names = {"nodes", "preset", "topology", "fabric"};
  CHECK(closest_match("nodez", names) == "nodes");
  CHECK(closest_match("prest", names) == "preset");
  CHECK_FALSE(closest_match("bandwidth", names));  // nothing close
}

TEST_CASE("schema: scenarios/README.md holds exactly the generated field reference") {
  std::ifstream in(std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/README.md");
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const std::string begin = "<!-- schema-reference:begin -->\n";
  const std::string end = "<!-- schema-reference:end -->";
  const auto a = readme.find(begin);
  const auto b = readme.find(end);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  const std::string block = readme.substr(a + begin.size(), b - a - begin.size());
  // After changing the schema table, regenerate the block: HYBRIDSIM_REGENERATE_SCHEMA_REFERENCE=1
  // hybridsim_tests -tc='schema: scenarios/README.md*' (then review the diff).
  if (std::getenv("HYBRIDSIM_REGENERATE_SCHEMA_REFERENCE") != nullptr && block != schema_reference_markdown()) {
    std::ofstream(std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/README.md")
        << readme.substr(0, a + begin.size()) + schema_reference_markdown() + readme.substr(b);
    MESSAGE("rewrote the field reference in scenarios/README.md");
    return;
  }
  CHECK(block == schema_reference_markdown());
  // The terminal version names every field.
  const std::string plain = schema_reference_text();
  for (const auto& f : scenario_schema()) CHECK(plain.find(std::string(f.path) + "  (") != std::string::npos);
}

TEST_CASE("schema: the example scenario in scenarios/README.md is valid and sweeps 3 × 2 points") {
  std::ifstream in(std::filesystem::path(HYBRIDSIM_SOURCE_DIR) / "scenarios/README.md");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const auto a = readme.find("```yaml\n");
  REQUIRE(a != std::string::npos);
  const auto b = readme.find("```", a + 8);
  const Scenario s = parse_scenario(readme.substr(a + 8, b - a - 8), "README.md");
  CHECK(s.parallelism.dp == 8);
  CHECK(s.cluster.links[sim::LinkKind::NVLink].latency == sim::Time::ns(700));
  CHECK(s.outputs.trace->window == sim::TimeWindow{sim::Time::zero(), sim::Time::ms(50)});
  CHECK(expand_sweep(s).size() == 6);
  CHECK(resolve(s).topology.gpus().size() == 8);
}

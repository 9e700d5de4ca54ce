// Loading a scenario: read the file, parse it into a located tree, apply `--set` overrides (and a
// sweep point's assignments), build the Scenario, and check every sweep value against the rest.
#include <string>
#include <vector>

#include "scenarios/loader/scenario_build.h"
#include "scenarios/loader/schema.h"
#include "sim/error.h"
#include "sim/text.h"
#include "sim/yaml/field_reader.h"
#include "sim/yaml/input_file.h"

namespace hybridsim::scenarios {
namespace {

std::vector<std::string> settable_paths() {
  std::vector<std::string> out;
  for (const auto& f : scenario_schema())
    if (f.path.find('[') == std::string_view::npos) out.emplace_back(f.path);
  return out;
}

void check_sweep_values(const TreeNode& root, const Scenario& s) {
  const TreeNode* params = root.find("sweep")->find("parameters");
  // The scenario without its sweep block, copied once: each value then costs a copy of the
  // scenario alone, not of every value again (a sweep of 20,000 values stays linear).
  TreeNode base = root;
  base.erase("sweep");
  for (std::size_t i = 0; i < s.sweep.parameters.size(); ++i) {
    const SweepParameter& param = s.sweep.parameters[i];
    const TreeNode& values = *params->items[i].find("values");
    for (std::size_t j = 0; j < values.items.size(); ++j) {
      const TreeNode& v = values.items[j];
      TreeNode point = base;
      set_path(point, param.path, v, v.where);
      try {
        build_scenario(point, s.source, s.base_dir);
      } catch (const InputError& e) {
        const std::string message = e.what();
        if (message.starts_with(v.where + ":")) throw;
        fail_at(v.where, "sweep.parameters[" + std::to_string(i) + "].values[" + std::to_string(j) + "]",
                "with " + param.path + " = " + param.values[j] + " the scenario is invalid: " + message);
      }
    }
  }
}

// " (training's fields: network, ...)": the fields of the longest declared section `path` begins
// with (the scenario's at the top), as a file's "unknown field; expected one of" lists them.
std::string fields_beside(std::string_view path) {
  const yaml::Schema& schema = scenario_schema();
  const auto parent = [](std::string_view p) {
    const auto dot = p.rfind('.');
    return dot == std::string_view::npos ? std::string_view() : p.substr(0, dot);
  };
  std::string_view section = parent(path);
  while (!section.empty() && schema.children_of(section).empty()) section = parent(section);
  std::string out =
      " (" + (section.empty() ? std::string("a scenario") : std::string(section)) + "'s fields: ";
  const auto children = schema.children_of(section);
  for (std::size_t i = 0; i < children.size(); ++i)
    out += (i ? ", " : "") + std::string(yaml::leaf_name(children[i]->path));
  return out + ")";
}

}  // namespace

std::string settable_path_problem(std::string_view path) {
  const auto paths = settable_paths();
  for (const auto& p : paths)
    if (p == path) return {};
  const auto guess = yaml::closest_path(path, paths);
  return "unknown field '" + std::string(path) + "'" +
         (guess ? " (did you mean '" + *guess + "'?)" : fields_beside(path));
}

void set_path(TreeNode& root, std::string_view path, const TreeNode& value, const std::string& where) {
  if (root.is_null()) {
    root.kind = TreeNode::Kind::Map;
    root.where = where;
  }
  TreeNode* node = &root;
  while (true) {
    const auto dot = path.find('.');
    const std::string_view key = path.substr(0, dot);
    if (dot == std::string_view::npos) {
      if (value.is_null()) node->erase(key);
      else node->get_or_add(key, where) = value;
      return;
    }
    TreeNode& next = node->get_or_add(key, where);
    if (!next.is_map()) {  // a scalar (e.g. a curve name) or null becomes a mapping
      next = TreeNode{};
      next.kind = TreeNode::Kind::Map;
      next.where = where;
    }
    node = &next;
    path.remove_prefix(dot + 1);
  }
}

void apply_override(TreeNode& root, const std::string& text, const std::string& where) {
  const auto eq = text.find('=');
  if (eq == std::string::npos)
    throw InputError(where + ": expected path=value, e.g. --set cluster.nodes=4 or --set "
                             "communication.message_size=\"256 KiB\"");
  const std::string path(sim::trim(std::string_view(text).substr(0, eq)));
  if (const std::string problem = settable_path_problem(path); !problem.empty())
    throw InputError(where + ": " + problem);
  if (!root.is_map() && !root.is_null()) return;  // the file itself is wrong; reported when built
  set_path(root, path, yaml::parse_yaml_tree_at(std::string_view(text).substr(eq + 1), where), where);
}

namespace {

// A study or validation case file given where a scenario was expected: named as such, with the
// command that runs it ("format: unknown field; expected one of: name, ..." left the user to guess).
void refuse_other_kinds_of_file(const TreeNode& root) {
  if (!root.is_map()) return;
  if (const TreeNode* f = root.find("format"); f != nullptr && f->is_scalar()) {
    const bool llm = f->scalar.starts_with("hybridsim-llm-study");
    if (llm || f->scalar.starts_with("hybridsim-study"))
      yaml::fail_at(
          f->where, "format",
          "\"" + f->scalar + "\" is a " + (llm ? "transformer " : "") + "study file's, not a scenario's",
          "a scenario (hybridsim study runs a study file)");
  }
  if (const TreeNode* c = root.find("cases"); c != nullptr && root.find("workload") == nullptr)
    yaml::fail_at(c->where, "cases", "a validation case file's list, not a scenario's field",
                  "a scenario (hybridsim validate --cases FILE runs a case file)");
}

}  // namespace

Scenario parse_scenario_with(std::string_view yaml, const std::string& source,
                             std::span<const std::string> overrides,
                             const std::vector<std::string>* point_overrides,
                             const std::filesystem::path& base_dir, const OverrideOrigin& origin) {
  TreeNode root = yaml::parse_yaml_tree(yaml, source);
  refuse_other_kinds_of_file(root);
  std::vector<std::string> applied;
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    // "--set cluster.nodes=$N" with N unset ran the default without a word, as an empty --memory
    // did: removing a key is said out loud (null), an empty value refused. (A sweep value is YAML
    // the file wrote, so its own.)
    const std::string& text = overrides[i];
    if (text.find('=') != std::string::npos && override_value(text).empty()) {
      const std::string path = override_path(text);
      // Spelled otherwise than the command line's --set or a shorthand (--memory " "): Python's
      // set={...}, whose null is hybridsim.DEFAULT (its None is refused: a section's None keeps the value).
      const bool python =
          i < origin.spelled.size() && !origin.spelled[i].empty() && !origin.spelled[i].starts_with("--");
      throw InputError(origin.where(i, text) + ": the value is empty" +
                       (python ? "; expected a value, or set={'" + path + "': hybridsim.DEFAULT}"
                               : " (an unset shell variable?); expected path=value, or " + path + "=null") +
                       " to remove the key (its default again)");
    }
    apply_override(root, overrides[i], origin.where(i, overrides[i]));
    applied.push_back(overrides[i]);
  }
  if (point_overrides != nullptr) {
    root.erase("sweep");
    for (const auto& o : *point_overrides) {
      apply_override(root, o, "sweep value " + echoed_override(o));
      applied.push_back(o);
    }
  }
  Scenario s = build_scenario(root, source, base_dir);
  if (!s.sweep.parameters.empty()) check_sweep_values(root, s);
  s.provenance.overrides = std::move(applied);
  return s;
}

Scenario parse_scenario(std::string_view yaml, const std::string& source_name,
                        std::span<const std::string> overrides, std::filesystem::path base_dir,
                        const OverrideOrigin& origin) {
  return parse_scenario_with(yaml, source_name, overrides, nullptr, base_dir, origin);
}

ScenarioSource read_scenario_source(const std::string& path) {
  std::filesystem::path base = std::filesystem::path(path).parent_path();
  if (base.empty()) base = ".";
  return {yaml::read_input_file(path, "scenario file"), path, base};
}

Scenario load_scenario(const std::string& path, std::span<const std::string> overrides,
                       const OverrideOrigin& origin) {
  const ScenarioSource source = read_scenario_source(path);
  return parse_scenario_with(source.text, path, overrides, nullptr, source.base_dir, origin);
}

std::string location_of(const Scenario& scenario, std::string_view path) {
  std::string p(path);
  while (!p.empty()) {
    if (const auto it = scenario.provenance.where.find(p); it != scenario.provenance.where.end())
      return it->second;
    const auto cut = p.find_last_of(".[");
    p = cut == std::string::npos ? "" : p.substr(0, cut);
  }
  return scenario.source;
}

std::string_view output_format_name(OutputFormat f) {
  switch (f) {
    case OutputFormat::Table: return "table";
    case OutputFormat::Json: return "json";
    case OutputFormat::Csv: return "csv";
  }
  return "table";
}

}  // namespace hybridsim::scenarios

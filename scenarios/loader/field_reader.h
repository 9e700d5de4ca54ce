// Reads typed values out of a located YAML tree (scenarios/loader/yaml_tree.h) by schema path: checks the
// key against its declaration (scenarios/loader/schema.h), applies the declared default when the key is
// absent, enforces kind and bounds, and records where each value was written. Internal to
// scenarios/ (used by the scenario builder).
//   FieldReader r(provenance, "s.yaml");
//   const TreeNode* c = r.section(&root, "cluster");          // unknown keys → "did you mean"
//   int nodes = static_cast<int>(r.integer(c, "cluster.nodes"));   // absent → the default, 1
#pragma once
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "scenarios/loader/scenario.h"
#include "scenarios/loader/schema.h"
#include "scenarios/loader/yaml_tree.h"
#include "sim/time.h"
#include "sim/units.h"

namespace hybridsim::scenarios {

// "where: path: what; expected ..." as an InputError.
[[noreturn]] void fail_at(const std::string& where, std::string_view path, const std::string& what,
                          const std::string& expected = {});

class FieldReader {
 public:
  FieldReader(Provenance& provenance, std::string source)
      : provenance_(provenance), source_(std::move(source)) {}

  // The mapping at `path` inside `parent` (nullptr: the parent is absent), checked against its
  // declared children; nullptr when absent or null. A missing required section is an error.
  const TreeNode* section(const TreeNode* parent, std::string_view path);
  // Checks that `node` is a mapping with only the declared keys of `path` and all required ones.
  void check_section(const TreeNode& node, std::string_view path);
  // The value written for `path` in `map`; nullptr when absent or null.
  const TreeNode* written(const TreeNode* map, std::string_view path);
  // The written value, or the declared default parsed as YAML; nullptr when neither exists.
  const TreeNode* value(const TreeNode* map, std::string_view path);
  // The keyword (one of the field's `words`) a node holds, or "".
  std::string word(const TreeNode& node, std::string_view path) const;

  // Typed reads of a scalar field with its default applied; nullopt when the field is absent
  // without default, or holds a keyword ("auto", "off", "all").
  std::optional<std::int64_t> integer_opt(const TreeNode* map, std::string_view path);
  std::optional<double> number_opt(const TreeNode* map, std::string_view path);
  std::optional<std::string> text_opt(const TreeNode* map, std::string_view path);  // Text, Path
  std::optional<std::string> choice_opt(const TreeNode* map, std::string_view path);
  std::optional<sim::Bytes> size_opt(const TreeNode* map, std::string_view path);
  std::optional<sim::Bandwidth> rate_opt(const TreeNode* map, std::string_view path);
  std::optional<sim::Time> duration_opt(const TreeNode* map, std::string_view path);
  // The same for fields that always have a value (a default that is not a keyword).
  std::int64_t integer(const TreeNode* map, std::string_view path);
  double number(const TreeNode* map, std::string_view path);
  bool boolean(const TreeNode* map, std::string_view path);
  std::string choice(const TreeNode* map, std::string_view path);
  sim::Bytes size(const TreeNode* map, std::string_view path);

  // Conversions of one node declared at `path` (list items use these directly).
  std::string scalar(const TreeNode& node, std::string_view path) const;
  std::int64_t to_integer(const TreeNode& node, std::string_view path) const;
  double to_number(const TreeNode& node, std::string_view path) const;
  std::string to_choice(const TreeNode& node, std::string_view path) const;
  // A sequence (checked), recorded; `min_items` items at least.
  const TreeNode& to_list(const TreeNode& node, std::string_view path, std::size_t min_items) const;

  void note(std::string_view path, const TreeNode& node) { provenance_.where[std::string(path)] = node.where; }
  const std::string& source() const { return source_; }

 private:
  const TreeNode* scalar_value(const TreeNode* map, std::string_view path);

  Provenance& provenance_;
  std::string source_;
  std::deque<TreeNode> defaults_;  // parsed defaults (stable addresses)
};

// What a node is, for "got ..." in messages: "\"four\"", "a mapping", "a list", "nothing".
std::string describe_node(const TreeNode& node);

}  // namespace hybridsim::scenarios

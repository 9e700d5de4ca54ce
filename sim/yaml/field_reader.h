// Reads typed values out of a located YAML tree (sim/yaml/tree.h) by schema path: checks the
// key against its declaration (sim/yaml/schema.h), applies the declared default when the key
// is absent, enforces kind and bounds, and (optionally) records where each value was written.
// Every error reads "file:line:col: field.path: what; expected ...".
//   FieldReader r(topology_schema(), nullptr, "t.yaml");
//   const TreeNode& nodes = r.to_list(*r.value(&root, "nodes"), "nodes", 1);
//   int count = static_cast<int>(r.integer(link, "links[3].count"));   // absent → the default, 1
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sim/time.h"
#include "sim/units.h"
#include "sim/yaml/schema.h"
#include "sim/yaml/tree.h"

namespace hybridsim::yaml {

// Where each value read was written: field path → "file:line:col" (or "--set ...").
using WhereRecord = std::map<std::string, std::string>;

// "where: path: what; expected ..." as an InputError.
[[noreturn]] void fail_at(const std::string& where, std::string_view path, const std::string& what,
                          const std::string& expected = {});

// What a node is, for "got ..." in messages: "\"four\"", "a mapping", "a list", "nothing".
std::string describe_node(const TreeNode& node);

class FieldReader {
 public:
  // `record` (may be nullptr) receives the location of every field read; `source` names the
  // document for errors about a missing top-level field.
  FieldReader(const Schema& schema, WhereRecord* record, std::string source)
      : schema_(schema), record_(record), source_(std::move(source)) {}

  const Schema& schema() const { return schema_; }
  const FieldSpec& field(std::string_view path) const { return schema_.field(path); }
  std::string expected(std::string_view path) const { return schema_.expected_text(field(path)); }

  // The top-level mapping of a document, checked against the top-level fields; an empty document
  // reads as an empty mapping located at its start, so that its missing required fields are named.
  const TreeNode& document(const TreeNode& root);
  // The mapping at `path` inside `parent` (nullptr: the parent is absent), checked against its
  // declared children; nullptr when absent or null. A missing required section is an error.
  const TreeNode* section(const TreeNode* parent, std::string_view path);
  // Checks that `node` is a mapping with only the declared keys of `path` and all required ones
  // ("" for the top level of the document).
  void check_section(const TreeNode& node, std::string_view path);
  // The value written for `path` in `map`; nullptr when absent or null.
  const TreeNode* written(const TreeNode* map, std::string_view path);
  // The written value, or the declared default parsed as YAML; nullptr when neither exists.
  const TreeNode* value(const TreeNode* map, std::string_view path);
  // The written value; a missing one is "missing required field" located at the map.
  const TreeNode& required(const TreeNode& map, std::string_view path);
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
  // The same for fields that always have a value (required, or a default that is not a keyword).
  std::int64_t integer(const TreeNode* map, std::string_view path);
  double number(const TreeNode* map, std::string_view path);
  bool boolean(const TreeNode* map, std::string_view path);
  std::string text(const TreeNode* map, std::string_view path);
  std::string choice(const TreeNode* map, std::string_view path);
  sim::Bytes size(const TreeNode* map, std::string_view path);
  sim::Bandwidth rate(const TreeNode* map, std::string_view path);
  sim::Time duration(const TreeNode* map, std::string_view path);

  // Conversions of one node declared at `path` (list items use these directly).
  std::string scalar(const TreeNode& node, std::string_view path) const;
  std::string to_text(const TreeNode& node, std::string_view path) const;  // not empty
  std::int64_t to_integer(const TreeNode& node, std::string_view path) const;
  double to_number(const TreeNode& node, std::string_view path) const;
  std::string to_choice(const TreeNode& node, std::string_view path) const;
  sim::Bytes to_size(const TreeNode& node, std::string_view path) const;
  sim::Bandwidth to_rate(const TreeNode& node, std::string_view path) const;
  sim::Time to_duration(const TreeNode& node, std::string_view path) const;
  // A sequence (checked); `min_items` items at least.
  const TreeNode& to_list(const TreeNode& node, std::string_view path, std::size_t min_items) const;
  // "unknown value "x" (did you mean 'y'?); expected ..." for a name that is none of `names`.
  [[noreturn]] void fail_unknown(const TreeNode& node, std::string_view path,
                                 std::span<const std::string> names) const;

  void note(std::string_view path, const TreeNode& node) {
    if (record_ != nullptr) (*record_)[std::string(path)] = node.where;
  }
  const std::string& source() const { return source_; }

 private:
  // A unit string read with `parse` ("25 GB/s" → sim::Bandwidth), its bounds checked on
  // `magnitude(value)` (bytes, bytes per second, picoseconds).
  template <class Parse, class Magnitude>
  auto parse_unit(const TreeNode& node, std::string_view path, Parse parse, Magnitude magnitude) const;
  const TreeNode* scalar_value(const TreeNode* map, std::string_view path);
  [[noreturn]] void no_value(std::string_view path) const;

  const Schema& schema_;
  WhereRecord* record_;
  std::string source_;
  std::map<const FieldSpec*, std::optional<TreeNode>> parsed_defaults_;  // nullopt: no default
  std::deque<TreeNode> defaults_;  // defaults handed out, located at their map (stable addresses)
};

}  // namespace hybridsim::yaml

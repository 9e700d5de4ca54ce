// A small, mutable YAML tree in which every node remembers where it was written ("file:line:col",
// 1-based, or "--set path=value" for command-line overrides). Scenario parsing reads this tree, not
// yaml-cpp nodes, so overrides and sweep points can be spliced in and still report their own origin.
//   TreeNode t = parse_yaml_tree("cluster: {preset: dgx1-v100}", "s.yaml");
//   t.find("cluster")->find("preset")->where == "s.yaml:1:20"
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::scenarios {

struct TreeEntry;

struct TreeNode {
  enum class Kind : unsigned char { Null, Scalar, Sequence, Map };
  Kind kind = Kind::Null;
  std::string scalar;             // Scalar: the text as written (quotes removed)
  std::vector<TreeNode> items;    // Sequence
  std::vector<TreeEntry> entries; // Map, in the order written
  std::string where;              // "file:line:col" or "--set text"

  bool is_null() const { return kind == Kind::Null; }
  bool is_scalar() const { return kind == Kind::Scalar; }
  bool is_sequence() const { return kind == Kind::Sequence; }
  bool is_map() const { return kind == Kind::Map; }
  // The value under `key` of a map; nullptr when absent (or when this is not a map).
  const TreeNode* find(std::string_view key) const;
  TreeNode* find(std::string_view key);
  // Removes `key` from a map; returns whether it was there.
  bool erase(std::string_view key);
  // The value under `key`, appended (as a null node located at `where`) when absent.
  TreeNode& get_or_add(std::string_view key, const std::string& where);
};

struct TreeEntry {
  std::string key;
  std::string key_where;  // where the key itself was written
  TreeNode value;
};

// Parses one YAML document. Every node's `where` is "source:line:col" (1-based). Throws InputError
// ("source:line:col: invalid YAML: ...") on a syntax error, more than one document, a repeated key,
// a key that is not plain text, or nesting deeper than 64 levels.
TreeNode parse_yaml_tree(std::string_view text, const std::string& source);
// The same, but every node's `where` is `where` (for text given on the command line).
TreeNode parse_yaml_tree_at(std::string_view text, const std::string& where);

// YAML text of a tree: `flow` gives one line ("{dp: 4, mp: 2}", "25 GB/s"); otherwise block style,
// except that mappings of depth >= `flow_depth` and lists (other than shallower lists of mappings)
// are written in flow style.
std::string tree_to_yaml(const TreeNode& node, bool flow, int flow_depth = 2);

}  // namespace hybridsim::scenarios

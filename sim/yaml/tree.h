// A small, mutable YAML tree in which every node remembers where it was written ("file:line:col",
// 1-based, or "--set path=value" for command-line overrides). Every YAML input — scenarios,
// topologies, studies, profiles — is read into this tree, never as yaml-cpp nodes, so that overrides
// and sweep points can be spliced in and still report their own origin, and so that the same rules
// hold in every file: one document, no repeated keys, keys are plain text, at most 64 levels deep,
// and at most kMaxTreeNodes nodes once aliases are expanded.
//   TreeNode t = parse_yaml_tree("cluster: {preset: dgx1-v100}", "s.yaml");
//   t.find("cluster")->find("preset")->where == "s.yaml:1:20"
#pragma once
#include <cstddef>
#include "sim/limits.h"
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::yaml {

// The most nodes (keys and values, every alias expanded into the copy it stands for) one document
// may hold. The largest shipped input, workloads/profiles/v100/gnmt.yaml, holds 17,569; a tree of
// this many nodes takes about 40 MB, and an alias bomb (ten aliases of ten aliases of ...) stops here
// within a few milliseconds instead of expanding to billions of copies.
inline constexpr std::size_t kMaxTreeNodes = sim::limits::kYamlNodes.value;
// The deepest nesting a document may have (the top-level value is at depth 0).
inline constexpr int kMaxTreeDepth = sim::limits::kYamlDepth.value;

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

// Parses one YAML document. Every node's `where` is "source:line:col" (1-based); an alias's copy
// keeps the location of what it names. Throws InputError ("source:line:col: invalid YAML: ...") on
// a syntax error, more than one document, a repeated key, a key that is not plain text, nesting
// deeper than kMaxTreeDepth levels, or more than kMaxTreeNodes nodes.
TreeNode parse_yaml_tree(std::string_view text, const std::string& source);
// The same, but every node's `where` is `where` (for text given on the command line).
TreeNode parse_yaml_tree_at(std::string_view text, const std::string& where);

// YAML text of a tree: `flow` gives one line ("{dp: 4, mp: 2}", "25 GB/s"); otherwise block style,
// except that mappings of depth >= `flow_depth` and lists (other than shallower lists of mappings)
// are written in flow style.
std::string tree_to_yaml(const TreeNode& node, bool flow, int flow_depth = 2);

}  // namespace hybridsim::yaml

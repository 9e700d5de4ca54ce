// The tree's own operations (lookups, edits) and its YAML text; parsing is in tree_parse.cpp.
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "sim/yaml/tree.h"

namespace hybridsim::yaml {
namespace {

YAML::Node to_yaml_node(const TreeNode& node, bool flow, int flow_depth, int depth) {
  switch (node.kind) {
    case TreeNode::Kind::Null:
      return YAML::Node(YAML::NodeType::Null);
    case TreeNode::Kind::Scalar:
      return YAML::Node(node.scalar);
    case TreeNode::Kind::Sequence: {
      YAML::Node seq(YAML::NodeType::Sequence);
      for (const auto& item : node.items) seq.push_back(to_yaml_node(item, flow, flow_depth, depth + 1));
      // A shallow list of mappings is a block list (one item per line); other lists are flow.
      const bool of_maps = !node.items.empty() && std::all_of(node.items.begin(), node.items.end(),
                                                              [](const TreeNode& i) { return i.is_map(); });
      seq.SetStyle(!flow && of_maps && depth < flow_depth ? YAML::EmitterStyle::Block
                                                          : YAML::EmitterStyle::Flow);
      return seq;
    }
    case TreeNode::Kind::Map: {
      YAML::Node map(YAML::NodeType::Map);
      for (const auto& e : node.entries)
        map[e.key] = to_yaml_node(e.value, flow, flow_depth, depth + 1);
      map.SetStyle(flow || depth >= flow_depth ? YAML::EmitterStyle::Flow : YAML::EmitterStyle::Block);
      return map;
    }
  }
  return {};
}

}  // namespace

const TreeNode* TreeNode::find(std::string_view key) const {
  if (kind != Kind::Map) return nullptr;
  for (const auto& e : entries)
    if (e.key == key) return &e.value;
  return nullptr;
}

TreeNode* TreeNode::find(std::string_view key) {
  return const_cast<TreeNode*>(static_cast<const TreeNode*>(this)->find(key));
}

bool TreeNode::erase(std::string_view key) {
  const auto it =
      std::find_if(entries.begin(), entries.end(), [&](const TreeEntry& e) { return e.key == key; });
  if (it == entries.end()) return false;
  entries.erase(it);
  return true;
}

TreeNode& TreeNode::get_or_add(std::string_view key, const std::string& at) {
  if (TreeNode* found = find(key)) return *found;
  TreeNode value;
  value.where = at;
  entries.push_back({std::string(key), at, std::move(value)});
  return entries.back().value;
}

std::string tree_to_yaml(const TreeNode& node, bool flow, int flow_depth) {
  YAML::Emitter out;
  out << to_yaml_node(node, flow, flow_depth, 0);
  return out.c_str();
}

}  // namespace hybridsim::yaml

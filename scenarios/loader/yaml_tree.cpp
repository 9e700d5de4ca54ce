#include "scenarios/loader/yaml_tree.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>

#include "sim/error.h"

namespace hybridsim::scenarios {
namespace {

constexpr int kMaxDepth = 64;

using Locate = std::function<std::string(const YAML::Mark&)>;

TreeNode convert(const YAML::Node& node, const Locate& locate, int depth) {
  TreeNode out;
  out.where = locate(node.Mark());
  if (depth > kMaxDepth) throw InputError(out.where + ": invalid YAML: nested more than 64 levels deep");
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out.kind = TreeNode::Kind::Null;
      break;
    case YAML::NodeType::Scalar:
      out.kind = TreeNode::Kind::Scalar;
      out.scalar = node.Scalar();
      break;
    case YAML::NodeType::Sequence:
      out.kind = TreeNode::Kind::Sequence;
      for (const auto& item : node) out.items.push_back(convert(item, locate, depth + 1));
      break;
    case YAML::NodeType::Map:
      out.kind = TreeNode::Kind::Map;
      for (const auto& kv : node) {
        const std::string key_where = locate(kv.first.Mark());
        if (!kv.first.IsScalar())
          throw InputError(key_where + ": invalid YAML: a key must be plain text, not a list or mapping");
        const std::string key = kv.first.Scalar();
        if (out.find(key) != nullptr)
          throw InputError(key_where + ": invalid YAML: repeated key '" + key + "'");
        out.entries.push_back({key, key_where, convert(kv.second, locate, depth + 1)});
      }
      break;
  }
  return out;
}

TreeNode parse_with(std::string_view text, const Locate& locate) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    throw InputError(locate(e.mark) + ": invalid YAML: " + e.msg);
  }
  if (docs.size() > 1)
    throw InputError(locate(docs[1].Mark()) + ": invalid YAML: expected one document, found " +
                     std::to_string(docs.size()) + " (remove the extra '---')");
  if (docs.empty()) {
    TreeNode empty;
    empty.where = locate(YAML::Mark::null_mark());
    return empty;
  }
  try {
    return convert(docs[0], locate, 0);
  } catch (const YAML::Exception& e) {
    throw InputError(locate(e.mark) + ": invalid YAML: " + e.msg);
  }
}

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
      seq.SetStyle(!flow && of_maps && depth < flow_depth ? YAML::EmitterStyle::Block : YAML::EmitterStyle::Flow);
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
  const auto it = std::find_if(entries.begin(), entries.end(), [&](const TreeEntry& e) { return e.key == key; });
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

TreeNode parse_yaml_tree(std::string_view text, const std::string& source) {
  return parse_with(text, [&source](const YAML::Mark& m) {
    if (m.is_null()) return source + ":1:1";
    return source + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  });
}

TreeNode parse_yaml_tree_at(std::string_view text, const std::string& where) {
  return parse_with(text, [&where](const YAML::Mark&) { return where; });
}

std::string tree_to_yaml(const TreeNode& node, bool flow, int flow_depth) {
  YAML::Emitter out;
  out << to_yaml_node(node, flow, flow_depth, 0);
  return out.c_str();
}

}  // namespace hybridsim::scenarios

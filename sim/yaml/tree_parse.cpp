// Parsing YAML text into a located tree in two steps, both bounded by kMaxTreeNodes:
//  1. yaml-cpp's parser reports events (scalar, start of a mapping, alias, ...) and a compact graph
//     is built from them — one node per node written, an alias a reference to what it names. This
//     replaces YAML::Load, whose node graph costs about 500 bytes per node (a 1 MiB list of numbers
//     took 250 MB) before any of our checks could run.
//  2. The graph is copied into the TreeNode tree, every alias expanded into a copy, with the checks
//     every input file shares (keys plain text and not repeated, depth, node count).
// The graph follows YAML::Load's rules exactly (an alias names the latest anchor of that name, even
// one still open, so a cycle is an endless nesting reported by the depth check).
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <istream>
#include <optional>
#include <streambuf>
#include <string_view>

#include "sim/error.h"
#include "sim/yaml/encoding.h"
#include "sim/yaml/tree.h"

namespace hybridsim::yaml {
namespace {

using Locate = std::function<std::string(const YAML::Mark&)>;

// A node as written: for an alias, `target` is the node it names and `mark` where the alias is.
struct RawNode {
  enum class Kind : unsigned char { Null, Scalar, Sequence, Map, Alias };
  Kind kind = Kind::Null;
  YAML::Mark mark;
  std::uint32_t target = 0;             // Alias
  std::string scalar;                   // Scalar
  bool plain = false;                   // Scalar: written without quotes or a tag ("<<" merges only so)
  std::vector<std::uint32_t> children;  // Sequence: items; Map: key, value, key, value, ...
};

// `expanded`: the budget ran out while copying aliases (rather than while reading the text).
std::string too_many_nodes(const std::string& where, bool expanded) {
  return where + ": invalid YAML: more than " + std::to_string(kMaxTreeNodes) + " nodes" +
         (expanded ? " once aliases are expanded" : "") +
         " (the limit for any input file); expected a smaller document" +
         (expanded ? " or fewer aliases" : "");
}

std::string too_deep(const std::string& where) {
  return where + ": invalid YAML: nested more than " + std::to_string(kMaxTreeDepth) + " levels deep";
}

// Builds the graph of the first document from parser events.
class GraphBuilder final : public YAML::EventHandler {
 public:
  explicit GraphBuilder(const Locate& locate) : locate_(locate) {}

  const std::vector<RawNode>& nodes() const { return nodes_; }
  bool empty() const { return nodes_.empty(); }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(RawNode::Kind::Null, mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const std::uint32_t i = add(RawNode::Kind::Alias, mark, YAML::NullAnchor);
    nodes_[i].target = anchors_.at(anchor);  // the parser has checked that the anchor exists
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    RawNode& node = nodes_[add(RawNode::Kind::Scalar, mark, anchor)];
    node.scalar = value;
    node.plain = tag == "?";  // yaml-cpp's tag of a plain scalar; "!" for a quoted one
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_.push_back(add(RawNode::Kind::Sequence, mark, anchor));
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open_.push_back(add(RawNode::Kind::Map, mark, anchor));
  }
  void OnMapEnd() override { open_.pop_back(); }

 private:
  std::uint32_t add(RawNode::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (nodes_.size() >= kMaxTreeNodes) throw InputError(too_many_nodes(locate_(mark), false));
    if (open_.size() > std::size_t{kMaxTreeDepth}) throw InputError(too_deep(locate_(mark)));
    const auto index = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back({.kind = kind, .mark = mark, .target = 0, .scalar = {}, .children = {}});
    if (!open_.empty()) nodes_[open_.back()].children.push_back(index);
    if (anchor != YAML::NullAnchor) {
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
      anchors_[anchor] = index;
    }
    return index;
  }

  const Locate& locate_;
  std::vector<RawNode> nodes_;         // nodes_[0] is the document's top-level node
  std::vector<std::uint32_t> open_;    // the collections being filled, outermost first
  std::vector<std::uint32_t> anchors_; // anchor id → node
};

// Sees the documents after the first (building nothing) and remembers where the second one starts.
class DocumentCounter final : public YAML::EventHandler {
 public:
  YAML::Mark first_mark = YAML::Mark::null_mark();

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override {
    note(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    note(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    note(m);
  }
  void OnMapEnd() override {}

 private:
  void note(const YAML::Mark& m) {
    if (!seen_) first_mark = m, seen_ = true;
  }
  bool seen_ = false;
};

// Copies the graph into a tree, expanding aliases, within the node budget.
class TreeCopier {
 public:
  TreeCopier(const std::vector<RawNode>& nodes, const Locate& locate) : nodes_(nodes), locate_(locate) {}

  TreeNode copy(std::uint32_t index, int depth) {
    const bool alias = nodes_[index].kind == RawNode::Kind::Alias;
    if (alias && expanding_ == nullptr) expanding_ = &nodes_[index];
    TreeNode out = copy_node(resolve(index), depth);
    if (alias && expanding_ == &nodes_[index]) expanding_ = nullptr;
    return out;
  }

 private:
  TreeNode copy_node(const RawNode& raw, int depth) {
    count(raw);
    TreeNode out;
    out.where = locate_(raw.mark);
    if (depth > kMaxTreeDepth) throw InputError(too_deep(out.where));
    switch (raw.kind) {
      case RawNode::Kind::Null:
      case RawNode::Kind::Alias:
        break;
      case RawNode::Kind::Scalar:
        out.kind = TreeNode::Kind::Scalar;
        out.scalar = raw.scalar;
        break;
      case RawNode::Kind::Sequence:
        out.kind = TreeNode::Kind::Sequence;
        out.items.reserve(raw.children.size());
        for (const std::uint32_t item : raw.children) out.items.push_back(copy(item, depth + 1));
        break;
      case RawNode::Kind::Map:
        copy_map(raw, depth, out);
        break;
    }
    return out;
  }

  // A mapping's entries in the order written. A merge key (`<<: *base` or `<<: [*a, *b]`, YAML 1.1's
  // merge type, which yaml-cpp's parser leaves to the reader) puts the entries of the mappings it
  // names where it stands, except those the mapping writes itself; of two merged mappings the
  // first written wins. A merged entry keeps the location of what it copies.
  void copy_map(const RawNode& raw, int depth, TreeNode& out) {
    out.kind = TreeNode::Kind::Map;
    out.entries.reserve(raw.children.size() / 2);
    // The merge key's value, where among the entries it stands, and where it is written (a quoted
    // '<<' is an entry like any other, never taken for it).
    std::optional<std::uint32_t> merge;
    std::size_t merge_at = 0;
    std::string merge_where;
    for (std::size_t i = 0; i + 1 < raw.children.size(); i += 2) {
      const RawNode& key = resolve(raw.children[i]);
      count(key);
      const std::string key_where = locate_(key.mark);
      if (key.kind != RawNode::Kind::Scalar)
        throw InputError(key_where + ": invalid YAML: a key must be plain text, not a list or mapping");
      if (is_merge_key(key)) {
        if (merge) throw InputError(key_where + ": invalid YAML: repeated key '<<'");
        merge = raw.children[i + 1];
        merge_at = out.entries.size();
        merge_where = key_where;
        continue;
      }
      if (out.find(key.scalar) != nullptr)
        throw InputError(key_where + ": invalid YAML: repeated key '" + key.scalar + "'");
      out.entries.push_back({key.scalar, key_where, copy(raw.children[i + 1], depth + 1)});
    }
    if (!merge) return;
    std::vector<TreeEntry> merged;
    for (const std::uint32_t source : merge_sources(*merge, merge_where)) {
      TreeNode from = copy(source, depth);  // its entries stand at this mapping's entries' depth
      for (TreeEntry& e : from.entries) {
        const auto named = [&e](const TreeEntry& x) { return x.key == e.key; };
        if (out.find(e.key) != nullptr || std::any_of(merged.begin(), merged.end(), named)) continue;
        merged.push_back(std::move(e));
      }
    }
    out.entries.insert(out.entries.begin() + static_cast<std::ptrdiff_t>(merge_at),
                       std::make_move_iterator(merged.begin()),
                       std::make_move_iterator(merged.end()));
  }

  static bool is_merge_key(const RawNode& key) { return key.plain && key.scalar == "<<"; }

  // The mappings a merge key's value names: one mapping, or a list of mappings; anything else is
  // refused where the merge key is.
  std::vector<std::uint32_t> merge_sources(std::uint32_t value, const std::string& where) const {
    const auto is_map = [this](std::uint32_t i) { return resolve(i).kind == RawNode::Kind::Map; };
    if (is_map(value)) return {value};
    const RawNode& list = resolve(value);
    bool all_maps = list.kind == RawNode::Kind::Sequence && !list.children.empty();
    for (const std::uint32_t item : list.children) all_maps = all_maps && is_map(item);
    if (!all_maps)
      throw InputError(where +
                       ": invalid YAML: a merge key '<<' takes a mapping or a list of mappings, such as "
                       "<<: *base or <<: [*a, *b]; expected one of those, or '<<' in quotes for a key "
                       "of that name");
    return list.children;
  }

  // The node an alias names (itself for other nodes).
  const RawNode& resolve(std::uint32_t index) const {
    const RawNode& raw = nodes_[index];
    return raw.kind == RawNode::Kind::Alias ? nodes_[raw.target] : raw;
  }
  // Past the budget, the error points at the outermost alias being expanded (or at the node).
  void count(const RawNode& raw) {
    if (++made_ > kMaxTreeNodes)
      throw InputError(too_many_nodes(locate_(expanding_ != nullptr ? expanding_->mark : raw.mark), true));
  }

  const std::vector<RawNode>& nodes_;
  const Locate& locate_;
  std::size_t made_ = 0;
  const RawNode* expanding_ = nullptr;  // the outermost alias whose copy is being made
};

// A read-only stream over text that stays alive while it is parsed (no copy).
class TextBuffer final : public std::streambuf {
 public:
  explicit TextBuffer(std::string_view text) {
    char* begin = const_cast<char*>(text.data());  // only read: the get area is never written
    setg(begin, begin, begin + text.size());
  }
};

// Text in UTF-16 or UTF-32 is otherwise refused as "a binary file?": name the encoding and the way
// out (wide_encoding). A UTF-8 byte-order mark passes; yaml-cpp skips it.
void check_encoding(std::string_view text, const Locate& locate) {
  const std::string_view encoding = wide_encoding(text);
  if (!encoding.empty())
    throw InputError(locate(YAML::Mark()) + ": invalid YAML: " + std::string(encoding) +
                     " is not supported; save the file as UTF-8");
}

// YAML text holds no C0 control characters but tab, line feed and carriage return, nor DEL (YAML
// 1.2, 5.1). yaml-cpp does not check, and a NUL can leave its scanner without progress: refuse them
// first, where they are.
void check_characters(std::string_view text, const Locate& locate) {
  YAML::Mark at;
  check_encoding(text, locate);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      char code[8];
      std::snprintf(code, sizeof code, "U+%04X", c);
      throw InputError(locate(at) + ": invalid YAML: control character " + code +
                       " (a binary file?); expected text");
    }
    ++at.pos;
    if (c == '\n') {
      ++at.line;
      at.column = 0;
    } else {
      ++at.column;
    }
  }
}

TreeNode parse_with(std::string_view text, const Locate& locate) {
  TextBuffer buffer(text);
  std::istream in(&buffer);
  check_characters(text, locate);
  GraphBuilder graph(locate);
  YAML::Mark second_document = YAML::Mark::null_mark();
  YAML::Mark previous = YAML::Mark::null_mark();
  int documents = 0;
  try {
    YAML::Parser parser(in);
    if (parser.HandleNextDocument(graph)) ++documents;
    while (documents > 0) {
      DocumentCounter rest;
      if (!parser.HandleNextDocument(rest)) break;
      // yaml-cpp 0.7 reads a ',' outside [ ] or { } as an empty document and leaves it unread, so
      // the next document starts at the same ',' again, forever (found by tests/fuzz). No document
      // starts with ',': refuse it where it is.
      const auto at = static_cast<std::size_t>(rest.first_mark.pos);
      if (!rest.first_mark.is_null() && at < text.size() && text[at] == ',')
        throw InputError(locate(rest.first_mark) +
                         ": invalid YAML: ',' outside a [ ] or { } list; expected a "
                         "value, or quotes around text that starts with ','");
      // Any other document that starts where the previous one did read nothing: the same loop.
      if (!rest.first_mark.is_null() && rest.first_mark.pos == previous.pos)
        throw InputError(locate(rest.first_mark) + ": invalid YAML: unexpected text; expected a value");
      previous = rest.first_mark;
      if (++documents == 2) second_document = rest.first_mark;
    }
  } catch (const YAML::Exception& e) {
    throw InputError(locate(e.mark) + ": invalid YAML: " + e.msg);
  }
  if (documents > 1)
    throw InputError(locate(second_document) + ": invalid YAML: expected one document, found " +
                     std::to_string(documents) + " (remove the extra '---')");
  if (graph.empty()) {
    TreeNode empty;
    empty.where = locate(YAML::Mark::null_mark());
    return empty;
  }
  return TreeCopier(graph.nodes(), locate).copy(0, 0);
}

}  // namespace

TreeNode parse_yaml_tree(std::string_view text, const std::string& source) {
  return parse_with(text, [&source](const YAML::Mark& m) {
    if (m.is_null()) return source + ":1:1";
    return source + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  });
}

TreeNode parse_yaml_tree_at(std::string_view text, const std::string& where) {
  return parse_with(text, [&where](const YAML::Mark&) { return where; });
}

}  // namespace hybridsim::yaml

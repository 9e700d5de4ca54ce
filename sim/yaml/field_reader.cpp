#include "sim/yaml/field_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <span>
#include <stdexcept>

#include "sim/decimal.h"
#include "sim/error.h"

namespace hybridsim::yaml {
namespace {

std::string join_names(const std::vector<const FieldSpec*>& specs) {
  std::string out;
  for (const auto* s : specs) out += (out.empty() ? "" : ", ") + std::string(leaf_name(s->path));
  return out;
}

std::string child_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
}

// What was wrong with a unit string: the text, and the parser's reason unless it is only "bad".
std::string unit_problem(const std::string& text, const InputError& e) {
  const std::string reason = e.what();
  if (reason.starts_with("bad ")) return "got \"" + text + "\"";
  return "got \"" + text + "\" (" + reason + ")";
}

// Gives every node of a tree the location `where`.
void relocate(TreeNode& node, const std::string& where) {
  node.where = where;
  for (auto& item : node.items) relocate(item, where);
  for (auto& e : node.entries) {
    e.key_where = where;
    relocate(e.value, where);
  }
}

bool within(double v, const FieldSpec& spec) {
  if (spec.min_exclusive ? !(v > spec.min) : !(v >= spec.min)) return false;
  return spec.max == 0 || v <= spec.max;
}

// An integer against its bounds exactly: as a double, 10^18 + 1 rounds to 10^18 and passed
// simulation.max_events' bound of 10^18 (--max-events refused it).
bool within_integer(std::int64_t v, const FieldSpec& spec) {
  if (!within(static_cast<double>(v), spec)) return false;
  return spec.max == 0 || spec.max >= 0x1p63 || v <= static_cast<std::int64_t>(spec.max);
}

// 'got "8"', or with a leading "+", which std::from_chars does not read, why ("+8" is within bounds).
std::string got_number(const std::string& text, std::string_view kind) {
  const auto plus = sim::detail::leading_plus_reason(text, kind);
  return "got \"" + text + "\"" + (plus ? " (" + *plus + ")" : "");
}

}  // namespace

template <class Parse, class Magnitude>
auto FieldReader::parse_unit(const TreeNode& node, std::string_view path, Parse parse,
                             Magnitude magnitude) const {
  const FieldSpec& spec = field(path);
  const std::string text = scalar(node, path);
  decltype(parse(text)) v;
  try {
    v = parse(text);
  } catch (const InputError& e) {
    fail_at(node.where, path, unit_problem(text, e), schema_.expected_text(spec));
  } catch (const std::overflow_error&) {
    fail_at(node.where, path, "got \"" + text + "\", too large", schema_.expected_text(spec));
  }
  if (!within(magnitude(v), spec))
    fail_at(node.where, path, "got \"" + text + "\"", schema_.expected_text(spec));
  return v;
}

void fail_at(const std::string& where, std::string_view path, const std::string& what,
             const std::string& expected) {
  std::string message = where + ": ";
  if (!path.empty()) message += std::string(path) + ": ";
  message += what;
  if (!expected.empty()) message += "; expected " + expected;
  throw InputError(message);
}

std::string describe_node(const TreeNode& node) {
  switch (node.kind) {
    case TreeNode::Kind::Null: return "nothing";
    case TreeNode::Kind::Scalar: return "\"" + node.scalar + "\"";
    case TreeNode::Kind::Sequence: return "a list";
    case TreeNode::Kind::Map: return "a mapping";
  }
  return {};
}

namespace {
// " (did you mean ...?)", or where the key is a field, a colon and a value with no space between
// (`{dp:1}`, which YAML reads as the one key "dp:1" with no value), how to write it: `dp: 1`.
std::string unspaced_colon(std::string_view key, std::span<const std::string> names) {
  const auto colon = key.find(':');
  if (colon != std::string_view::npos && colon + 1 < key.size() &&
      std::find(names.begin(), names.end(), key.substr(0, colon)) != names.end())
    return " (YAML reads '" + std::string(key) + "' as one key: write '" + std::string(key.substr(0, colon)) +
           ": " + std::string(key.substr(colon + 1)) + "', with a space after the colon)";
  return did_you_mean(key, names);
}
}  // namespace

void FieldReader::check_section(const TreeNode& node, std::string_view path) {
  const auto children = schema_.children_of(spec_path_of(path));
  if (!node.is_map()) {
    const std::string expected =
        path.empty() ? "a mapping with fields " + join_names(children) : schema_.expected_text(field(path));
    fail_at(node.where, path, "got " + describe_node(node), expected);
  }
  note(path, node);
  for (const auto& e : node.entries) {
    const auto known = std::find_if(children.begin(), children.end(),
                                    [&](const FieldSpec* c) { return leaf_name(c->path) == e.key; });
    if (known != children.end()) continue;
    std::vector<std::string> names;
    for (const auto* c : children) names.emplace_back(leaf_name(c->path));
    fail_at(e.key_where, child_path(path, e.key), "unknown field" + unspaced_colon(e.key, names),
            "one of: " + join_names(children));
  }
  for (const auto* c : children) {
    if (!c->required) continue;
    const TreeNode* v = node.find(leaf_name(c->path));
    if (v == nullptr || v->is_null())
      fail_at(v != nullptr ? v->where : node.where, child_path(path, leaf_name(c->path)),
              "missing required field", schema_.expected_text(*c));
  }
}

const TreeNode& FieldReader::document(const TreeNode& root) {
  const TreeNode* doc = &root;
  if (root.is_null()) {
    TreeNode empty;
    empty.kind = TreeNode::Kind::Map;
    empty.where = root.where;
    doc = &defaults_.emplace_back(std::move(empty));
  }
  check_section(*doc, "");
  return *doc;
}

const TreeNode* FieldReader::section(const TreeNode* parent, std::string_view path) {
  const FieldSpec& spec = field(path);
  const TreeNode* node = parent != nullptr ? parent->find(leaf_name(path)) : nullptr;
  if (node == nullptr || node->is_null()) {
    if (spec.required)
      fail_at(parent != nullptr ? parent->where : source_ + ":1:1", path, "missing required field",
              schema_.expected_text(spec));
    return nullptr;
  }
  check_section(*node, path);
  return node;
}

const TreeNode* FieldReader::written(const TreeNode* map, std::string_view path) {
  if (map == nullptr) return nullptr;
  const TreeNode* node = map->find(leaf_name(path));
  if (node == nullptr || node->is_null()) return nullptr;
  note(path, *node);
  return node;
}

const TreeNode* FieldReader::value(const TreeNode* map, std::string_view path) {
  if (const TreeNode* w = written(map, path)) return w;
  const FieldSpec& spec = field(path);
  auto parsed = parsed_defaults_.find(&spec);
  if (parsed == parsed_defaults_.end()) {  // parsed once per field: profiles ask for thousands
    const std::string text = default_text_of(spec);
    parsed = parsed_defaults_
                 .emplace(&spec, text.empty() ? std::nullopt : std::optional(parse_yaml_tree_at(text, {})))
                 .first;
  }
  if (!parsed->second) return nullptr;
  TreeNode& copy = defaults_.emplace_back(*parsed->second);
  relocate(copy, map != nullptr ? map->where : source_);
  return &copy;
}

const TreeNode& FieldReader::required(const TreeNode& map, std::string_view path) {
  if (const TreeNode* w = written(&map, path)) return *w;
  const TreeNode* v = map.find(leaf_name(path));
  fail_at(v != nullptr ? v->where : map.where, path, "missing required field", expected(path));
}

std::string FieldReader::word(const TreeNode& node, std::string_view path) const {
  if (!node.is_scalar()) return {};
  for (const auto& w : words_of(field(path)))
    if (node.scalar == w) return w;
  return {};
}

std::string FieldReader::scalar(const TreeNode& node, std::string_view path) const {
  if (!node.is_scalar()) fail_at(node.where, path, "got " + describe_node(node), expected(path));
  return node.scalar;
}

std::string FieldReader::to_text(const TreeNode& node, std::string_view path) const {
  std::string text = scalar(node, path);
  if (text.empty()) fail_at(node.where, path, "got an empty text", expected(path));
  return text;
}

std::int64_t FieldReader::to_integer(const TreeNode& node, std::string_view path) const {
  const std::string text = scalar(node, path);
  const FieldSpec& spec = field(path);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !within_integer(v, spec))
    fail_at(node.where, path, got_number(text, "whole number"), schema_.expected_text(spec));
  return v;
}

double FieldReader::to_number(const TreeNode& node, std::string_view path) const {
  const std::string text = scalar(node, path);
  const FieldSpec& spec = field(path);
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) ||
      !within(v, spec))
    fail_at(node.where, path, got_number(text, "number"), schema_.expected_text(spec));
  return v;
}

void FieldReader::fail_unknown(const TreeNode& node, std::string_view path,
                               std::span<const std::string> names) const {
  fail_at(node.where, path, "unknown value \"" + node.scalar + "\"" + did_you_mean(node.scalar, names),
          expected(path));
}

std::string FieldReader::to_choice(const TreeNode& node, std::string_view path) const {
  const std::string text = scalar(node, path);
  const auto choices = choices_of(field(path));
  if (std::find(choices.begin(), choices.end(), text) != choices.end()) return text;
  fail_unknown(node, path, choices);
}

sim::Bytes FieldReader::to_size(const TreeNode& node, std::string_view path) const {
  return parse_unit(node, path, sim::parse_bytes,
                    [](sim::Bytes b) { return static_cast<double>(b.count()); });
}

sim::Bandwidth FieldReader::to_rate(const TreeNode& node, std::string_view path) const {
  return parse_unit(node, path, sim::parse_bandwidth,
                    [](sim::Bandwidth b) { return static_cast<double>(b.bytes_per_second()); });
}

sim::Time FieldReader::to_duration(const TreeNode& node, std::string_view path) const {
  return parse_unit(node, path, sim::parse_time, [](sim::Time t) { return static_cast<double>(t.ps()); });
}

const TreeNode& FieldReader::to_list(const TreeNode& node, std::string_view path,
                                     std::size_t min_items) const {
  if (!node.is_sequence()) fail_at(node.where, path, "got " + describe_node(node), expected(path));
  if (node.items.size() < min_items)
    fail_at(node.where, path,
            "got " + std::to_string(node.items.size()) + " item" + (node.items.size() == 1 ? "" : "s"),
            "at least " + std::to_string(min_items) + ": " + expected(path));
  return node;
}

const TreeNode* FieldReader::scalar_value(const TreeNode* map, std::string_view path) {
  const TreeNode* node = value(map, path);
  if (node == nullptr || !word(*node, path).empty()) return nullptr;
  return node;
}

void FieldReader::no_value(std::string_view path) const {
  throw InternalError(std::string(schema_.name()) + " field " + std::string(path) + " has no value");
}

std::optional<std::int64_t> FieldReader::integer_opt(const TreeNode* map, std::string_view path) {
  const TreeNode* n = scalar_value(map, path);
  if (n == nullptr) return std::nullopt;
  return to_integer(*n, path);
}

std::optional<double> FieldReader::number_opt(const TreeNode* map, std::string_view path) {
  const TreeNode* n = scalar_value(map, path);
  if (n == nullptr) return std::nullopt;
  return to_number(*n, path);
}

std::optional<std::string> FieldReader::text_opt(const TreeNode* map, std::string_view path) {
  const TreeNode* n = scalar_value(map, path);
  if (n == nullptr) return std::nullopt;
  return to_text(*n, path);
}

std::optional<std::string> FieldReader::choice_opt(const TreeNode* map, std::string_view path) {
  const TreeNode* n = scalar_value(map, path);
  if (n == nullptr) return std::nullopt;
  return to_choice(*n, path);
}

std::optional<sim::Bytes> FieldReader::size_opt(const TreeNode* map, std::string_view path) {
  const TreeNode* n = scalar_value(map, path);
  if (n == nullptr) return std::nullopt;
  return to_size(*n, path);
}

std::optional<sim::Bandwidth> FieldReader::rate_opt(const TreeNode* map, std::string_view path) {
  const TreeNode* n = scalar_value(map, path);
  if (n == nullptr) return std::nullopt;
  return to_rate(*n, path);
}

std::optional<sim::Time> FieldReader::duration_opt(const TreeNode* map, std::string_view path) {
  const TreeNode* n = scalar_value(map, path);
  if (n == nullptr) return std::nullopt;
  return to_duration(*n, path);
}

std::int64_t FieldReader::integer(const TreeNode* map, std::string_view path) {
  const auto v = integer_opt(map, path);
  if (!v) no_value(path);
  return *v;
}

double FieldReader::number(const TreeNode* map, std::string_view path) {
  const auto v = number_opt(map, path);
  if (!v) no_value(path);
  return *v;
}

bool FieldReader::boolean(const TreeNode* map, std::string_view path) {
  const TreeNode* n = value(map, path);
  if (n == nullptr) no_value(path);
  const std::string text = scalar(*n, path);
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  fail_at(n->where, path, "got \"" + text + "\"", expected(path));
}

std::string FieldReader::text(const TreeNode* map, std::string_view path) {
  auto v = text_opt(map, path);
  if (!v) no_value(path);
  return std::move(*v);
}

std::string FieldReader::choice(const TreeNode* map, std::string_view path) {
  auto v = choice_opt(map, path);
  if (!v) no_value(path);
  return std::move(*v);
}

sim::Bytes FieldReader::size(const TreeNode* map, std::string_view path) {
  const auto v = size_opt(map, path);
  if (!v) no_value(path);
  return *v;
}

sim::Bandwidth FieldReader::rate(const TreeNode* map, std::string_view path) {
  const auto v = rate_opt(map, path);
  if (!v) no_value(path);
  return *v;
}

sim::Time FieldReader::duration(const TreeNode* map, std::string_view path) {
  const auto v = duration_opt(map, path);
  if (!v) no_value(path);
  return *v;
}

}  // namespace hybridsim::yaml

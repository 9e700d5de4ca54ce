#include "sim/yaml/schema.h"

#include "sim/time.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/error.h"

namespace hybridsim::yaml {

std::string default_text_of(const FieldSpec& spec) {
  return spec.default_fn != nullptr ? spec.default_fn() : std::string(spec.default_text);
}
namespace {

std::vector<std::string> split_bars(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto bar = text.find('|');
    out.emplace_back(text.substr(0, bar));
    if (bar == std::string_view::npos) break;
    text.remove_prefix(bar + 1);
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e18) return std::to_string(static_cast<long long>(v));
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// "from 1 to 4096", ">= 1", "> 0".
std::string bounds_text(const FieldSpec& s) {
  if (s.min_exclusive) return "> " + number_text(s.min) + (s.max != 0 ? " and <= " + number_text(s.max) : "");
  if (s.max != 0) return "from " + number_text(s.min) + " to " + number_text(s.max);
  return ">= " + number_text(s.min);
}

// A size's or rate's bounds after its example, in bytes (or per second): ", > 0", ", >= 4 B" (a
// collective's size: the refusal said only "a size such as ..." and not why 2 B is too small).
std::string unit_bounds_text(const FieldSpec& s, const char* unit) {
  if (s.min_exclusive) return ", > " + number_text(s.min) + (s.min != 0 ? unit : "");
  if (s.min != 0) return ", >= " + number_text(s.min) + unit;
  return "";
}

// The short type column of the reference: "integer 1–4096", "bandwidth > 0".
std::string short_type(const FieldSpec& s) {
  if (!s.type_doc.empty()) return std::string(s.type_doc);
  std::string t;
  switch (s.kind) {
    case FieldKind::Section: t = "mapping"; break;
    case FieldKind::Integer:
      t = "integer " +
          (s.max != 0 ? number_text(s.min) + "–" + number_text(s.max) : "≥ " + number_text(s.min));
      break;
    case FieldKind::Number:
      t = "number " + std::string(s.min_exclusive ? "> " : "≥ ") + number_text(s.min) +
          (s.max != 0 ? ", ≤ " + number_text(s.max) : "");
      break;
    case FieldKind::Boolean: t = "true, false"; break;
    case FieldKind::Choice: t = join(choices_of(s), ", "); break;
    case FieldKind::Size: t = std::string("size") + (s.min_exclusive ? " > 0" : ""); break;
    case FieldKind::Rate: t = std::string("bandwidth") + (s.min_exclusive ? " > 0" : ""); break;
    case FieldKind::Duration:
      t = "time ≥ " + sim::format_time(sim::Time::ps(static_cast<std::int64_t>(s.min))) +
          (s.max != 0 ? ", ≤ " + sim::format_time(sim::Time::ps(static_cast<std::int64_t>(s.max))) : "");
      break;
    case FieldKind::Path: t = "path"; break;
    case FieldKind::Text: t = "text"; break;
    case FieldKind::List: t = "list"; break;
    case FieldKind::NameOrSection: t = "name or mapping"; break;
    case FieldKind::Any: t = "any"; break;
  }
  const auto words = words_of(s);
  return words.empty() ? t : join(words, ", ") + " or " + t;
}

std::string default_column(const FieldSpec& s) {
  if (s.required) return "required";
  if (!s.default_doc.empty()) return std::string(s.default_doc);
  if (const std::string d = default_text_of(s); !d.empty()) return "`" + d + "`";
  return "—";
}

std::string escape_cell(std::string text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// Greedy word wrap at `width` columns, each line prefixed by `indent`.
std::string wrap(std::string_view text, std::string_view indent, std::size_t width) {
  std::string out, line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto space = text.find(' ', pos);
    const std::string_view word = text.substr(pos, space == std::string_view::npos ? space : space - pos);
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
      out += std::string(indent) + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
    if (space == std::string_view::npos) break;
    pos = space + 1;
  }
  if (!line.empty()) out += std::string(indent) + line + "\n";
  return out;
}

}  // namespace

std::string spec_path_of(std::string_view path) {
  std::string out;
  bool in_index = false;
  for (const char c : path) {
    if (c == '[') in_index = true, out += c;
    else if (c == ']') in_index = false, out += c;
    else if (!in_index) out += c;
  }
  return out;
}

std::string_view leaf_name(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

const FieldSpec* Schema::find(std::string_view path) const {
  const std::string spec = spec_path_of(path);
  for (const auto& f : fields_)
    if (f.path == spec) return &f;
  return nullptr;
}

const FieldSpec& Schema::field(std::string_view path) const {
  if (const FieldSpec* f = find(path)) return *f;
  throw InternalError(std::string(name_) + " field '" + std::string(path) +
                      "' is not declared in the schema");
}

std::vector<const FieldSpec*> Schema::children_of(std::string_view path) const {
  const std::string prefix = path.empty() ? "" : std::string(path) + ".";
  std::vector<const FieldSpec*> out;
  for (const auto& f : fields_) {
    if (f.path.size() <= prefix.size() || f.path.substr(0, prefix.size()) != prefix) continue;
    const std::string_view rest = f.path.substr(prefix.size());
    if (rest.find_first_of(".[") == std::string_view::npos) out.push_back(&f);
  }
  return out;
}

std::string Schema::expected_section_text(std::string_view path) const {
  std::vector<std::string> names;
  for (const auto* c : children_of(spec_path_of(path))) names.emplace_back(leaf_name(c->path));
  return "a mapping with fields " + join(names, ", ");
}

std::vector<std::string> choices_of(const FieldSpec& spec) {
  if (spec.dynamic_choices != nullptr) return spec.dynamic_choices();
  return split_bars(spec.choices);
}

std::vector<std::string> words_of(const FieldSpec& spec) { return split_bars(spec.words); }

std::string Schema::value_text(const FieldSpec& s) const {
  switch (s.kind) {
    case FieldKind::Section: return expected_section_text(s.path);
    case FieldKind::Integer: return "a whole number " + bounds_text(s);
    case FieldKind::Number: return "a number " + bounds_text(s);
    case FieldKind::Boolean: return "true or false";
    case FieldKind::Choice: return "one of: " + join(choices_of(s), ", ");
    case FieldKind::Size:
      return std::string("a size such as \"512 KiB\" or \"25 MB\"") + unit_bounds_text(s, " B");
    case FieldKind::Rate:
      return std::string("a bandwidth such as \"25 GB/s\" or \"100 Gb/s\"") + unit_bounds_text(s, " B/s");
    case FieldKind::Duration:
      if (s.max != 0)
        return "a time such as \"700 ns\", from " +
               sim::format_time(sim::Time::ps(static_cast<std::int64_t>(s.min))) + " to " +
               sim::format_time(sim::Time::ps(static_cast<std::int64_t>(s.max)));
      return "a time such as \"700 ns\", >= 0";
    case FieldKind::Path: return "a file path";
    case FieldKind::Text: return "a single value (text)";
    case FieldKind::List: return "a list";
    case FieldKind::NameOrSection: return "a name or a mapping";
    case FieldKind::Any: return "a value";
  }
  return {};
}

std::string Schema::expected_text(const FieldSpec& spec) const {
  if (!spec.type_doc.empty()) return std::string(spec.type_doc);  // complete, keywords included
  const auto words = words_of(spec);
  return words.empty() ? value_text(spec) : join(words, ", ") + " or " + value_text(spec);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view text, std::span<const std::string> candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, text.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(text, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  return best;
}

std::optional<std::string> closest_path(std::string_view path, std::span<const std::string> candidates) {
  const auto parent_of = [](std::string_view p) {
    const auto dot = p.rfind('.');
    return dot == std::string_view::npos ? std::string_view{} : p.substr(0, dot);
  };
  auto spelled = closest_match(path, candidates);
  if (spelled && path.starts_with(*spelled + ".")) spelled.reset();
  // One slip of the keyboard is surer than a field of the same name elsewhere; two are not ("seed" is
  // two from "sweep", and is "variability.seed").
  if (spelled && edit_distance(path, *spelled) <= 1) return spelled;
  const std::string_view leaf = leaf_name(path), parent = parent_of(path);
  // Of the fields of that name, the one sharing the longest start with the path: "cluster.bandwidth"
  // → a cluster's link bandwidth, not a sweep's.
  const auto shared_start = [&](std::string_view c) {
    std::size_t n = 0;
    while (n < c.size() && n < path.size() && c[n] == path[n]) ++n;
    return n;
  };
  const std::string* same_leaf = nullptr;
  for (const auto& c : candidates)
    if (leaf_name(c) == leaf && (same_leaf == nullptr || shared_start(c) > shared_start(*same_leaf)))
      same_leaf = &c;
  if (same_leaf != nullptr) return *same_leaf;
  if (spelled) return spelled;
  for (const auto& c : candidates)
    if (parent_of(c) == parent && leaf_name(c).starts_with(leaf)) return c;
  return std::nullopt;
}

std::string did_you_mean(std::string_view text, std::span<const std::string> candidates) {
  const auto guess = closest_match(text, candidates);
  return guess ? " (did you mean '" + *guess + "'?)" : std::string();
}

std::string Schema::reference_markdown() const {
  std::string out = "| field | type | default | meaning |\n|---|---|---|---|\n";
  for (const auto& f : fields_)
    out += "| `" + std::string(f.path) + "` | " + escape_cell(short_type(f)) + " | " +
           escape_cell(default_column(f)) + " | " + escape_cell(std::string(f.help)) + " |\n";
  return out;
}

std::string Schema::reference_text() const {
  std::string out;
  for (const auto& f : fields_) {
    std::string d = default_column(f);
    d.erase(std::remove(d.begin(), d.end(), '`'), d.end());
    out += std::string(f.path) + "  (" + short_type(f) +
           (f.required ? "; required"
            : d == "—" ? ""
                       : "; default: " + d) +
           ")\n";
    out += wrap(f.help, "    ", 100);
  }
  return out;
}

}  // namespace hybridsim::yaml

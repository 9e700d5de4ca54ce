// The lengths of the function bodies of a C++ source text, for the house rule "no function over 80
// lines" (tests/unit/house_rules_length_test.cpp). A text scan, not a parser: comments, string and
// character literals (raw strings too) and preprocessor lines are blanked first; then a `{` opens a
// function body when every scope around it is a namespace, class, struct or union (so a lambda or a
// block inside a function counts as part of it) and the text since the last `;`, `{` or `}` holds a
// `)` and does not end in `=` (an initialiser) nor name a class, struct, union or enum. A braced
// member initialiser of a constructor (`) : a_{0} {`) is not a body; an access label is dropped from
// the head. Not handled (none in the tree): macros that open or close braces, K&R-style oddities.
#pragma once
#include <algorithm>
#include <cctype>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::test {

struct FunctionBody {
  int first_line = 0;  // the line of its `{`
  int lines = 0;       // from that line to its `}`, both counted
  std::string head;    // what stands before the `{` (white space folded), for messages
};

// `text` with comments, literals and preprocessor lines replaced by blanks (newlines kept).
inline std::string blank_non_code(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool line_start = true;  // only blanks since the last newline: a `#` here starts a directive
  std::size_t i = 0;
  const auto blank_to = [&](std::size_t end) {
    for (end = std::min(end, text.size()); i < end; ++i) out += text[i] == '\n' ? '\n' : ' ';
  };
  const auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  // u8R"(...)", uR, UR, LR: the encoding prefix of a raw string, standing alone before its R.
  const auto raw_prefix = [&](std::string_view before) {
    for (std::string_view p : {"u8", "u", "U", "L"})
      if (before.ends_with(p) &&
          (before.size() == p.size() || !is_ident(before[before.size() - p.size() - 1])))
        return true;
    return false;
  };
  while (i < text.size()) {
    const char c = text[i];
    const std::size_t from = i;
    if (line_start && c == '#') {
      std::size_t end = i;  // a directive runs to a newline that no backslash escapes
      while (end < text.size() && !(text[end] == '\n' && text[end - 1] != '\\')) ++end;
      blank_to(end);
    } else if (text.substr(i, 2) == "//") {
      blank_to(text.find('\n', i));
    } else if (text.substr(i, 2) == "/*") {
      const std::size_t end = text.find("*/", i + 2);
      blank_to(end == std::string_view::npos ? end : end + 2);
    } else if (c == 'R' && text.substr(i + 1, 1) == "\"" &&
               (i == 0 || !is_ident(text[i - 1]) || raw_prefix(text.substr(0, i)))) {
      const std::size_t open = text.find('(', i);
      const std::string close = ")" + std::string(text.substr(i + 2, open - i - 2)) + "\"";
      const std::size_t end = text.find(close, open);
      blank_to(end == std::string_view::npos ? end : end + close.size());
    } else if (c == '"' ||
               (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(text[i - 1])) != 0))) {
      std::size_t end = i + 1;  // (a quote after a digit is a separator, 1'000, not a literal)
      while (end < text.size() && text[end] != c) end += text[end] == '\\' ? 2 : 1;
      blank_to(end + 1);
    } else {
      out += c;
      ++i;
    }
    for (std::size_t k = from; k < i; ++k)
      line_start = text[k] == '\n' || (line_start && (text[k] == ' ' || text[k] == '\t'));
  }
  return out;
}

// `text` with each run of white space made one blank, and none at either end.
inline std::string fold_space(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!space)
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

inline std::vector<FunctionBody> function_bodies(std::string_view source) {
  static const std::regex scope_head(
      R"(^(template\s*<.*>\s*)?(inline\s+)?(namespace|extern)\b|\b(class|struct|union|enum)\b[^()]*$)");
  // A constructor's member initialised with braces, `) : a_{0}, b_{1} {`: not its body.
  static const std::regex member_brace(
      R"(\)\s*((const|noexcept|override)\s*)*:(?!:)([^{};]|\{[^{}]*\})*[A-Za-z0-9_>]\s*$)");
  static const std::regex access_label(R"(^(public|private|protected)\s*:\s*)");
  static const std::regex initialiser(R"(=\s*$)");
  const std::string code = blank_non_code(source);
  enum class Kind { Scope, Function, Block, MemberInit };
  struct Open {
    Kind kind;
    int line;
    std::string head;
  };
  std::vector<Open> open;
  std::vector<FunctionBody> out;
  std::size_t last = 0;
  int line = 1;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '\n') {
      ++line;
    } else if (c == '{') {
      std::string head =
          std::regex_replace(fold_space(std::string_view(code).substr(last, i - last)), access_label, "");
      bool at_scope = true;
      for (const Open& o : open) at_scope = at_scope && o.kind == Kind::Scope;
      Kind kind = Kind::Block;
      if (at_scope) {
        if (std::regex_search(head, member_brace))
          kind = Kind::MemberInit;
        else if (std::regex_search(head, scope_head))
          kind = Kind::Scope;
        else if (head.find(')') != std::string::npos && !std::regex_search(head, initialiser))
          kind = Kind::Function;
      }
      open.push_back({kind, line, std::move(head)});
      if (kind != Kind::MemberInit) last = i + 1;  // the body's head still starts at the signature
    } else if (c == '}') {
      const bool member_init = !open.empty() && open.back().kind == Kind::MemberInit;
      if (!open.empty()) {
        if (open.back().kind == Kind::Function)
          out.push_back({open.back().line, line - open.back().line + 1, open.back().head});
        open.pop_back();
      }
      if (!member_init) last = i + 1;
    } else if (c == ';') {
      last = i + 1;
    }
  }
  return out;
}

}  // namespace hybridsim::test

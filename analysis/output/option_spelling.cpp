#include "analysis/output/option_spelling.h"

#include <algorithm>

namespace hybridsim::analysis {

namespace {

// The Python module's keyword of a command-line option: its name with underscores, every one
// (analysis/python/hybridsim/__init__.py). collective()'s `reduction=` was the one exception, beside
// `--reduction-bandwidth` and the YAML's communication.reduction_bandwidth.
std::string python_keyword(std::string_view option) {
  std::string keyword(option);
  std::replace(keyword.begin(), keyword.end(), '-', '_');
  return keyword;
}

}  // namespace

std::string python_repr(std::string_view text) {
  const bool single = text.find('\'') != std::string_view::npos && text.find('"') == std::string_view::npos;
  const char quote = single ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : text) {
    if (c == quote || c == '\\') out += '\\';
    out += c;
  }
  return out + quote;
}

std::string OptionSpelling::name(std::string_view option) const {
  return is_python() ? python_keyword(option) : "--" + std::string(option);
}

std::string OptionSpelling::quoted(std::string_view option, std::string_view text) const {
  return is_python() ? name(option) + "=" + python_repr(text)
                     : name(option) + " \"" + std::string(text) + "\"";
}

std::string OptionSpelling::said(std::string_view option, std::string_view text) const {
  return is_python() ? name(option) + "=" + python_repr(text) : name(option) + " " + std::string(text);
}

std::string OptionSpelling::said_number(std::string_view option, std::string_view number) const {
  return name(option) + (is_python() ? "=" : " ") + std::string(number);
}

std::string OptionSpelling::takes(std::string_view option, std::string_view placeholder) const {
  return name(option) + (is_python() ? "=" : " ") + std::string(placeholder);
}

std::string OptionSpelling::switched_off(std::string_view option) const {
  return is_python() ? name(option) + "=False" : "--no-" + std::string(option);
}

std::string OptionSpelling::switched_on(std::string_view option) const {
  return is_python() ? name(option) + "=True" : name(option);
}

}  // namespace hybridsim::analysis

#include "sim/yaml/encoding.h"

namespace hybridsim::yaml {

std::string_view wide_encoding(std::string_view text) {
  const auto starts = [text](std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; };
  using namespace std::string_view_literals;
  if (starts("\xFF\xFE\0\0"sv) || starts("\0\0\xFE\xFF"sv)) return "UTF-32";
  if (starts("\xFF\xFE"sv) || starts("\xFE\xFF"sv)) return "UTF-16";
  if (text.size() >= 2 && (text[0] == '\0') != (text[1] == '\0')) return "UTF-16";
  return {};
}

}  // namespace hybridsim::yaml

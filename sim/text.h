// Small text helpers every reader shares: trimming white space, lower case, whole numbers. They
// work on std::string_view and never allocate more than their result.
//   trim("  2 ms ") == "2 ms";   lowercase("Fat-Tree") == "fat-tree";
//   parse_whole<int>("42") == 42;  parse_whole<int>("4x") == std::nullopt
//   choice_list({"a", "b", "c"}) == "a, b or c";  utf8_prefix("\xc3\xa9t\xc3\xa9", 2) == "\xc3\xa9"
#pragma once
#include <charconv>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace hybridsim::sim {

// Without leading and trailing white space (spaces, tabs, newlines, carriage returns).
std::string_view trim(std::string_view text);
// ASCII letters lowered; other bytes (UTF-8 too) as they are.
std::string lowercase(std::string_view text);
// At most `max` bytes of the text, cut before a UTF-8 continuation byte (whole characters only).
std::string_view utf8_prefix(std::string_view text, std::size_t max);
// The items as an error message lists choices: "a", "a or b", "a, b or c"; empty for none.
std::string choice_list(std::span<const std::string_view> items);

// The whole text as a number in T's range (digits, an optional leading '-'); nullopt otherwise,
// including on overflow and on leading or trailing characters.
template <class T>
std::optional<T> parse_whole(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace hybridsim::sim

// Aligned text for terminal tables: widths count display columns, so multi-byte UTF-8 characters
// (→, ×, µ) count once. Every table the CLI prints pads its cells with these.
//   pad_columns("GPU0→GPU3", 12) == "GPU0→GPU3   "     // 9 columns + 3 spaces
//   right_aligned("12.5 µs", 9) == "  12.5 µs"          // 7 columns after 2 spaces
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace hybridsim::analysis {

// Display columns of UTF-8 text: one per character (continuation bytes do not count).
inline std::size_t display_columns(std::string_view text) {
  std::size_t columns = 0;
  for (const unsigned char c : text) columns += (c & 0xC0) != 0x80;
  return columns;
}

// The text followed by spaces up to `width` columns (unchanged when already as wide).
inline std::string pad_columns(std::string_view text, std::size_t width) {
  std::string out(text);
  const std::size_t columns = display_columns(text);
  if (columns < width) out.append(width - columns, ' ');
  return out;
}

// Spaces up to `width` columns, then the text (a right-aligned cell); unchanged when already as wide.
inline std::string right_aligned(std::string_view text, std::size_t width) {
  const std::size_t columns = display_columns(text);
  return std::string(columns < width ? width - columns : 0, ' ') + std::string(text);
}

}  // namespace hybridsim::analysis

// Aligned text for terminal tables: widths count display columns, so multi-byte UTF-8 characters
// (→, ×, µ) count once. Every table the CLI prints pads its cells with these.
//   pad_columns("GPU0→GPU3", 12) == "GPU0→GPU3   "     // 9 columns + 3 spaces
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

}  // namespace hybridsim::analysis

// Reading an input file — a scenario, a custom topology, a study, a profile — in one go, within a
// size limit, so that a wrong path fails at once with the reason instead of reading a device or a
// directory: every error reads `cannot open <what> "<path>": <reason>`.
//   std::string text = read_input_file("s.yaml", "scenario file");
//   read_input_file("/dev/zero", "profile file")  // InputError: ...: not a regular file (a character device)
#pragma once
#include <cstdint>
#include "sim/limits.h"
#include <string>
#include <string_view>

namespace hybridsim::yaml {

// The largest input file read: 16 MiB, 120 times the largest shipped one (the gnmt profile,
// 136 KB); a YAML document that size would in any case hold more than kMaxTreeNodes nodes.
inline constexpr std::uintmax_t kMaxInputFileBytes = sim::limits::kInputFile.value;

// The whole text of a regular file, or of a FIFO (a pipe, `<(cat s.yaml)`: read once, up to the
// limit). A directory, a device, a socket, a missing or unreadable file, or more than
// kMaxInputFileBytes bytes is an InputError naming `what` ("scenario file") and the path.
std::string read_input_file(const std::string& path, std::string_view what);

// For a reader that streams a file too large to hold (a Kineto trace of hundreds of MB): the same
// refusals as read_input_file but no size limit, so a device or a directory fails at once instead
// of reading forever or failing mid-parse.
void check_streamed_input_file(const std::string& path, std::string_view what);

}  // namespace hybridsim::yaml

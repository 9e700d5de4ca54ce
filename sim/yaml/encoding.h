// Text files in a wide encoding: every reader of text (YAML, the Kineto importer's JSON, PipeDream
// graphs) refuses UTF-16 and UTF-32 with "<encoding> is not supported; save the file as UTF-8"
// rather than a parse error about their bytes (issue 31). A UTF-8 byte-order mark passes.
//   wide_encoding("\xFF\xFE{\0")  // "UTF-16"
#pragma once
#include <string_view>

namespace hybridsim::yaml {

// "UTF-16" or "UTF-32" when a file's first bytes are in one (a byte-order mark, or a NUL among the
// first two bytes: UTF-8 text holds none), else empty.
std::string_view wide_encoding(std::string_view first_bytes);

}  // namespace hybridsim::yaml

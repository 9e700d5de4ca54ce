// The one CSV dialect of every file hybridsim writes (sweep results, study tables, run summaries):
// comma-separated, a field quoted only when it holds a comma, a quote or a line break, a quote
// inside written twice (RFC 4180). csv_split reads a line of it back.
//   csv_field("dp=4, mp=2") == "\"dp=4, mp=2\"";   csv_split("a,\"b,c\"") == {"a", "b,c"}
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hybridsim::analysis {

std::string csv_field(std::string_view text);
// The fields of one line (no line break inside it); a line without commas is one field.
std::vector<std::string> csv_split(std::string_view line);

}  // namespace hybridsim::analysis

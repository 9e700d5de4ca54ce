// How Kineto traces write values, decoded exactly: microsecond numbers as picoseconds (from the
// JSON token's own digits, so "1700000000123.456" loses nothing), "stream 7"-style ids, dtype names.
// Internal to the Kineto importer.
//   micros_to_ps("12.345", 12.345) == 12'345'000;   trailing_integer("stream 7") == 7
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hybridsim::workloads::kineto_detail {

using Wide = __int128;
inline constexpr Wide kPsPerUs = 1'000'000;

// A JSON number of microseconds (its token as written, and its value) as picoseconds: decimals
// beyond the sixth are cut; exponent forms ("1.7e+15") fall back to the double value.
Wide micros_to_ps(const std::string& token, double value);
// The number at the end of an id ("stream 7", "7"); nullopt when there is none.
std::optional<std::int64_t> trailing_integer(std::string_view text);
// How many ranks a "Process Group Ranks" list names ("[0, 1]" → 2); 0 when empty or not recorded.
int count_group_ranks(std::string_view ranks);
// "process group 0 [0, 1]", "process group 0", "[0, 1]", or "" when neither is recorded.
std::string describe_group(const std::string& name, const std::string& ranks);

}  // namespace hybridsim::workloads::kineto_detail

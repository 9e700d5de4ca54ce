// How Kineto traces write values, decoded exactly: microsecond numbers as picoseconds (from the
// JSON token's own digits, so "1700000000123.456" and "9.3e12" lose nothing), counts written as
// floats, "stream 7"-style ids, and times written back as the trace writes them.
// Internal to the Kineto importer.
//   micros_to_ps("12.345") == 12'345'000;   whole_number("1e3") == 1000;   trailing_integer("stream 7") == 7
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hybridsim::workloads::kineto_detail {

using Wide = __int128;
inline constexpr Wide kPsPerUs = 1'000'000;
// The largest magnitude micros_to_ps gives (10^30 ps, 3·10^10 years): beyond every check's limit.
inline constexpr Wide kMaxDecodedPs = static_cast<Wide>(1'000'000'000'000'000LL) * 1'000'000'000'000'000LL;

// A JSON number token of microseconds as picoseconds, exactly: decimals beyond the sixth are cut
// (towards zero); exponent forms ("9.3e12", "1.7E+15") are read as decimals too. nullopt when
// its magnitude is kMaxDecodedPs or more, or it is not a JSON number.
std::optional<Wide> micros_to_ps(std::string_view token);
// A JSON number token that is a whole number within int64 ("7", "7.0", "1e3"); nullopt otherwise.
std::optional<std::int64_t> whole_number(std::string_view token);
// The number at the end of an id ("stream 7", "7"); nullopt when there is none or it does not fit
// an int64.
std::optional<std::int64_t> trailing_integer(std::string_view text);
// How many ranks a "Process Group Ranks" list names ("[0, 1]" → 2); 0 when empty or not recorded.
int count_group_ranks(std::string_view ranks);
// "process group 0 [0, 1]", "process group 0", "[0, 1]", or "" when neither is recorded.
std::string describe_group(const std::string& name, const std::string& ranks);

// Picoseconds as microseconds the way Kineto writes them: "1700000000123.456", "-100", "0.5".
std::string format_micros(Wide ps);
// A long time in days, for messages about absurd times: "107.6 days".
std::string format_days(Wide ps);

}  // namespace hybridsim::workloads::kineto_detail

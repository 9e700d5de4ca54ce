// Exact decimal numbers for the unit parsers: "12.5", "1e3", "0.25" become mantissa × 10^exponent with
// an integer mantissa, so that "12.5 GiB/s" converts to bytes per second without floating point.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hybridsim::sim::detail {

struct Decimal {
  __int128 mantissa = 0;  // non-negative
  int exponent = 0;       // value = mantissa * 10^exponent
  bool truncated = false;  // non-zero digits beyond ~30 significant ones were dropped
};

// Splits "12.5 GB/s" into the number (12.5) and the rest ("GB/s", spaces trimmed). Returns nullopt
// when the text does not start with a non-negative decimal number.
struct NumberAndUnit {
  Decimal number;
  std::string_view unit;
};
std::optional<NumberAndUnit> split_number(std::string_view text);

// Why a number's unit was refused, for every unit parser alike: 'no unit in "5"; the rate units are
// B/s, ...' or 'unknown unit "PB/s" in "1 PB/s"; the rate units are ...' (`units` lists them). Not
// "bad ...": a scenario key's refusal keeps this reason after the value it names.
std::string unknown_unit_reason(std::string_view text, std::string_view unit, std::string_view kind,
                                std::string_view units);

// Why a number with a leading "+" was refused ('"+25 GB/s" has a sign, which a rate does not take:
// write "25 GB/s"'), for every parser of a quantity alike (sizes, rates, times, a schema's whole
// numbers and numbers); nullopt where the text does not start with "+" and a digit or point. The
// parsers read no sign, so they said only "a non-negative number", and the key's refusal only its
// bounds ("> 0"), which +25 GB/s meets.
std::optional<std::string> leading_plus_reason(std::string_view text, std::string_view kind);

// Rounds number × numerator / denominator to the nearest integer; nullopt on overflow of int64.
// Sets `exact` to whether no rounding happened (false when the text had digits beyond the mantissa).
std::optional<long long> scale(const Decimal& number, __int128 numerator, __int128 denominator,
                               bool* exact);

}  // namespace hybridsim::sim::detail

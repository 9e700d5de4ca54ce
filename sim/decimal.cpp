#include "sim/decimal.h"

#include <cctype>
#include <limits>

namespace hybridsim::sim::detail {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

constexpr __int128 kMantissaLimit = static_cast<__int128>(1) << 100;

}  // namespace

std::string unknown_unit_reason(std::string_view text, std::string_view unit, std::string_view kind,
                                std::string_view units) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  return (unit.empty() ? "no unit in " + quoted : "unknown unit \"" + std::string(unit) + "\" in " + quoted) +
         "; the " + std::string(kind) + " units are " + std::string(units);
}

std::optional<std::string> leading_plus_reason(std::string_view text, std::string_view kind) {
  text = trim(text);
  if (text.size() < 2 || text[0] != '+' ||
      !(std::isdigit(static_cast<unsigned char>(text[1])) || text[1] == '.'))
    return std::nullopt;
  return "\"" + std::string(text) + "\" has a sign, which a " + std::string(kind) +
         " does not take: write \"" + std::string(text.substr(1)) + "\"";
}

std::optional<NumberAndUnit> split_number(std::string_view text) {
  text = trim(text);
  std::size_t i = 0;
  Decimal d;
  bool any_digit = false;
  bool seen_point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      any_digit = true;
      if (d.mantissa < kMantissaLimit) {
        d.mantissa = d.mantissa * 10 + (c - '0');
        if (seen_point) --d.exponent;
      } else {
        if (c != '0') d.truncated = true;  // digits beyond the limit are dropped...
        if (!seen_point) ++d.exponent;     // ...but their place value is kept
      }
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!any_digit) return std::nullopt;
  // Optional exponent: e or E, an optional sign, digits. "5 EB" is not an exponent: need a digit.
  if (i + 1 < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    int sign = 1;
    if (text[j] == '+' || text[j] == '-') {
      sign = text[j] == '-' ? -1 : 1;
      ++j;
    }
    if (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      int e = 0;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
        if (e < 1000) e = e * 10 + (text[j] - '0');
        ++j;
      }
      d.exponent += sign * e;
      i = j;
    }
  }
  return NumberAndUnit{d, trim(text.substr(i))};
}

std::optional<long long> scale(const Decimal& number, __int128 numerator, __int128 denominator,
                               bool* exact) {
  // value = mantissa * 10^exponent * numerator / denominator, kept exact in 128 bits.
  __int128 num = number.mantissa;
  __int128 den = denominator;
  constexpr __int128 kLimit = static_cast<__int128>(1) << 120;
  auto mul = [&](__int128& x, __int128 k) {
    if (x != 0 && x > kLimit / k) return false;
    x *= k;
    return true;
  };
  if (!mul(num, numerator)) return std::nullopt;
  for (int e = number.exponent; e > 0; --e)
    if (!mul(num, 10)) return std::nullopt;
  for (int e = number.exponent; e < 0; ++e) {
    if (!mul(den, 10)) {
      // Vanishingly small: rounds to zero.
      if (exact) *exact = num == 0 && !number.truncated;
      return 0;
    }
  }
  const __int128 q = num / den;
  const __int128 r = num % den;
  if (exact) *exact = r == 0 && !number.truncated;
  const __int128 rounded = q + (2 * r >= den ? 1 : 0);
  if (rounded > std::numeric_limits<long long>::max()) return std::nullopt;
  return static_cast<long long>(rounded);
}

}  // namespace hybridsim::sim::detail

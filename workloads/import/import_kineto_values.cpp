// Decoding Kineto's values: exact microseconds, whole numbers, trailing ids, dtype sizes; and times
// written back for messages.
#include "workloads/import/import_kineto_values.h"

#include <cctype>
#include <cstdio>

#include "sim/text.h"
#include "workloads/import/import_kineto_trace.h"

namespace hybridsim::workloads::kineto_detail {

namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// A JSON number as sign × digits × 10^exponent, the digits without leading zeros ("" for zero).
struct Decimal {
  bool negative = false;
  std::string digits;
  long exponent = 0;
};

std::optional<Decimal> decompose(std::string_view s) {
  Decimal d;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) d.negative = s[i++] == '-';
  const std::size_t int_begin = i;
  for (; i < s.size() && is_digit(s[i]); ++i) d.digits += s[i];
  if (i == int_begin) return std::nullopt;
  if (i < s.size() && s[i] == '.') {
    const std::size_t frac_begin = ++i;
    for (; i < s.size() && is_digit(s[i]); ++i) d.digits += s[i];
    if (i == frac_begin) return std::nullopt;
    d.exponent -= static_cast<long>(i - frac_begin);
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) exp_negative = s[i++] == '-';
    const std::size_t exp_begin = i;
    long e = 0;
    for (; i < s.size() && is_digit(s[i]); ++i) e = std::min<long>(e * 10 + (s[i] - '0'), 1'000'000);
    if (i == exp_begin) return std::nullopt;
    d.exponent += exp_negative ? -e : e;
  }
  if (i != s.size()) return std::nullopt;
  const auto first = d.digits.find_first_not_of('0');
  d.digits.erase(0, first == std::string::npos ? d.digits.size() : first);
  return d;
}

// The decimal's value cut towards zero to a whole number, when its magnitude is below `limit`
// (at most 10^30); `exact` says whether nothing was cut.
std::optional<Wide> whole_value(const Decimal& d, Wide limit, bool* exact = nullptr) {
  if (exact) *exact = true;
  const long n = static_cast<long>(d.digits.size());
  if (n == 0) return Wide{0};
  if (n + d.exponent > 31) return std::nullopt;  // at least 10^31
  const long keep = n + std::min<long>(d.exponent, 0);
  Wide v = 0;
  for (long k = 0; k < keep; ++k) v = v * 10 + (d.digits[static_cast<std::size_t>(k)] - '0');
  for (long k = 0; k < d.exponent; ++k) v *= 10;
  if (exact && keep < n &&
      d.digits.find_first_not_of('0', static_cast<std::size_t>(std::max<long>(keep, 0))) != std::string::npos)
    *exact = false;
  if (v >= limit) return std::nullopt;
  return d.negative ? -v : v;
}

}  // namespace

std::optional<Wide> micros_to_ps(std::string_view token) {
  auto d = decompose(token);
  if (!d) return std::nullopt;
  d->exponent += 6;  // µs → ps
  return whole_value(*d, kMaxDecodedPs);
}

std::optional<std::int64_t> whole_number(std::string_view token) {
  const auto d = decompose(token);
  if (!d) return std::nullopt;
  bool exact = true;
  const auto v = whole_value(*d, static_cast<Wide>(INT64_MAX) + 1, &exact);
  if (!v || !exact || *v < INT64_MIN) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

std::optional<std::int64_t> trailing_integer(std::string_view text) {
  std::size_t begin = text.size();
  while (begin > 0 && is_digit(text[begin - 1])) --begin;
  if (begin == text.size()) return std::nullopt;
  Wide v = 0;
  for (std::size_t i = begin; i < text.size(); ++i) {
    v = v * 10 + (text[i] - '0');
    if (v > INT64_MAX) return std::nullopt;
  }
  return static_cast<std::int64_t>(v);
}

int count_group_ranks(std::string_view ranks) {
  int count = 0;
  bool in_number = false;
  for (const char c : ranks) {
    const bool digit = is_digit(c);
    if (digit && !in_number) ++count;
    in_number = digit;
  }
  return count;
}

std::string describe_group(const std::string& name, const std::string& ranks) {
  if (name.empty()) return ranks;
  return "process group " + name + (ranks.empty() ? "" : " " + ranks);
}

std::string format_micros(Wide ps) {
  const bool negative = ps < 0;
  const Wide magnitude = negative ? -ps : ps;
  Wide whole = magnitude / kPsPerUs;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(whole % 10)));
    whole /= 10;
  } while (whole > 0);
  std::string out = (negative ? "-" : "") + digits;
  if (const auto frac = static_cast<long>(magnitude % kPsPerUs); frac != 0) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%06ld", frac);
    std::string f = buf;
    f.erase(f.find_last_not_of('0') + 1);
    out += "." + f;
  }
  return out;
}

std::string format_days(Wide ps) {
  const double days = static_cast<double>(ps) / 86'400e12;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f days", days);
  return buf;
}

}  // namespace hybridsim::workloads::kineto_detail

namespace hybridsim::workloads {

std::optional<int> kineto_dtype_bytes(std::string_view dtype) {
  std::string d = sim::lowercase(dtype);
  if (d.starts_with("c10::")) d = d.substr(5);
  if (d.starts_with("torch.")) d = d.substr(6);
  if (d == "float" || d == "float32") return 4;
  if (d == "half" || d == "float16" || d == "bfloat16") return 2;
  if (d == "double" || d == "float64") return 8;
  if (d == "int" || d == "int32") return 4;
  if (d == "long" || d == "long int" || d == "int64") return 8;
  if (d == "short" || d == "int16") return 2;
  if (d == "byte" || d == "char" || d == "bool" || d == "uint8" || d == "int8" ||
      d == "unsigned char" || d == "signed char")
    return 1;
  return std::nullopt;
}

}  // namespace hybridsim::workloads

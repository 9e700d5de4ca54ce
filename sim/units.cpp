#include "sim/units.h"

#include <cstdio>
#include <stdexcept>

#include "sim/decimal.h"
#include "sim/error.h"

namespace hybridsim::sim {

Time transfer_time(Bytes bytes, Bandwidth bw) {
  if (bw.bytes_per_second() <= 0) throw InternalError("transfer over a link with zero bandwidth");
  const std::int64_t n = bytes.count();
  if (n >= 0 && n < 9'000'000) {  // fast path: n * 10^12 fits in 64 bits
    // Quotient plus one if there is a remainder (adding den - 1 first could overflow for huge den).
    const std::int64_t num = n * 1'000'000'000'000;
    const std::int64_t den = bw.bytes_per_second();
    return Time::ps(num / den + (num % den != 0 ? 1 : 0));
  }
  const __int128 num = static_cast<__int128>(bytes.count()) * 1'000'000'000'000;
  const __int128 den = bw.bytes_per_second();
  const __int128 ps = (num + den - 1) / den;
  if (ps > static_cast<__int128>(Time::max().ps())) throw std::overflow_error("transfer time overflows");
  return Time::ps(static_cast<std::int64_t>(ps));
}

namespace {

struct Prefix {
  std::string_view name;
  std::int64_t factor;
};
constexpr Prefix kPrefixes[] = {
    {"", 1},
    {"k", 1'000}, {"K", 1'000}, {"M", 1'000'000}, {"G", 1'000'000'000}, {"T", 1'000'000'000'000},
    {"Ki", 1LL << 10}, {"Mi", 1LL << 20}, {"Gi", 1LL << 30}, {"Ti", 1LL << 40},
};

// Parses a size unit ("KiB", "Gb", "MB"): returns bytes per unit as numerator/denominator
// (bits divide by 8).
bool size_unit(std::string_view unit, __int128* num, __int128* den) {
  if (unit.empty()) return false;
  const char last = unit.back();
  if (last != 'B' && last != 'b') return false;
  const std::string_view prefix = unit.substr(0, unit.size() - 1);
  for (const auto& p : kPrefixes) {
    if (prefix == p.name) {
      *num = p.factor;
      *den = last == 'B' ? 1 : 8;
      return true;
    }
  }
  return false;
}

const char* kSizeUnits =
    "B, kB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024), or the same with b for bits";
const char* kSizeForms =
    "expected a non-negative number and a unit: B, kB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, "
    "TiB (powers of 1024), or the same with b for bits — e.g. \"512 KiB\"";
const char* kRateUnits =
    "B/s, kB/s, MB/s, GB/s, TB/s, KiB/s ... TiB/s, the same with b for bits (Gb/s), or Gbps/GBps";
const std::string kBandwidthForms = std::string("expected a non-negative number and a rate: ") + kRateUnits +
                                    " — e.g. \"25 GB/s\", \"100 Gb/s\"";

// Exact decimal text of v / 10^digits with trailing zeros removed.
std::string decimal_text(std::int64_t v, std::int64_t unit) {
  std::string out = std::to_string(v / unit);
  const std::int64_t frac = v % unit;
  if (frac != 0) {
    std::string digits = std::to_string(unit + frac).substr(1);
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out;
}

std::string three_digits(double v, const char* unit) {
  char buf[64];
  if (v >= 100) std::snprintf(buf, sizeof buf, "%.0f %s", v, unit);
  else if (v >= 10) std::snprintf(buf, sizeof buf, "%.1f %s", v, unit);
  else std::snprintf(buf, sizeof buf, "%.2f %s", v, unit);
  return buf;
}

}  // namespace

Bytes parse_bytes(std::string_view text) {
  const auto parsed = detail::split_number(text);
  __int128 num = 0, den = 1;
  if (const auto plus = detail::leading_plus_reason(text, "size")) throw InputError(*plus);
  if (!parsed) throw InputError("bad size \"" + std::string(text) + "\": " + kSizeForms);
  if (!size_unit(parsed->unit, &num, &den))
    throw InputError(detail::unknown_unit_reason(text, parsed->unit, "size", kSizeUnits));
  bool exact = false;
  const auto v = detail::scale(parsed->number, num, den, &exact);
  if (!v) throw InputError("size \"" + std::string(text) + "\" is too large");
  if (!exact)
    throw InputError("size \"" + std::string(text) + "\" is not a whole number of bytes");
  return Bytes::of(*v);
}

// Like sizes, a rate is a whole number of its unit (bytes per second): "0.5 B/s" is refused.
Bandwidth parse_bandwidth(std::string_view text) {
  const auto parsed = detail::split_number(text);
  if (const auto plus = detail::leading_plus_reason(text, "bandwidth")) throw InputError(*plus);
  if (!parsed) throw InputError("bad bandwidth \"" + std::string(text) + "\": " + kBandwidthForms);
  std::string_view unit = parsed->unit;
  std::string size_part;
  if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") {
    size_part = std::string(unit.substr(0, unit.size() - 2));
  } else if (unit.size() > 2 && unit.substr(unit.size() - 2) == "ps") {
    size_part = std::string(unit.substr(0, unit.size() - 2));  // "Gbps" -> "Gb"
  }
  while (!size_part.empty() && size_part.back() == ' ') size_part.pop_back();
  __int128 num = 0, den = 1;
  // Why, not only "bad": a scenario key's refusal repeats this reason after the text (1 PB/s is past
  // TB/s, the largest unit; "5" has none).
  if (size_part.empty() || !size_unit(size_part, &num, &den))
    throw InputError(detail::unknown_unit_reason(text, parsed->unit, "rate", kRateUnits));
  bool exact = false;
  const auto v = detail::scale(parsed->number, num, den, &exact);
  if (!v) throw InputError("bandwidth \"" + std::string(text) + "\" is too large");
  // Rates are whole bytes per second: "0.5 B/s" would be read as 1 B/s without a word.
  if (!exact)
    throw InputError("bandwidth \"" + std::string(text) + "\" is not a whole number of bytes per second");
  return Bandwidth::bytes_per_second(*v);
}

std::string format_bytes(Bytes b) {
  const std::int64_t v = b.count();
  if (v == 0) return "0 B";
  // Prefer the unit that divides exactly and gives the shortest text (512 KiB over 524.288 kB).
  std::string best = std::to_string(v) + " B";
  const struct { const char* name; std::int64_t f; } units[] = {
      {"TiB", 1LL << 40}, {"GiB", 1LL << 30}, {"MiB", 1LL << 20}, {"KiB", 1LL << 10},
      {"TB", 1'000'000'000'000}, {"GB", 1'000'000'000}, {"MB", 1'000'000}, {"kB", 1'000}};
  for (const auto& u : units) {
    if (v % u.f == 0) {
      std::string s = std::to_string(v / u.f) + " " + u.name;
      if (s.size() < best.size()) best = s;
    } else if (u.f % 1000 == 0 && v >= u.f) {
      std::string s = decimal_text(v, u.f) + " " + u.name;
      if (s.size() < best.size()) best = s;
    }
  }
  return best;
}

std::string format_bandwidth(Bandwidth bw) {
  const std::int64_t v = bw.bytes_per_second();
  const struct { const char* name; std::int64_t f; } units[] = {
      {"TB/s", 1'000'000'000'000}, {"GB/s", 1'000'000'000}, {"MB/s", 1'000'000}, {"kB/s", 1'000}};
  for (const auto& u : units)
    if (v >= u.f) return decimal_text(v, u.f) + " " + u.name;
  return std::to_string(v) + " B/s";
}

std::string human_bytes(Bytes b) {
  const double v = static_cast<double>(b.count());
  if (v >= 1e12) return three_digits(v / 1e12, "TB");
  if (v >= 1e9) return three_digits(v / 1e9, "GB");
  if (v >= 1e6) return three_digits(v / 1e6, "MB");
  if (v >= 1e3) return three_digits(v / 1e3, "kB");
  return std::to_string(b.count()) + " B";
}

std::string human_time(Time t) {
  const double ps = static_cast<double>(t.ps());
  if (ps >= 1e12) return three_digits(ps / 1e12, "s");
  if (ps >= 1e9) return three_digits(ps / 1e9, "ms");
  if (ps >= 1e6) return three_digits(ps / 1e6, "us");
  if (ps >= 1e3) return three_digits(ps / 1e3, "ns");
  return std::to_string(t.ps()) + " ps";
}

}  // namespace hybridsim::sim

#include "sim/time.h"

#include <cmath>
#include <stdexcept>

#include "sim/decimal.h"
#include "sim/error.h"

namespace hybridsim::sim {

void Time::throw_overflow() { throw std::overflow_error("simulated time overflows 64-bit picoseconds"); }
void Time::throw_division_by_zero() { throw std::domain_error("a simulated time divided by zero"); }

Time Time::from_seconds(double seconds) {
  const double ps = std::round(seconds * 1e12);
  if (!(ps >= -9.2e18 && ps <= 9.2e18)) throw_overflow();
  return Time::ps(static_cast<std::int64_t>(ps));
}

namespace {

struct TimeUnit {
  std::string_view name;
  std::int64_t ps;
};
constexpr TimeUnit kTimeUnits[] = {
    {"s", 1'000'000'000'000}, {"ms", 1'000'000'000}, {"us", 1'000'000}, {"ns", 1'000}, {"ps", 1}};

constexpr std::string_view kTimeUnitNames = "ps, ns, us (or µs), ms, s";

std::string accepted() {
  return "expected a non-negative number and a unit: " + std::string(kTimeUnitNames) + " — e.g. \"2 us\"";
}

}  // namespace

Time parse_time(std::string_view text) {
  const auto parsed = detail::split_number(text);
  if (const auto plus = detail::leading_plus_reason(text, "time")) throw InputError(*plus);
  if (!parsed) throw InputError("bad time \"" + std::string(text) + "\": " + accepted());
  std::string_view unit = parsed->unit;
  if (unit == "µs" || unit == "μs") unit = "us";
  for (const auto& u : kTimeUnits) {
    if (unit == u.name) {
      const auto v = detail::scale(parsed->number, u.ps, 1, nullptr);
      if (!v) throw InputError("time \"" + std::string(text) + "\" is too large (over 106 days)");
      return Time::ps(*v);
    }
  }
  throw InputError(detail::unknown_unit_reason(text, parsed->unit, "time", kTimeUnitNames));
}

std::string format_time(Time t) {
  std::int64_t v = t.ps();
  std::string sign;
  if (v < 0) {
    sign = "-";
    v = -v;  // |min| cannot occur: callers format durations well inside range
  }
  for (const auto& u : kTimeUnits) {
    if (v >= u.ps || u.ps == 1) {
      std::string whole = std::to_string(v / u.ps);
      std::int64_t frac = v % u.ps;
      std::string out = sign + whole;
      if (frac != 0) {
        std::string digits = std::to_string(u.ps + frac).substr(1);  // zero-padded fraction
        while (!digits.empty() && digits.back() == '0') digits.pop_back();
        out += "." + digits;
      }
      if (v == 0) return "0 s";
      return out + " " + std::string(u.name);
    }
  }
  return "0 s";
}

}  // namespace hybridsim::sim

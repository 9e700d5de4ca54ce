// sim::Time — a point in simulated time or a duration, as a signed 64-bit count of picoseconds
// (enough for 106 days). Integer only: no floating-point clocks anywhere in the core.
//   Time t = Time::us(2) + Time::ns(500);   t.ps() == 2'500'000;   format_time(t) == "2.5 us"
#pragma once
#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace hybridsim::sim {

class Time {
 public:
  constexpr Time() = default;

  static constexpr Time ps(std::int64_t v) { return Time(v); }
  static constexpr Time ns(std::int64_t v) { return Time(checked_mul(v, 1'000)); }
  static constexpr Time us(std::int64_t v) { return Time(checked_mul(v, 1'000'000)); }
  static constexpr Time ms(std::int64_t v) { return Time(checked_mul(v, 1'000'000'000)); }
  static constexpr Time s(std::int64_t v) { return Time(checked_mul(v, 1'000'000'000'000)); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }
  // Rounds to the nearest picosecond; for converting model outputs (e.g. FLOPs / rate) into time.
  static Time from_seconds(double seconds);

  constexpr std::int64_t ps() const { return ps_; }
  // Explicit, lossy conversions for reports only.
  constexpr double to_seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double to_us() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double to_ms() const { return static_cast<double>(ps_) * 1e-9; }

  // Arithmetic throws std::overflow_error rather than wrapping.
  constexpr Time operator+(Time o) const { return Time(checked_add(ps_, o.ps_)); }
  constexpr Time operator-(Time o) const { return Time(checked_sub(ps_, o.ps_)); }
  constexpr Time operator*(std::int64_t k) const { return Time(checked_mul(ps_, k)); }
  constexpr Time operator/(std::int64_t k) const {
    if (k == 0) throw_division_by_zero();
    if (k == -1) return Time(checked_sub(0, ps_));  // INT64_MIN / -1 overflows
    return Time(ps_ / k);
  }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  static constexpr std::int64_t checked_add(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) throw_overflow();
    return r;
  }
  static constexpr std::int64_t checked_sub(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) throw_overflow();
    return r;
  }
  static constexpr std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw_overflow();
    return r;
  }
  [[noreturn]] static void throw_overflow();
  [[noreturn]] static void throw_division_by_zero();

  std::int64_t ps_ = 0;
};

constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Time min(Time a, Time b) { return a < b ? a : b; }

// Parses "2 us", "500ns", "1.5 ms", "3 s", "250 ps" (µs is accepted for us). Throws InputError that
// quotes the text and lists the accepted forms.
Time parse_time(std::string_view text);
// Exact and round-trippable: parse_time(format_time(t)) == t. "2.5 us", "0 s", "1 ps".
std::string format_time(Time t);

}  // namespace hybridsim::sim

// Tests of sim::Time: named constructors, conversions, checked arithmetic, parse_time and format_time.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/error.h"
#include "sim/time.h"

using hybridsim::InputError;
using hybridsim::sim::format_time;
using hybridsim::sim::parse_time;
using hybridsim::sim::Time;

namespace {

// The message of the InputError that parse_time throws for `text` ("" if it does not throw).
std::string parse_error(const std::string& text) {
  try {
    parse_time(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("Time named constructors count picoseconds") {
  // One unit step is a factor of 1000: 1 ns = 10^3 ps, 1 us = 10^6 ps, 1 ms = 10^9 ps, 1 s = 10^12 ps.
  CHECK(Time::ps(7).ps() == 7);
  CHECK(Time::ns(1).ps() == 1'000);
  CHECK(Time::us(2).ps() == 2'000'000);
  CHECK(Time::ms(3).ps() == 3'000'000'000);
  CHECK(Time::s(4).ps() == 4'000'000'000'000);
  CHECK(Time::zero().ps() == 0);
  CHECK(Time::max().ps() == INT64_MAX);
  CHECK(Time().ps() == 0);
  // The header's example: 2 us + 500 ns = 2,500,000 ps.
  CHECK((Time::us(2) + Time::ns(500)).ps() == 2'500'000);
  CHECK(Time::ns(-3).ps() == -3'000);
}

TEST_CASE("Time arithmetic and comparison") {
  CHECK(Time::us(1) - Time::ns(1) == Time::ns(999));
  CHECK(Time::ns(3) * 4 == Time::ns(12));
  CHECK(Time::ns(12) / 4 == Time::ns(3));
  CHECK(Time::ns(1) < Time::ns(2));
  CHECK(Time::us(1) == Time::ns(1000));
  Time t = Time::ns(5);
  t += Time::ns(2);
  CHECK(t == Time::ns(7));
  t -= Time::ns(7);
  CHECK(t == Time::zero());
  CHECK(max(Time::ns(1), Time::ns(2)) == Time::ns(2));
  CHECK(min(Time::ns(1), Time::ns(2)) == Time::ns(1));
}

TEST_CASE("Time conversions to floating point are for reports") {
  // 1.5 ms = 1.5e9 ps: 1.5e-3 s, 1500 us, 1.5 ms.
  const Time t = Time::us(1500);
  // scale(0): relative tolerance; with the default scale of 1 it would allow ±1.2e-5 s.
  CHECK(t.to_seconds() == doctest::Approx(1.5e-3).scale(0));
  CHECK(t.to_us() == doctest::Approx(1500.0));
  CHECK(t.to_ms() == doctest::Approx(1.5));
  // from_seconds rounds to the nearest picosecond: 2.5e-6 s = 2,500,000 ps; 1.4e-12 s -> 1 ps.
  CHECK(Time::from_seconds(2.5e-6) == Time::ns(2500));
  CHECK(Time::from_seconds(1.4e-12) == Time::ps(1));
  CHECK(Time::from_seconds(1.6e-12) == Time::ps(2));
  CHECK(Time::from_seconds(0.0) == Time::zero());
}

TEST_CASE("Time overflow throws instead of wrapping") {
  // 2^63 ps is about 106.75 days: 10^7 s = 10^19 ps does not fit, 9 * 10^6 s does.
  CHECK_THROWS_AS(Time::s(10'000'000), std::overflow_error);
  CHECK(Time::s(9'000'000).ps() == 9'000'000'000'000'000'000);
  CHECK_THROWS_AS(Time::max() + Time::ps(1), std::overflow_error);
  CHECK_THROWS_AS(Time::zero() - Time::max() - Time::ps(2), std::overflow_error);
  CHECK_THROWS_AS(Time::max() * 2, std::overflow_error);
  CHECK_THROWS_AS(Time::ms(INT64_MAX / 1'000'000), std::overflow_error);
  CHECK_THROWS_AS(Time::from_seconds(1e8), std::overflow_error);  // 10^20 ps
  CHECK_THROWS_AS(Time::from_seconds(-1e8), std::overflow_error);
  Time t = Time::max();
  CHECK_THROWS_AS(t += Time::ps(1), std::overflow_error);
  CHECK(t == Time::max());  // unchanged by the failed addition
}

TEST_CASE("Time subtraction and division at the edges of the range throw, not wrap") {
  const Time lowest = Time::ps(INT64_MIN);
  // x - INT64_MIN used to negate INT64_MIN first (undefined behaviour); it is x + 2^63.
  CHECK_THROWS_AS(Time::zero() - lowest, std::overflow_error);
  CHECK((Time::ps(-1) - lowest).ps() == INT64_MAX);
  CHECK_THROWS_AS(lowest / -1, std::overflow_error);
  CHECK((Time::max() / -1).ps() == -INT64_MAX);
  CHECK_THROWS_AS(Time::us(1) / 0, std::domain_error);
  CHECK(Time::us(1) / 4 == Time::ps(250'000));
}

TEST_CASE("parse_time accepts every documented form") {
  CHECK(parse_time("2 us") == Time::us(2));
  CHECK(parse_time("500ns") == Time::ns(500));
  CHECK(parse_time("1.5 ms") == Time::us(1500));
  CHECK(parse_time("3 s") == Time::s(3));
  CHECK(parse_time("250 ps") == Time::ps(250));
  CHECK(parse_time("2 \xC2\xB5s") == Time::us(2));  // U+00B5 MICRO SIGN
  CHECK(parse_time("2 \xCE\xBCs") == Time::us(2));  // U+03BC GREEK SMALL LETTER MU
  CHECK(parse_time("0 s") == Time::zero());
  CHECK(parse_time("  7 ns  ") == Time::ns(7));  // surrounding spaces are trimmed
  CHECK(parse_time("0.5 us") == Time::ns(500));
  CHECK(parse_time("1.000000000001 s") == Time::s(1) + Time::ps(1));
  // Exponents: 1e3 ns = 1 us; 2.5e-3 s = 2.5 ms; 1E2 ps = 100 ps; 1e+2 ns = 100 ns.
  CHECK(parse_time("1e3 ns") == Time::us(1));
  CHECK(parse_time("2.5e-3 s") == Time::us(2500));
  CHECK(parse_time("1E2 ps") == Time::ps(100));
  CHECK(parse_time("1e+2 ns") == Time::ns(100));
  // The largest time: 9223372.036854775807 s is exactly Time::max().
  CHECK(parse_time("9223372.036854775807 s") == Time::max());
}

TEST_CASE("parse_time rejects bad text, quoting it and listing the accepted forms") {
  for (const char* bad : {"", "abc", "5", "5 parsecs", "-1 us", "us", "1.2.3 us", "5 u s", "5 sec"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_time(bad), InputError);
    const std::string message = parse_error(bad);
    CHECK(message.find("\"" + std::string(bad) + "\"") != std::string::npos);
    CHECK(message.find("ps, ns, us") != std::string::npos);
    CHECK(message.find("ms, s") != std::string::npos);
  }
  // Too large for 64-bit picoseconds: 10^7 s.
  CHECK_THROWS_AS(parse_time("1e7 s"), InputError);
  CHECK(parse_error("1e7 s").find("\"1e7 s\"") != std::string::npos);
}

TEST_CASE("format_time gives the exact shortest decimal in the largest fitting unit") {
  CHECK(format_time(Time::zero()) == "0 s");
  CHECK(format_time(Time::ps(1)) == "1 ps");
  CHECK(format_time(Time::ps(999)) == "999 ps");
  CHECK(format_time(Time::ns(1)) == "1 ns");
  CHECK(format_time(Time::ps(1500)) == "1.5 ns");
  CHECK(format_time(Time::us(2) + Time::ns(500)) == "2.5 us");
  CHECK(format_time(Time::ms(1)) == "1 ms");
  CHECK(format_time(Time::ms(1) + Time::ps(1)) == "1.000000001 ms");
  CHECK(format_time(Time::s(3)) == "3 s");
  CHECK(format_time(Time::s(120)) == "120 s");
  CHECK(format_time(Time::ps(-1500)) == "-1.5 ns");
  CHECK(format_time(Time::max()) == "9223372.036854775807 s");
}

TEST_CASE("format_time round-trips through parse_time") {
  std::vector<std::int64_t> values = {0, 1, 9, 10, 999, 1'000, 1'001, 999'999, 1'000'000,
                                      1'000'000'000'000, INT64_MAX - 1, INT64_MAX};
  // Random values of every magnitude: a random 63-bit number shifted right by 0..62 bits.
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 100'000; ++i) {
    const std::uint64_t r = rng() >> 1;
    values.push_back(static_cast<std::int64_t>(r >> (rng() % 63)));
  }
  for (const std::int64_t v : values) {
    const Time t = Time::ps(v);
    const std::string text = format_time(t);
    if (parse_time(text) != t) {
      CAPTURE(v);
      CAPTURE(text);
      FAIL("format_time does not round-trip");
    }
  }
  CHECK(values.size() == 100'012);
}

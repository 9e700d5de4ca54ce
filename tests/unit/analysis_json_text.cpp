// JSON text helpers: escaping (parsed back with nlohmann-json), number text and trace timestamps.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "analysis/output/json_text.h"

using namespace hybridsim;
using analysis::append_json_string;

namespace {
std::string json_quoted(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}
std::string us(std::int64_t ps) {
  std::string out;
  analysis::append_trace_us(out, sim::Time::ps(ps));
  return out;
}
}  // namespace

TEST_CASE("analysis: JSON strings escape quotes, backslashes and control characters") {
  CHECK(json_quoted("plain") == "\"plain\"");
  CHECK(json_quoted("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(json_quoted("l1\nl2\t\r\b\f") == "\"l1\\nl2\\t\\r\\b\\f\"");
  CHECK(json_quoted(std::string_view("\x01\x1f\0", 3)) == "\"\\u0001\\u001f\\u0000\"");
  CHECK(json_quoted("\x7f/") == "\"\x7f/\"");  // DEL and '/' need no escape
  // Valid UTF-8 (2, 3 and 4 bytes) passes through byte for byte.
  const std::string utf8 = "µs GPU0→GPU1 😀";
  CHECK(json_quoted(utf8) == "\"" + utf8 + "\"");
  // Invalid bytes (a lone continuation, a truncated sequence, an overlong '/', a surrogate) become
  // U+FFFD, one per byte, so the text stays valid JSON.
  CHECK(json_quoted("a\x80z") == "\"a\\ufffdz\"");
  CHECK(json_quoted("\xe2\x86") == "\"\\ufffd\\ufffd\"");
  CHECK(json_quoted("\xc0\xaf") == "\"\\ufffd\\ufffd\"");
  CHECK(json_quoted("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");
  // Round trip through a real JSON parser.
  const std::string nasty = std::string("q\"b\\n\n\x02 ") + utf8;
  CHECK(nlohmann::json::parse(json_quoted(nasty)).get<std::string>() == nasty);
  CHECK(nlohmann::json::parse(json_quoted("x\xffy")).get<std::string>() == "x\xEF\xBF\xBDy");
}

TEST_CASE("analysis: JSON numbers are exact and locale-free") {
  std::string s;
  analysis::append_json_int(s, std::numeric_limits<std::int64_t>::min());
  CHECK(s == "-9223372036854775808");
  s.clear();
  analysis::append_json_uint(s, std::numeric_limits<std::uint64_t>::max());
  CHECK(s == "18446744073709551615");
  s.clear();
  analysis::append_json_double(s, 0.1);  // shortest text that reads back as the same double
  CHECK(s == "0.1");
  s.clear();
  analysis::append_json_double(s, 12.5);
  CHECK(s == "12.5");
  s.clear();
  analysis::append_json_double(s, std::nan(""));
  CHECK(s == "null");
}

TEST_CASE("analysis: trace timestamps are microseconds with 3 decimals, nearest ns") {
  // 1,234,567 ps = 1,234.567 ns → 1,235 ns → "1.235" µs.
  CHECK(us(1'234'567) == "1.235");
  CHECK(us(1'234'499) == "1.234");  // 1,234.499 ns rounds down
  CHECK(us(1'234'500) == "1.235");  // ties away from zero
  CHECK(us(0) == "0.000");
  CHECK(us(499) == "0.000");
  CHECK(us(500) == "0.001");
  CHECK(us(7'000) == "0.007");
  CHECK(us(2'000'000) == "2.000");
  CHECK(us(-1'500) == "-0.002");  // -1.5 ns → -2 ns
  CHECK(us(-499) == "0.000");     // rounds to 0 ns: no "-0.000"
  // 12,345,678,901,234 ps ≈ 12.3 s → 12,345,678,901 ns → "12345678.901".
  CHECK(us(12'345'678'901'234) == "12345678.901");
  CHECK(analysis::round_to_ns(sim::Time::ps(-1'234'567)) == -1'235);
  std::string s;
  analysis::append_trace_us(s, std::numeric_limits<std::int64_t>::min());
  CHECK(s == "-9223372036854775.808");
}

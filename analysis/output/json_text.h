// Deterministic JSON text pieces for the output writers: string escaping (valid UTF-8 passes through,
// invalid bytes become U+FFFD), numbers without locale or precision settings, and trace timestamps.
//   std::string s;  append_json_string(s, "a\"b");          // s == "\"a\\\"b\""
//   append_trace_us(s, sim::Time::ps(1'234'567));            // appends "1.235" (µs, nearest ns)
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/time.h"

namespace hybridsim::analysis {

// Appends `text` as a quoted JSON string: `"` and `\` escaped, control characters as \n, \t, \r, \b,
// \f or \u00XX; bytes of valid UTF-8 sequences copied unchanged; each byte of an invalid sequence
// written as \ufffd, so the output is always valid JSON.
void append_json_string(std::string& out, std::string_view text);
void append_json_int(std::string& out, std::int64_t v);
void append_json_uint(std::string& out, std::uint64_t v);
// Shortest text that reads back as the same double (std::to_chars); NaN and infinities become null.
void append_json_double(std::string& out, double v);

// Picoseconds to nanoseconds, rounding to the nearest nanosecond, ties away from zero
// (1,234,500 ps → 1,235 ns; -1,500 ps → -2 ns).
std::int64_t round_to_ns(sim::Time t);
// The Trace Event Format's microseconds with exactly three decimals, from a count of nanoseconds:
// 1'235 → "1.235", 7 → "0.007", -1'500 → "-1.500". Integer arithmetic only, so the text is exact.
void append_trace_us(std::string& out, std::int64_t ns);
inline void append_trace_us(std::string& out, sim::Time t) { append_trace_us(out, round_to_ns(t)); }

}  // namespace hybridsim::analysis
